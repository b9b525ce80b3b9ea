// Informers in every Ready member (member_informers.h).
#include "federation/common/member_informers.h"

#include <algorithm>

#include "base/mutex.h"
#include "runtime/parallel.h"

namespace flotilla::federation {

MemberInformers::MemberInformers(ClusterClients& clusters, Clock& clock,
                                 runtime::InformerOptions options)
    : clusters_(clusters), clock_(clock), options_(options) {}

MemberInformers::~MemberInformers() { Stop(); }

std::string MemberInformers::Key(const client::ResourceRef& resource) {
  if (resource.group.find('.') == std::string::npos) return resource.resource;
  return resource.resource + "." + resource.group;
}

MemberInformers::Kind& MemberInformers::KindOf(const client::ResourceRef& resource) {
  for (Kind& k : kinds_) {
    if (k.resource.group == resource.group && k.resource.resource == resource.resource) return k;
  }
  return kinds_.emplace_back(Kind{.resource = resource});
}

std::shared_ptr<runtime::Informer> MemberInformers::NewInformer(client::Client& client,
                                                                const Kind& kind) const {
  runtime::InformerOptions options = options_;
  options.transform = kind.transform;
  options.field_selector = kind.field_selector;
  return std::make_shared<runtime::Informer>(client, kind.resource, clock_, options);
}

MemberInformers::HandlerId MemberInformers::AddHandler(const client::ResourceRef& resource,
                                                       MemberHandlerFactory factory) {
  // The members Ready now get the handler here; those that become Ready
  // later find it among the kinds.
  struct Pending {
    std::string member;
    std::shared_ptr<runtime::Informer> informer;
    runtime::EventHandler handler;
  };
  std::vector<Pending> handlers;
  std::vector<std::shared_ptr<runtime::Informer>> started;
  HandlerId id = 0;
  {
    MutexLock lock(mu_);
    id = next_id_++;
    Kind& kind = KindOf(resource);
    kind.factories.emplace_back(id, factory);
    if (!started_) return id;
    for (auto& [name, m] : members_) {
      std::shared_ptr<runtime::Informer>& informer = m.informers[Key(resource)];
      if (informer == nullptr) {
        informer = NewInformer(*m.client, kind);
        started.push_back(informer);
      }
      handlers.push_back({name, informer, factory(name)});
    }
  }
  // A handler added to a cache with data is told of every object, which
  // may take the lock.
  for (Pending& p : handlers) {
    runtime::Informer::HandlerId registered = p.informer->AddEventHandler(std::move(p.handler));
    MutexLock lock(mu_);
    auto m = members_.find(p.member);
    if (m == members_.end()) continue;
    // Still the member's informer (not dropped or restarted meanwhile).
    auto informer = m->second.informers.find(Key(resource));
    if (informer != m->second.informers.end() && informer->second == p.informer) {
      m->second.handlers[id] = {Key(resource), registered};
    }
  }
  for (auto& informer : started) informer->Start();
  return id;
}

void MemberInformers::RemoveHandler(HandlerId id) {
  std::vector<std::pair<std::shared_ptr<runtime::Informer>, runtime::Informer::HandlerId>> handlers;
  Member dropped;  // informers of a resource nobody reads any more
  {
    MutexLock lock(mu_);
    auto kind = std::find_if(kinds_.begin(), kinds_.end(), [&](const Kind& k) {
      return std::any_of(k.factories.begin(), k.factories.end(),
                         [&](const auto& f) { return f.first == id; });
    });
    if (kind == kinds_.end()) return;
    std::erase_if(kind->factories, [&](const auto& f) { return f.first == id; });
    const std::string key = Key(kind->resource);
    bool unread = kind->factories.empty() && !kind->transform;
    for (auto& [name, m] : members_) {
      auto h = m.handlers.find(id);
      if (h != m.handlers.end()) {
        auto informer = m.informers.find(h->second.first);
        if (informer != m.informers.end())
          handlers.emplace_back(informer->second, h->second.second);
        m.handlers.erase(h);
      }
      if (!unread) continue;
      auto informer = m.informers.find(key);
      if (informer == m.informers.end()) continue;
      dropped.informers[name + "/" + key] = informer->second;
      m.informers.erase(informer);
    }
    if (unread) kinds_.erase(kind);
  }
  for (auto& [informer, handler] : handlers) informer->RemoveEventHandler(handler);
  StopAll(dropped);
}

void MemberInformers::SetTransform(const client::ResourceRef& resource,
                                   runtime::Transform transform) {
  MutexLock lock(mu_);
  KindOf(resource).transform = std::move(transform);
}

void MemberInformers::SetFieldSelector(const client::ResourceRef& resource,
                                       std::string field_selector) {
  MutexLock lock(mu_);
  KindOf(resource).field_selector = std::move(field_selector);
}

void MemberInformers::Start() {
  {
    MutexLock lock(mu_);
    started_ = true;
  }
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
    started_ = false;
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
  // Made and registered under one lock with the kinds they are made of: a
  // handler added meanwhile either finds this member or is among them.
  std::vector<std::shared_ptr<runtime::Informer>> started;
  {
    MutexLock lock(mu_);
    if (!started_) return;
    Member m;
    m.client = client;
    for (const Kind& kind : kinds_) {
      if (kind.factories.empty()) continue;  // a transform, and no reader
      auto informer = NewInformer(*client, kind);
      for (const auto& [id, make] : kind.factories) {
        m.handlers[id] = {Key(kind.resource), informer->AddEventHandler(make(name))};
      }
      m.informers[Key(kind.resource)] = informer;
      started.push_back(informer);
    }
    members_[name] = std::move(m);
  }
  // Registered before they start: a handler told that a cache synced finds
  // the informer through Get().
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
  // Named once, not once per member: a check of a federated object asks
  // this of every member.
  std::vector<std::string> keys;
  keys.reserve(resources.size());
  for (const client::ResourceRef& r : resources) keys.push_back(Key(r));
  MutexLock lock(mu_);
  std::vector<ClusterSync> out;
  out.reserve(members_.size());
  for (const auto& [name, m] : members_) {
    ClusterSync s{.cluster = name, .synced = true};
    for (size_t i = 0; i < keys.size(); ++i) {
      auto it = m.informers.find(keys[i]);
      bool served = it != m.informers.end() && it->second->Served();
      if (i == 0) s.served = served;
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
