// The sync controller: propagates the federation's Namespaces, ConfigMaps,
// Secrets and Services to the member clusters (issue 6, "Propagation of
// plain objects"; docs/federation.md, "Propagation").
//
// For every federated object that Propagates() (kinds.h), in every Ready
// cluster whose informers have synced:
// - the cluster selector admits the cluster: the copy is created when
//   missing and rewritten when a propagated field differs (so a copy
//   edited or deleted by hand is restored, and a cluster that joins or
//   comes back gets what it lacks);
// - it does not: a managed copy there is deleted.
// A member object without the managed-by label is never written: a Warning
// NotManagedInCluster event says so (a Namespace that already exists is left
// alone quietly, and objects are still propagated into it). A copy whose
// namespace does not exist in the member yet is retried with backoff.
//
// Deletion: the controller holds api::kDeleteFromUnderlyingClustersFinalizer
// on the objects it propagates. When one is deleted, Orphan leaves the
// copies; Background and Foreground delete the managed copies in ready
// clusters (with the same policy) and wait until the member caches no
// longer see them. Then the finalizer goes.
//
// Events on the federated object (source "flotilla-sync"): CreateInCluster,
// UpdateInCluster, DeleteInCluster; FailedCreateInCluster,
// FailedUpdateInCluster, FailedDeleteInCluster, NotManagedInCluster,
// InvalidClusterSelector. One controller per kind ("sync-configmaps", ...)
// with its work queue; member and Cluster label changes enqueue the
// federated keys they concern.
//
// Thread-safe; time runs on the injected Clock.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "client/client.h"
#include "federation/common/cluster_clients.h"
#include "federation/common/cluster_selector.h"
#include "federation/common/member_informers.h"
#include "federation/sync/kinds.h"
#include "federation/sync/metrics.h"
#include "runtime/controller_manager.h"
#include "runtime/event_recorder.h"
#include "runtime/informer.h"

namespace flotilla::federation::sync {

struct SyncControllerOptions {
  int workers = 2;  // per kind
  // While the copies of a deleted object are going, how often it is checked
  // besides the member caches' delete events.
  Duration deletion_recheck = std::chrono::seconds(5);
  // Backoff of a failed write (e.g. the copy's namespace not there yet).
  runtime::RateLimiterOptions retry{.base_delay = std::chrono::milliseconds(100),
                                    .max_delay = std::chrono::seconds(30)};
};

class SyncController {
 public:
  // Registers informers on the propagated kinds and on Clusters, and one
  // controller per kind, with `manager`; starts informers on the kinds in
  // every ready member. `fed`, `manager` and `clusters` must outlive it.
  // REQUIRES: Stop() before `manager` is destroyed, which must happen before
  // this is destroyed.
  SyncController(client::Client& fed, runtime::ControllerManager& manager, Clock& clock,
                 ClusterClients& clusters, SyncControllerOptions options = {});
  ~SyncController();
  SyncController(const SyncController&) = delete;
  SyncController& operator=(const SyncController&) = delete;

  // Stops the member informers (no more enqueues). Idempotent.
  void Stop();

  const SyncMetrics& metrics() const { return metrics_; }
  std::string RenderMetrics() const { return metrics_.Render(); }

 private:
  struct Kind;
  struct Target;  // one ready, synced cluster

  StatusOr<runtime::Result> Reconcile(Kind& k, const std::string& key);
  StatusOr<runtime::Result> Finalize(Kind& k, const json::object& obj);
  Status SyncCluster(Kind& k, const json::object& obj, const json::object& desired,
                     const ClusterSelector& selector, const Target& t);
  Status CreateCopy(Kind& k, const json::object& obj, const json::object& desired, const Target& t);
  Status UpdateCopy(Kind& k, const json::object& obj, const json::object& desired,
                    const json::object& existing, const Target& t);
  Status DeleteCopy(Kind& k, const json::object& obj, const Target& t, std::string policy);
  // The ready clusters with synced caches for `k`; `unsynced` is set when
  // a ready cluster's cache has not synced yet.
  std::vector<Target> Targets(const Kind& k, bool* unsynced) const;
  // Whether `selector` admits `cluster`; nullopt when its Cluster object is
  // not in the cache (being unjoined, or not seen yet).
  std::optional<bool> Admits(const ClusterSelector& selector, const std::string& cluster) const;
  void Event(const json::object& obj, std::string_view type, std::string_view reason,
             const std::string& message);

  runtime::EventHandler MemberHandler(const client::ResourceRef& resource);
  Kind* KindOf(const std::string& resource) const;
  void EnqueueAll();
  void EnqueueNamespace(const std::string& ns);

  client::Client& fed_;
  ClusterClients& clusters_;
  const SyncControllerOptions options_;
  std::vector<std::unique_ptr<Kind>> kinds_;
  runtime::Informer cluster_objects_;
  MemberInformers members_;
  runtime::EventRecorder events_;
  SyncMetrics metrics_;
};

}  // namespace flotilla::federation::sync
