// ReplicaPlacer: where the replicas of federated workloads go, for every
// controller that places replicas (ReplicaSets, Deployments): it keeps what
// seed 000 asks to remember of each workload between checks ([I4]: since
// when its pods wait to be scheduled, and the capacity learned where they
// waited too long; [E1]: when a rejected create is retried; the last
// placement, for the moved-replicas count), turns what the member caches
// show into ClusterViews (placement.h) and plans with the planner.
//
// Capacity: when a cluster's pods waited longer than the unschedulable
// threshold, the cluster is full for the workload and its capacity is the
// pods a node took. The placer remembers it, so the cluster keeps exactly
// that many once the member removed the pods that waited. It probes the
// cluster after `capacity_probe_interval`: the cluster gets up to
// kProbeReplicas more (placement.h). If a node takes them, the estimate is
// dropped and the cluster gets its full share again; if they wait past the
// threshold, the estimate is learned again and the next probe comes after
// twice the interval (at most max(1h, the interval)).
//
// What a view counts for one cluster, given the workload's managed local
// object there and its pods:
// - placed: the local object's spec.replicas (0 when there is none);
// - current: what the federation planned there last time, from the
//   breakdown annotation ("planned"), else the local spec, so that neither a
//   hand edit of the local spec nor a local object deleted by hand moves a
//   replica when rebalance is off (the recreated one gets the same share
//   and adopts the pods that still run);
// - scheduled and pending pods, missing pods (placed minus live ones) and
//   whether some waited longer than the unschedulable threshold.
//
// Metrics (registry of the context), labelled kind="ReplicaSet", ...:
//   flotilla_federation_replicas_moved_total, flotilla_federation_placement_changes_total.
//
// Thread-safe; a workload's memory is only touched by the check of its key
// (the work queue never runs one key twice at once).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/json.h"
#include "base/metrics.h"
#include "base/mutex.h"
#include "federation/common/placement.h"
#include "planner/preferences.h"
#include "runtime/cache.h"

namespace flotilla::federation {

class CoupledPlacer;

struct PlacerOptions {
  // How long pods may stay unschedulable (or uncreated) before their
  // cluster counts as full for the workload ([I4]).
  Duration unschedulable_threshold = std::chrono::seconds(60);
  // When a create a member rejected is tried again ([E1]).
  Duration create_retry = std::chrono::minutes(1);
  // When a full cluster is first probed for room.
  Duration capacity_probe_interval = std::chrono::minutes(5);
};

// The settings of the controllers that place replicas (flags of `flotilla
// server`, docs/federation.md).
struct WorkloadOptions {
  // How long pods may stay unschedulable (or uncreated) before their
  // cluster counts as full for the workload ([I4]).
  Duration unschedulable_threshold = std::chrono::seconds(60);
  // When to check again a workload not in its desired state, and to retry a
  // create a member rejected ([I7], [I8], [E1]).
  Duration recheck_delay = std::chrono::minutes(1);
  // How long after a change in a member its workload is checked (changes
  // within it are checked together).
  Duration member_change_delay = std::chrono::seconds(2);
  // How long a ready cluster whose caches have not synced holds the checks
  // back before it is planned without.
  Duration sync_grace = std::chrono::seconds(30);
  // When a full cluster is first probed for room (placer.h).
  Duration capacity_probe_interval = std::chrono::minutes(5);
  int workers = 8;
  // Where coupled applications run; null: every workload is placed on its
  // own. Not owned.
  CoupledPlacer* applications = nullptr;

  PlacerOptions placer() const {
    return {.unschedulable_threshold = unschedulable_threshold,
            .create_retry = recheck_delay,
            .capacity_probe_interval = capacity_probe_interval};
  }
};

// The workload in one admitted cluster, as a check sees it.
struct WorkloadInCluster {
  std::string cluster;
  // The managed local object (not being deleted); null when there is none.
  runtime::ObjectPtr local;
  // Its pods that are not being deleted are counted.
  std::vector<runtime::ObjectPtr> pods;
  // Pods that the local object is replacing (a Deployment's pods of an
  // older template, in a cluster rolling out a newer one): they count as
  // created, but the room they hold is not room for the current pods, so
  // neither their scheduling nor their waiting says anything of capacity.
  std::vector<runtime::ObjectPtr> outgoing_pods;
  bool cordoned = false;
  bool draining = false;
};

// One placement of one workload.
struct PlacementResult {
  std::vector<ClusterView> views;  // in the order of the clusters given
  Targets targets;
  // When a pod's wait crosses the threshold or a retry comes due: the
  // workload must be checked again then.
  std::optional<TimePoint> next_check;

  int64_t ReplicasFor(const std::string& cluster) const;
};

// What the last check recorded on a workload, in its breakdown
// annotation, per cluster: what it planned there and the capacity it had
// learned (LastCheckOf).
struct LastCheck {
  std::map<std::string, int64_t> planned;
  std::map<std::string, int64_t> capacity;
};

class ReplicaPlacer {
 public:
  // `kind` labels the metrics ("ReplicaSet").
  ReplicaPlacer(PlacerOptions options, metrics::Registry& registry, const std::string& kind);
  ~ReplicaPlacer();

  // Observes the clusters and plans `replicas` of workload `key`. `last` is
  // what the last check recorded on the object: what it planned in each
  // cluster (what this process planned itself, when it has, counts first:
  // the object in the cache may be older) and, for a process that has not
  // checked the workload yet (a restarted control plane), the capacities
  // learned before.
  PlacementResult Place(const std::string& key, int64_t replicas, const planner::Preferences& prefs,
                        const std::vector<WorkloadInCluster>& clusters, const LastCheck& last,
                        TimePoint now);
  // The create of the local object in `cluster` failed: the cluster gets
  // nothing until the retry is due. Plans `result` again.
  void CreateFailed(const std::string& key, const std::vector<std::string>& clusters,
                    int64_t replicas, const planner::Preferences& prefs, PlacementResult& result,
                    TimePoint now);
  // The placement a check settled on, against the last one (after a
  // restart: what the federation had placed, the views' current; so that
  // restoring a local copy deleted or edited by hand is no change):
  // "a=16, b=17 (were a=10, b=10, c=10)" when it differs, for the
  // PlacementChanged event. Counts the replicas that moved between
  // clusters, offline clusters included, and the change, unless `count` is
  // false (the counts changed without the federation: a federated HPA's
  // local HPAs scaled them).
  std::optional<std::string> Settle(const std::string& key, const PlacementResult& result,
                                    bool count = true);
  // The workload is gone.
  void Forget(const std::string& key);
  const PlacerOptions& options() const { return options_; }

 private:
  struct Workload;
  Workload& WorkloadFor(const std::string& key);
  ClusterView View(const WorkloadInCluster& c, Workload& w, const LastCheck& last, TimePoint now,
                   std::optional<TimePoint>* next_check) const;
  // Learns, keeps or drops `cluster`'s capacity for the workload, whether
  // some of its pods `waited_too_long` or not, and sets v.full, v.capacity
  // and v.probing; `sooner` is told when the next probe is due.
  void Learned(const std::string& cluster, Workload& w, bool waited_too_long, TimePoint now,
               ClusterView& v, const std::function<void(TimePoint)>& sooner) const;

  const PlacerOptions options_;
  const std::string kind_;
  metrics::CounterVec& moved_;
  metrics::CounterVec& changes_;
  Mutex mu_;
  std::map<std::string, std::unique_ptr<Workload>> workloads_ GUARDED_BY(mu_);
};

// The preferences in annotation `key` of `obj` (planner::Preferences::
// Default() when absent). Invalid when they do not parse (admission
// refuses these; one stored before it existed).
StatusOr<planner::Preferences> PreferencesOf(const json::object& obj, std::string_view key);

// cluster -> "planned" of the per-cluster breakdown in annotation `key`
// ({"clusters": {"a": {"planned": 16, ...}}}); empty when absent or
// unreadable.
std::map<std::string, int64_t> LastPlanned(const json::object& obj, std::string_view key);
// Both, as a LastCheck.
LastCheck LastCheckOf(const json::object& obj, std::string_view key);
// cluster -> "estimatedCapacity" of that breakdown, for the clusters that
// have one.
std::map<std::string, int64_t> EstimatedCapacities(const json::object& obj, std::string_view key);

// The PodScheduled=False condition of a pod no node took; null when it has
// none yet.
const json::object* NotScheduled(const json::object& pod);

// The pods of `owner` (by ownerReference uid) in `pods`.
std::vector<runtime::ObjectPtr> PodsOf(const runtime::Lister& pods, const json::object& owner);

}  // namespace flotilla::federation
