// The members' pods, seen on the federation (docs/federation.md, "The
// members' pods"): `kubectl get pods -A` on the federation lists the pods of
// every Ready member cluster, each labelled federation.kubernetes.io/cluster
// with its cluster's name (so `-l` picks a cluster, and the Table has a
// Cluster column), and `watch` follows them.
//
// MemberPods keeps the view: for each Cluster that is Ready it watches the
// member's pods (an informer over the member's API, with the federation's
// credentials from the Cluster's Secret) and writes every pod it sees into
// a MemberPodsStore, which the API server serves v1 pods from
// (ServerOptions::side_store for kMemberPodsPrefix). A cluster that stops
// being Ready, or leaves, takes its pods out of the view. Every API server
// of the federation keeps its own view, leader or not; it lives in memory
// and is rebuilt from the members when a server starts, so its
// resourceVersions belong to that server.
//
// The view is read-only: writes to its store (create, update, patch,
// eviction, binding) are MethodNotAllowed, and say where the pod can be
// changed; a DELETE of one pod does not reach it, the API server forwards
// that to the member (ClusterProxy::ServeForPod). Pods of different clusters may share a namespace
// and name: the list shows each (the Cluster column tells them apart); GET of such a name is a
// Conflict that names the clusters and how to read one.
//
// Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/json.h"
#include "base/mutex.h"
#include "client/client.h"
#include "runtime/controller_manager.h"
#include "runtime/informer.h"
#include "storage/store.h"

namespace flotilla::federation::cluster {

// Where the view's pods are kept (Objects::Prefix of v1 pods): a pod of
// cluster C is at "/core/pods/NAMESPACE/NAME C".
inline constexpr char kMemberPodsPrefix[] = "/core/pods/";

class MemberPodsStore final : public storage::Store {
 public:
  explicit MemberPodsStore(Clock& clock);

  // A key /core/pods/NS/NAME is the one pod of that name: NotFound when no
  // cluster has it, Conflict when several do.
  StatusOr<storage::KeyValue> Get(std::string_view key) override;
  StatusOr<storage::ListResult> List(std::string_view prefix,
                                     const storage::ListOptions& opts) override {
    return pods_->List(prefix, opts);
  }
  // MethodNotAllowed: the view is written by MemberPods only.
  using Store::Create;
  StatusOr<storage::KeyValue> Create(std::string_view key, const storage::Mutation& mutation,
                                     Duration ttl) override;
  using Store::Update;
  StatusOr<storage::KeyValue> Update(std::string_view key, int64_t expected_mod_revision,
                                     const storage::Mutation& mutation, Duration ttl) override;
  StatusOr<storage::KeyValue> Delete(std::string_view key, int64_t expected_mod_revision) override;
  StatusOr<std::unique_ptr<storage::Watcher>> Watch(std::string_view prefix, int64_t after_revision,
                                                    storage::WatchCallback callback) override {
    return pods_->Watch(prefix, after_revision, std::move(callback));
  }
  int64_t CurrentRevision() override { return pods_->CurrentRevision(); }
  Status Compact(int64_t revision) override { return pods_->Compact(revision); }
  int64_t CompactedRevision() override { return pods_->CompactedRevision(); }
  StatusOr<int64_t> Count(std::string_view prefix) override { return pods_->Count(prefix); }
  StatusOr<std::unique_ptr<storage::Watcher>> WatchWithObjects(
      std::string_view prefix, int64_t after_revision, storage::WatchCallback callback) override {
    return pods_->WatchWithObjects(prefix, after_revision, std::move(callback));
  }
  bool SharesObjects(std::string_view key) override { return pods_->SharesObjects(key); }

  // What MemberPods writes: `pod` of `cluster` as it is now (labelled with
  // its cluster, without managedFields, its resourceVersion the view's),
  // a pod gone, every pod of a cluster gone (MemberPods stops writing a
  // cluster's pods before it removes them all).
  Status Put(const std::string& cluster, const json::object& pod);
  Status Remove(const std::string& cluster, const json::object& pod);
  void RemoveCluster(const std::string& cluster);

 private:
  std::unique_ptr<storage::Store> pods_;
  // The keys of each cluster's pods, for RemoveCluster: a member leaving
  // costs its own pods, not a pass over every member's.
  Mutex mu_;
  std::map<std::string, std::set<std::string>> keys_ GUARDED_BY(mu_);
};

class Tunnels;

class MemberPods {
 public:
  // `http2`: offer HTTP/2 to the members (client::RestOptions::http2; the
  // federation's --member-http2). `tunnels`: those of agent-connected
  // clusters (tunnel.h; not owned); null: their pods are not seen.
  MemberPods(std::shared_ptr<MemberPodsStore> view, Clock& clock, bool http2 = true,
             Tunnels* tunnels = nullptr)
      : view_(std::move(view)), clock_(clock), http2_(http2), tunnels_(tunnels) {}
  ~MemberPods() { Stop(); }

  // Follows the Clusters and their Secrets through `federation` (not
  // owned; must outlive Stop()): a Secret's change restarts the watch of
  // the clusters it holds the credentials of. Returns once both are listed.
  Status Start(client::Client& federation);
  // Stops every member's watch; the view keeps what it holds. Idempotent.
  void Stop();

  // The clusters whose pods are in the view now.
  std::vector<std::string> Watched() const;

 private:
  // Starts, restarts (its Secret changed) or stops watching cluster `name`.
  StatusOr<runtime::Result> Reconcile(const std::string& name);
  // Stops watching `name` and takes its pods out of the view.
  void Forget(const std::string& name);

  struct Member {
    std::string secret_version;  // uid/resourceVersion of the Secret its client was built from
    std::unique_ptr<client::Client> client;
    std::unique_ptr<runtime::Informer> pods;  // after `client`: stopped first
  };

  const std::shared_ptr<MemberPodsStore> view_;
  Clock& clock_;
  const bool http2_;
  Tunnels* const tunnels_;
  client::Client* federation_ = nullptr;
  std::unique_ptr<runtime::Informer> clusters_;
  std::unique_ptr<runtime::Informer> secrets_;  // of the system namespace (SecretOf)
  std::unique_ptr<runtime::ControllerManager> manager_;
  mutable Mutex mu_;
  std::map<std::string, Member> members_ GUARDED_BY(mu_);
};

}  // namespace flotilla::federation::cluster
