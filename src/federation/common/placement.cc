// Where a federated ReplicaSet's replicas go (placement.h).
#include "federation/common/placement.h"

#include <algorithm>
#include <vector>

namespace flotilla::federation {

std::optional<int64_t> EstimatedCapacity(const ClusterView& c) {
  std::optional<int64_t> out;
  if (c.create_failed) {
    out = 0;
  } else if (c.full) {
    out = c.scheduled;
  }
  if (c.cordoned) out = std::min(out.value_or(c.current), std::max<int64_t>(c.current, 0));
  if (c.draining) out = 0;
  return out;
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
  int64_t unplaced = std::max<int64_t>(replicas, 0);
  for (int64_t n : placement.replicas) unplaced -= n;
  // Full clusters keep a couple waiting, and whatever no cluster could take
  // waits where it was (a cluster whose local ReplicaSet cannot be created
  // gets nothing until the retry).
  std::vector<int64_t> waiting(clusters.size(), 0);
  for (size_t i = 0; i < clusters.size(); ++i) {
    if (placement.overflow[i] <= 0) continue;
    out.overflow[clusters[i].name] = placement.overflow[i];
    if (clusters[i].full && !clusters[i].create_failed) {
      waiting[i] = std::min(placement.overflow[i], kProbeReplicas);
      unplaced -= waiting[i];
    }
  }
  for (size_t i = 0; i < clusters.size() && unplaced > 0; ++i) {
    if (waiting[i] == 0) continue;
    int64_t more = std::min(placement.overflow[i] - waiting[i], unplaced);
    waiting[i] += more;
    unplaced -= more;
  }
  for (size_t i = 0; i < clusters.size(); ++i) {
    out.replicas[clusters[i].name] = placement.replicas[i] + waiting[i];
  }
  return out;
}

}  // namespace flotilla::federation
