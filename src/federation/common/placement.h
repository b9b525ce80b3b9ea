// Where a federated ReplicaSet's replicas go, from what the controller knows
// of each available cluster (seed 000, "(RE)Scheduling algorithm"):
//
// 1. A cluster's capacity is estimated only once some of the workload's pods
//    there waited to be scheduled (or to be created) longer than the
//    threshold: the placer (placer.h) then learns the number of its pods
//    that a node took ([I4]; the seed's "placed minus failed to be
//    scheduled", counted from the pods themselves so that a scale-down
//    still in progress does not distort it) and remembers it. A cluster
//    where the local ReplicaSet could not be created has capacity 0 until
//    the create is retried ([E1]).
// 2-5. The planner (src/planner/planner.h) does the rest.
//
// The placement sums to the replicas asked for, with one bounded
// exception: a capacity probe. While the placer probes a full cluster
// ("leaving a couple still waiting", seed 000), the cluster gets up to
// kProbeReplicas of the replicas it cannot run on top of its capacity,
// the others keeping theirs; if a node takes them, the estimate goes and
// the cluster is unbounded again, else the probe ends and the placement
// sums to the replicas again. Replicas that no cluster can take wait where
// they were instead of being dropped (e.g. a workload its selector keeps in
// one full cluster).
//
// Pure: no I/O, no clock, no threads.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "planner/planner.h"
#include "planner/preferences.h"

namespace flotilla::federation {

inline constexpr int64_t kProbeReplicas = 2;

// What the controller knows of one available cluster for one federated
// ReplicaSet.
struct ClusterView {
  std::string name;
  // The managed local ReplicaSet's spec.replicas; 0 when there is none.
  int64_t placed = 0;
  // The replicas the federation placed there: what `rebalance: false`
  // keeps where it is. The controller takes the count it planned last time
  // (so that a hand edit of the local spec moves nothing), or the local
  // spec when it has none.
  int64_t current = 0;
  // Its pods that a node took (not being deleted).
  int64_t scheduled = 0;
  // Its pods that wait to be scheduled, and the ones not even created.
  int64_t pending = 0;
  // Of those, the pods that exist and wait for a node.
  int64_t unscheduled = 0;
  // The cluster is full for this workload: `capacity` is what it can run.
  // Pods that wait there are capacity probes, or the surplus of the share
  // it had before, going away; neither is a rollout in progress.
  bool full = false;
  // The capacity the placer learned (set when full).
  std::optional<int64_t> capacity;
  // A probe is due: the cluster may get up to kProbeReplicas beyond its
  // capacity.
  bool probing = false;
  // Its local ReplicaSet could not be created and the retry is not due.
  bool create_failed = false;
  // The cluster is cordoned: it keeps at most what it holds (`current`).
  bool cordoned = false;
  // The cluster is draining: it keeps nothing.
  bool draining = false;
};

struct Targets {
  planner::ReplicaCounts replicas;  // every cluster, 0 included, probes included
  planner::ReplicaCounts capacity;  // the estimates used, for clusters that have one
  planner::ReplicaCounts overflow;  // what capacity cut, positive entries only
};

// The estimated capacity of `c` for the workload (a cordoned cluster's is
// at most what it holds, a draining one's 0); none when unbounded.
std::optional<int64_t> EstimatedCapacity(const ClusterView& c);

Targets ComputeTargets(int64_t replicas, std::span<const ClusterView> clusters,
                       std::string_view workload_key, const planner::Preferences& prefs);

}  // namespace flotilla::federation
