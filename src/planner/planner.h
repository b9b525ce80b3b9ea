// The replica planner: how many replicas of a federated workload go to each
// member cluster (seed 000, "(RE)Scheduling algorithm"; docs/planner.md).
//
// Pure functions: no I/O, no clock, no threads, no state between calls; the
// ReplicaSet, Deployment and StatefulSet controllers call them from any thread.
// Placements reproduce the original federation planner exactly (same cluster
// order, same rounding), except for one fixed defect: with rebalance off, a
// scale-down removes replicas from the clusters furthest above their weighted
// share instead of from whichever clusters happen to come last.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "planner/preferences.h"

namespace flotilla::planner {

// One available (ready) cluster as the planner sees it. Offline clusters are
// simply not passed.
struct ClusterState {
  std::string_view name;
  // Replicas of the workload the cluster runs now (negative counts as 0).
  int64_t current_replicas = 0;
  // How many replicas of the workload the cluster can run; unbounded when
  // absent (negative counts as 0).
  std::optional<int64_t> estimated_capacity;
};

// What stopped a cluster from receiving more replicas.
enum class Limit : uint8_t {
  kNone,
  kMaxReplicas,  // its maxReplicas
  kCapacity,     // its estimated capacity
  kReplicas,     // no replicas were left when its minReplicas or running replicas came up
  kScaleDown,    // a scale-down took running replicas away (rebalance false)
};

// Why a cluster got its number: replicas = min + kept + weighted.
struct Explanation {
  // The preferences entry used: the cluster's own name or "*"; empty when no
  // entry matched (the cluster then gets 0).
  std::string_view preference;
  int64_t min = 0;       // from minReplicas
  int64_t kept = 0;      // running replicas kept beyond min (rebalance false)
  int64_t weighted = 0;  // from the weighted distribution of the rest
  Limit limit = Limit::kNone;
};

// The placement for clusters[i] is at index i.
struct Placement {
  std::vector<int64_t> replicas;
  // Replicas it would be good to add to a cluster that its capacity cut, if
  // room appears; 0 for the others.
  std::vector<int64_t> overflow;
};

// Places `replicas` (negative counts as 0) over `clusters` for the workload
// named `workload_key` (e.g. "default/web"). The sum of the placement is
// `replicas` unless preferences, maxReplicas or capacities leave no room.
// Cluster names should be unique; a repeated name is planned as a separate
// cluster. When `explanations` is not null it receives one entry per cluster.
// Preferences should pass ValidatePreferences; for ones that do not, negative
// numbers count as 0 and a minReplicas above maxReplicas as maxReplicas.
Placement PlanPlacement(int64_t replicas, std::span<const ClusterState> clusters,
                        std::string_view workload_key, const Preferences& prefs,
                        std::vector<Explanation>* explanations = nullptr);

using ReplicaCounts = std::map<std::string, int64_t, std::less<>>;

struct PlanResult {
  ReplicaCounts plan;      // every available cluster, 0 included
  ReplicaCounts overflow;  // positive entries only
};

// The same as PlanPlacement with the original planner's map-shaped inputs and
// outputs. Counts for clusters not in `available_clusters` are ignored; a
// repeated available cluster is planned once.
PlanResult Plan(int64_t replicas, const std::vector<std::string>& available_clusters,
                const ReplicaCounts& current_replicas_by_cluster,
                const ReplicaCounts& estimated_capacity_by_cluster, std::string_view workload_key,
                const Preferences& prefs);

// The tie-break between clusters of equal weight: 32-bit FNV-1 (not FNV-1a)
// over the bytes of the cluster name followed by those of the workload key;
// lower values come first.
uint32_t TieBreakHash(std::string_view cluster, std::string_view workload_key);

}  // namespace flotilla::planner
