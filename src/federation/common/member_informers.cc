// Informers in every Ready member (member_informers.h).
#include "federation/common/member_informers.h"

#include "base/mutex.h"
#include "runtime/parallel.h"

namespace flotilla::federation {

MemberInformers::MemberInformers(ClusterClients& clusters, Clock& clock,
                                 runtime::InformerOptions options)
    : clusters_(clusters), clock_(clock), options_(options) {}

MemberInformers::~MemberInformers() { Stop(); }

MemberInformers::Kind& MemberInformers::KindOf(const client::ResourceRef& resource) {
  for (Kind& k : kinds_) {
    if (k.resource.group == resource.group && k.resource.resource == resource.resource) return k;
  }
  return kinds_.emplace_back(Kind{.resource = resource});
}

void MemberInformers::AddHandler(const client::ResourceRef& resource,
                                 MemberHandlerFactory factory) {
  KindOf(resource).factories.push_back(std::move(factory));
}

void MemberInformers::SetTransform(const client::ResourceRef& resource,
                                   runtime::Transform transform) {
  KindOf(resource).transform = std::move(transform);
}

void MemberInformers::Start() {
  subscription_ = clusters_.Subscribe(
      {[this](const std::string& name, std::shared_ptr<client::Client> c) { OnReady(name, c); },
       [this](const std::string& name) { Drop(name); },
       [this](const std::string& name) { Drop(name); }});
}

void MemberInformers::Stop() {
  if (subscription_ >= 0) clusters_.Unsubscribe(subscription_);
  subscription_ = -1;
  std::map<std::string, Member> members;
  {
    MutexLock lock(mu_);
    members.swap(members_);
  }
  Member all;
  for (auto& [name, m] : members) {
    for (auto& [resource, informer] : m.informers) all.informers[name + "/" + resource] = informer;
  }
  StopAll(all);
}

void MemberInformers::OnReady(const std::string& name, std::shared_ptr<client::Client> client) {
  Drop(name);  // a new client (the Secret changed): start over with it
  Member m;
  m.client = client;
  for (const Kind& kind : kinds_) {
    if (kind.factories.empty()) continue;  // a transform, and no reader
    runtime::InformerOptions options = options_;
    options.transform = kind.transform;
    auto informer = std::make_shared<runtime::Informer>(*client, kind.resource, clock_, options);
    for (const MemberHandlerFactory& make : kind.factories) informer->AddEventHandler(make(name));
    m.informers[kind.resource.resource] = informer;
  }
  // Registered before they start: a handler told that a cache synced finds
  // the informer through Get().
  std::vector<std::shared_ptr<runtime::Informer>> started;
  for (auto& [resource, informer] : m.informers) started.push_back(informer);
  {
    MutexLock lock(mu_);
    members_[name] = std::move(m);
  }
  for (auto& informer : started) informer->Start();
}

void MemberInformers::Drop(const std::string& name) {
  Member m;
  {
    MutexLock lock(mu_);
    auto it = members_.find(name);
    if (it == members_.end()) return;
    m = std::move(it->second);
    members_.erase(it);
  }
  StopAll(m);
}

void MemberInformers::StopAll(Member& m) {
  // An informer stops once its list in progress, if any, returns, which
  // for an unreachable member is its timeout: stop them together.
  std::vector<runtime::Informer*> informers;
  for (auto& [resource, informer] : m.informers) informers.push_back(informer.get());
  runtime::ParallelFor(informers.size(), static_cast<int>(informers.size()),
                       [&](size_t i) { informers[i]->Stop(); });
}

std::shared_ptr<runtime::Informer> MemberInformers::Get(const std::string& cluster,
                                                        const std::string& resource) const {
  MutexLock lock(mu_);
  auto it = members_.find(cluster);
  if (it == members_.end()) return nullptr;
  auto inf = it->second.informers.find(resource);
  return inf == it->second.informers.end() ? nullptr : inf->second;
}

std::shared_ptr<client::Client> MemberInformers::ClientOf(const std::string& cluster) const {
  MutexLock lock(mu_);
  auto it = members_.find(cluster);
  return it == members_.end() ? nullptr : it->second.client;
}

std::map<std::string, std::shared_ptr<runtime::Informer>> MemberInformers::Of(
    const std::string& cluster) const {
  MutexLock lock(mu_);
  auto it = members_.find(cluster);
  if (it == members_.end()) return {};
  return it->second.informers;
}

std::vector<std::string> MemberInformers::Clusters() const {
  MutexLock lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, m] : members_) out.push_back(name);
  return out;
}

std::vector<MemberInformers::ClusterSync> MemberInformers::Synced(
    std::span<const client::ResourceRef> resources) const {
  MutexLock lock(mu_);
  std::vector<ClusterSync> out;
  out.reserve(members_.size());
  for (const auto& [name, m] : members_) {
    ClusterSync s{.cluster = name, .synced = true};
    for (const client::ResourceRef& r : resources) {
      auto it = m.informers.find(r.resource);
      bool served = it != m.informers.end() && it->second->Served();
      if (&r == &resources.front()) s.served = served;
      s.synced = s.synced && it != m.informers.end() && (it->second->HasSynced() || !served);
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> MemberInformers::NotServed(const std::string& cluster) const {
  MutexLock lock(mu_);
  std::vector<std::string> out;
  auto it = members_.find(cluster);
  if (it == members_.end()) return out;
  for (const auto& [resource, informer] : it->second.informers) {
    if (informer->Served()) continue;
    const client::ResourceRef& r = informer->resource();
    out.push_back(r.resource + "." + r.version + (r.group.empty() ? "" : "." + r.group));
  }
  return out;
}

bool MemberInformers::Serves(const std::string& cluster, const std::string& resource) const {
  std::shared_ptr<runtime::Informer> informer = Get(cluster, resource);
  return informer == nullptr || informer->Served();
}

}  // namespace flotilla::federation
