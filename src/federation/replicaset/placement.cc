// Where a federated ReplicaSet's replicas go (placement.h).
#include "federation/replicaset/placement.h"

#include <algorithm>
#include <vector>

namespace flotilla::federation::replicaset {

std::optional<int64_t> EstimatedCapacity(const ClusterView& c) {
  if (c.create_failed) return 0;
  if (c.full) return c.scheduled;
  return std::nullopt;
}

Targets ComputeTargets(int64_t replicas, std::span<const ClusterView> clusters,
                       std::string_view workload_key, const planner::Preferences& prefs) {
  std::vector<planner::ClusterState> states;
  states.reserve(clusters.size());
  Targets out;
  for (const ClusterView& c : clusters) {
    std::optional<int64_t> capacity = EstimatedCapacity(c);
    if (capacity) out.capacity[c.name] = *capacity;
    states.push_back(
        {.name = c.name, .current_replicas = c.current, .estimated_capacity = capacity});
  }
  planner::Placement placement = planner::PlanPlacement(replicas, states, workload_key, prefs);
  for (size_t i = 0; i < clusters.size(); ++i) {
    const ClusterView& c = clusters[i];
    int64_t n = placement.replicas[i];
    int64_t overflow = placement.overflow[i];
    if (overflow > 0) {
      out.overflow[c.name] = overflow;
      // A full cluster keeps a couple waiting; one whose local ReplicaSet
      // cannot be created gets nothing until the retry.
      if (c.full && !c.create_failed) n += std::min(overflow, kProbeReplicas);
    }
    out.replicas[c.name] = n;
  }
  return out;
}

}  // namespace flotilla::federation::replicaset
