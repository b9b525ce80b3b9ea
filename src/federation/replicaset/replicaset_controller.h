// The federated ReplicaSet controller (seed 000): a ReplicaSet created on
// the federation is spread over the member clusters by its preferences, as
// local ReplicaSets of the same name and namespace, watched, and moved when
// a cluster fails or runs out of room. docs/federation.md.
//
// Work-queue layout (seed 000, "Goroutines layout"): a federated ReplicaSet
// that changes is checked at once; a change of one of its local ReplicaSets
// or of their pods checks it after `member_change_delay`; a cluster that
// becomes ready, stops being ready, leaves, changes labels or whose caches
// have just synced checks every federated ReplicaSet at once; one that is
// not in its desired state is checked again after `recheck_delay`. The
// queue keeps the shorter of two pending delays.
//
// One check (the seed's DoFrsCheck), for the clusters that are Ready, whose
// caches have synced and that the cluster selector admits:
// - estimates capacities from the pods that wait too long (placement.h) and
//   plans the replicas (src/planner);
// - creates missing local ReplicaSets first; a cluster that rejects the
//   create gets nothing until the retry after `recheck_delay` and the plan
//   is made again without it ([E1]);
// - updates local ReplicaSets whose replicas, template or metadata differ,
//   restoring ones edited by hand and taking over a same-named one the
//   federation did not create when it places replicas there ([E2], with a
//   Warning event); deleted ones are created again ([E4]); pods that match
//   are adopted by the member's ReplicaSet controller ([E3]);
// - deletes its local ReplicaSets in ready clusters the selector no longer
//   admits;
// - writes the summed status, the per-cluster breakdown annotation
//   (status.h) and, when the placement changes, an Event.
// The federated ReplicaSet holds the finalizer
// federation.kubernetes.io/delete-from-underlying-clusters; when it is
// deleted the policy the API server recorded decides: Orphan keeps the local
// ReplicaSets, Background and Foreground delete them (in ready clusters).
//
// Thread-safe; time runs on the injected Clock.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "client/client.h"
#include "federation/common/cluster_clients.h"
#include "federation/common/member_informers.h"
#include "federation/replicaset/placement.h"
#include "federation/replicaset/status.h"
#include "runtime/controller_manager.h"
#include "runtime/event_recorder.h"
#include "runtime/informer.h"

namespace flotilla::federation::replicaset {

inline const client::ResourceRef kReplicaSets{"apps", "v1", "replicasets", true};
inline const client::ResourceRef kPods{"", "v1", "pods", true};

struct ReplicaSetControllerOptions {
  // How long pods may stay unschedulable (or uncreated) before their
  // cluster counts as full for the workload ([I4]).
  Duration unschedulable_threshold = std::chrono::seconds(60);
  // When to check again a federated ReplicaSet not in its desired state,
  // and to retry a create a member rejected ([I7], [I8], [E1]).
  Duration recheck_delay = std::chrono::minutes(1);
  // How long after a local ReplicaSet or pod change its federated
  // ReplicaSet is checked (changes within it are checked together).
  Duration member_change_delay = std::chrono::seconds(2);
  // How long a ready cluster whose caches have not synced holds the checks
  // back before it is planned without.
  Duration sync_grace = std::chrono::seconds(30);
  int workers = 8;
  // Requests to different members sent at once by one check.
  int parallel_requests = 64;
};

class ReplicaSetController {
 public:
  static constexpr char kName[] = "replicaset";

  // Registers informers on the federation's ReplicaSets and Clusters and
  // the controller with `manager`, and starts informers on ReplicaSets and
  // Pods in every ready member. `fed`, `manager` and `clusters` must outlive
  // it; the manager must be stopped before it is destroyed.
  ReplicaSetController(client::Client& fed, runtime::ControllerManager& manager, Clock& clock,
                       ClusterClients& clusters, ReplicaSetControllerOptions options);
  // Stops.
  ~ReplicaSetController();
  ReplicaSetController(const ReplicaSetController&) = delete;
  ReplicaSetController& operator=(const ReplicaSetController&) = delete;

  // Stops the member informers and leaves the cluster registry, so that
  // nothing enqueues to the manager's queues any more: call it before the
  // manager stops. Idempotent.
  void Stop();

  // Per-cluster request latency and replicas moved, in the Prometheus text
  // format.
  std::string RenderMetrics() const;

 private:
  struct Member;
  struct Workload;
  struct Check;
  struct RequestStats {
    uint64_t count = 0;
    uint64_t failures = 0;
    double seconds = 0;
    std::vector<uint64_t> buckets;  // not cumulative, one more than the bounds
  };

  StatusOr<runtime::Result> Reconcile(const std::string& key);
  // Check again after member_change_delay (at least kRetryDelay): a member
  // has yet to catch up.
  runtime::Result Soon() const;
  static constexpr Duration kRetryDelay = std::chrono::milliseconds(100);
  StatusOr<runtime::Result> Delete(const json::object& frs);
  // The clusters to plan over; nullopt while a ready cluster's caches have
  // not synced within sync_grace.
  std::optional<std::vector<Member>> Members();
  // What the planner needs to know of cluster `m`, whose local ReplicaSet
  // (as cached) is `lrs`.
  ClusterView View(const Member& m, const runtime::ObjectPtr& lrs, Workload& w, TimePoint now,
                   std::optional<TimePoint>* next_check) const;
  void Apply(Check& check);
  Status WriteStatus(const Check& check);
  Workload& WorkloadFor(const std::string& key);
  void Forget(const std::string& key);

  // Sends one request to a member and records its latency.
  template <typename Call>
  auto Timed(const std::string& cluster, Call call) -> decltype(call());
  void Record(const std::string& cluster, Duration took, bool failed);

  void EnqueueAll();
  void EnqueueFromMember(const runtime::ObjectPtr& obj, bool pod);
  runtime::EventHandler MemberHandler(const client::ResourceRef& kind);

  client::Client& fed_;
  Clock& clock_;
  ClusterClients& clusters_;
  const ReplicaSetControllerOptions options_;
  runtime::Informer frs_;
  runtime::Informer cluster_objects_;
  MemberInformers members_;
  runtime::EventRecorder events_;
  runtime::Controller* controller_ = nullptr;
  int subscription_ = -1;

  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Workload>> workloads_;  // GUARDED_BY(mu_)
  std::map<std::string, TimePoint> ready_since_;                // GUARDED_BY(mu_)
  std::map<std::string, RequestStats> requests_;                // GUARDED_BY(mu_)
  uint64_t replicas_moved_ = 0;                                 // GUARDED_BY(mu_)
  uint64_t placement_changes_ = 0;                              // GUARDED_BY(mu_)
};

}  // namespace flotilla::federation::replicaset
