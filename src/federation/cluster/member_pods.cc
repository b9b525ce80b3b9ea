// The members' pods, seen on the federation (member_pods.h).
#include "federation/cluster/member_pods.h"

#include <utility>
#include <vector>

#include "api/conditions.h"
#include "api/federated.h"
#include "api/managed_fields.h"
#include "api/views.h"
#include "base/log.h"
#include "client/rest_client.h"
#include "federation/cluster/member_access.h"
#include "federation/cluster/tunnel.h"
#include "federation/common/names.h"

namespace flotilla::federation::cluster {
namespace {

// A space parts name and cluster: it sorts below every character a name
// may hold, so the view lists pods in name order ("web" before "web-1"),
// then by cluster.
std::string KeyOf(std::string_view ns, std::string_view name, std::string_view cluster) {
  std::string key = kMemberPodsPrefix;
  key.append(ns).append("/").append(name).append(" ").append(cluster);
  return key;
}

Status ReadOnly() {
  return Status(Reason::kMethodNotAllowed,
                "pods on the federation are a read-only view of the member clusters' pods: "
                "change the workload that owns a pod, or the pod in its cluster "
                "(kubectl --context flotilla-CLUSTER, see kubectl flotilla kubeconfig)");
}

}  // namespace

MemberPodsStore::MemberPodsStore(Clock& clock)
    // The view is rebuilt from the members at every start; a watch that
    // falls this far behind lists again.
    : pods_(storage::NewMemoryStore({.history_events = 20000, .clock = &clock})) {}

StatusOr<storage::KeyValue> MemberPodsStore::Get(std::string_view key) {
  std::string prefix = std::string(key) + " ";
  FLOTILLA_ASSIGN_OR_RETURN(storage::ListResult found, pods_->List(prefix, {}));
  if (found.items.empty()) return Status::NotFound(std::string(key));
  if (found.items.size() == 1) return std::move(found.items.front());
  std::string name(key.substr(key.rfind('/') + 1));
  std::string clusters;
  for (const storage::KeyValue& kv : found.items) {
    if (!clusters.empty()) clusters += ", ";
    clusters += kv.key.substr(prefix.size());
  }
  return Status::Conflict("pods \"" + name + "\" run in several clusters (" + clusters +
                          "): read one with kubectl get pods --field-selector metadata.name=" +
                          name + " -l " + api::kMemberClusterLabel + "=CLUSTER");
}

StatusOr<storage::KeyValue> MemberPodsStore::Create(std::string_view, const storage::Mutation&,
                                                    Duration) {
  return ReadOnly();
}

StatusOr<storage::KeyValue> MemberPodsStore::Update(std::string_view, int64_t,
                                                    const storage::Mutation&, Duration) {
  return ReadOnly();
}

StatusOr<storage::KeyValue> MemberPodsStore::Delete(std::string_view, int64_t) {
  return ReadOnly();
}

Status MemberPodsStore::Put(const std::string& cluster, const json::object& pod) {
  json::object obj = api::WithoutManagedFields(pod);
  api::ObjectView view(obj);
  std::string key = KeyOf(view.ns(), view.name(), cluster);
  json::object& meta = EnsureObject(obj, "metadata");
  EnsureObject(meta, "labels")[api::kMemberClusterLabel] = cluster;
  storage::Mutation write =
      [&](int64_t revision, const std::optional<storage::KeyValue>&) -> StatusOr<storage::Encoded> {
    meta["resourceVersion"] = std::to_string(revision);
    return json::serialize(obj);
  };
  auto updated = pods_->Update(key, 0, write);
  if (!updated.ok() && updated.status().Is(Reason::kNotFound)) {
    FLOTILLA_RETURN_IF_ERROR(pods_->Create(key, write).status());
  } else if (!updated.ok()) {
    return updated.status();
  }
  MutexLock lock(mu_);
  keys_[cluster].insert(std::move(key));
  return Status::Ok();
}

Status MemberPodsStore::Remove(const std::string& cluster, const json::object& pod) {
  api::ObjectView view(pod);
  std::string key = KeyOf(view.ns(), view.name(), cluster);
  Status s = pods_->Delete(key, 0).status();
  if (!s.ok() && !s.Is(Reason::kNotFound)) return s;
  MutexLock lock(mu_);
  if (auto it = keys_.find(cluster); it != keys_.end()) it->second.erase(key);
  return Status::Ok();
}

void MemberPodsStore::RemoveCluster(const std::string& cluster) {
  std::set<std::string> keys;
  {
    MutexLock lock(mu_);
    auto it = keys_.find(cluster);
    if (it == keys_.end()) return;
    keys.swap(it->second);
    keys_.erase(it);
  }
  for (const std::string& key : keys) pods_->Delete(key, 0).status().IgnoreError();
}

Status MemberPods::Start(client::Client& federation) {
  federation_ = &federation;
  clusters_ = std::make_unique<runtime::Informer>(federation, kClusters, clock_);
  manager_ = std::make_unique<runtime::ControllerManager>(clock_);
  runtime::Controller& controller = manager_->AddController(
      "member-pods", 1, [this](const std::string& name) { return Reconcile(name); });
  clusters_->AddEventHandler(controller.EnqueueHandler());
  manager_->AddInformer(clusters_.get());
  secrets_ = std::make_unique<runtime::Informer>(federation, kSecrets, clock_,
                                                 runtime::InformerOptions{.ns = kSystemNamespace});
  secrets_->AddEventHandler(EnqueueClustersOfSecret(*clusters_, controller.queue()));
  manager_->AddInformer(secrets_.get());
  return manager_->Start();
}

void MemberPods::Stop() {
  if (manager_) manager_->Stop();
  std::map<std::string, Member> members;
  {
    MutexLock lock(mu_);
    members.swap(members_);
  }
  for (auto& [name, member] : members) member.pods->Stop();
}

std::vector<std::string> MemberPods::Watched() const {
  MutexLock lock(mu_);
  std::vector<std::string> names;
  for (const auto& [name, member] : members_) names.push_back(name);
  return names;
}

StatusOr<runtime::Result> MemberPods::Reconcile(const std::string& name) {
  runtime::ObjectPtr cluster = clusters_->lister().Get("", name);
  if (cluster == nullptr || !api::ConditionTrue(*cluster, "Ready")) {
    Forget(name);
    return runtime::Result{};
  }
  // An agent-connected cluster goes over its tunnel; a dialled one follows
  // its Secret.
  bool via_agent = api::ClusterView(*cluster).via_agent();
  if (via_agent && tunnels_ == nullptr) return runtime::Result{};
  runtime::ObjectPtr secret;
  std::string version(kAgentCredentials);
  if (!via_agent) {
    FLOTILLA_ASSIGN_OR_RETURN(secret, SecretOf(*cluster, *secrets_, *federation_));
    version = SecretVersion(*secret);
  }
  {
    MutexLock lock(mu_);
    auto it = members_.find(name);
    if (it != members_.end() && it->second.secret_version == version) return runtime::Result{};
  }
  // New credentials: the old watch goes with the pods it saw, the new one
  // lists them again.
  Forget(name);
  client::RestConfig config;
  if (via_agent) {
    config = AgentRestConfig(*cluster, tunnels_->For(name));
  } else {
    FLOTILLA_ASSIGN_OR_RETURN(config, RestConfigFromSecret(*secret));
  }
  client::RestOptions opts;
  opts.user_agent = "flotilla-member-pods";
  opts.http2 = http2_;
  opts.clock = &clock_;
  Member member{version, nullptr, nullptr};
  FLOTILLA_ASSIGN_OR_RETURN(member.client, client::NewRestClient(config, opts));
  member.pods = std::make_unique<runtime::Informer>(
      *member.client, kPods, clock_,
      runtime::InformerOptions{
          .transform = [](const json::object& pod) { return api::WithoutManagedFields(pod); }});
  auto put = [view = view_, name](const runtime::ObjectPtr& pod) {
    Status s = view->Put(name, *pod);
    if (!s.ok()) spdlog::warn("member pods of cluster {}: {}", name, s.ToString());
  };
  member.pods->AddEventHandler(
      {.on_add = put,
       .on_update = [put](const runtime::ObjectPtr&, const runtime::ObjectPtr& pod) { put(pod); },
       .on_delete =
           [view = view_, name](const runtime::ObjectPtr& pod) {
             view->Remove(name, *pod).IgnoreError();
           }});
  member.pods->Start();
  MutexLock lock(mu_);
  members_[name] = std::move(member);
  return runtime::Result{};
}

void MemberPods::Forget(const std::string& name) {
  std::optional<Member> gone;
  {
    MutexLock lock(mu_);
    auto it = members_.find(name);
    if (it == members_.end()) return;
    gone = std::move(it->second);
    members_.erase(it);
  }
  gone->pods->Stop();
  view_->RemoveCluster(name);
}

}  // namespace flotilla::federation::cluster
