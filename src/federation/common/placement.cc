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
    out = c.capacity.value_or(c.scheduled);
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
  // Whatever no cluster could take waits where it would have gone (a full
  // cluster, not a draining one nor one whose local object cannot be
  // created), and a full cluster being probed gets up to a couple beyond
  // its capacity, on top of the replicas asked for.
  std::vector<int64_t> waiting(clusters.size(), 0);
  for (size_t i = 0; i < clusters.size(); ++i) {
    if (placement.overflow[i] <= 0) continue;
    out.overflow[clusters[i].name] = placement.overflow[i];
  }
  auto can_wait = [&](const ClusterView& c) {
    return c.full && !c.create_failed && !c.draining;
  };
  for (size_t i = 0; i < clusters.size() && unplaced > 0; ++i) {
    if (placement.overflow[i] <= 0 || !can_wait(clusters[i])) continue;
    waiting[i] = std::min(placement.overflow[i], unplaced);
    unplaced -= waiting[i];
  }
  for (size_t i = 0; i < clusters.size(); ++i) {
    const ClusterView& c = clusters[i];
    if (placement.overflow[i] <= 0 || !can_wait(c) || !c.probing || c.cordoned) continue;
    waiting[i] = std::max(waiting[i], std::min(placement.overflow[i], kProbeReplicas));
  }
  for (size_t i = 0; i < clusters.size(); ++i) {
    out.replicas[clusters[i].name] = placement.replicas[i] + waiting[i];
  }
  return out;
}

}  // namespace flotilla::federation
