// A literal transcription of the original federation planner, for tests and
// benchmarks only: maps keyed by cluster name, the weight sum recomputed and
// the open list rebuilt every round, exactly the steps of the issue. The
// property tests check that PlanPlacement gives the same placements wherever
// the original's behaviour is kept (everything but a scale-down with
// rebalance off); the benchmark times it next to PlanPlacement.
//
// It differs from the Go original only where the original overflowed int64
// (huge weights): it computes shares in 128 bits.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "planner/planner.h"

namespace flotilla::planner::testing {

PlanResult ReferencePlan(int64_t replicas, const std::vector<std::string>& available_clusters,
                         const ReplicaCounts& current_replicas_by_cluster,
                         const ReplicaCounts& estimated_capacity_by_cluster,
                         std::string_view workload_key, const Preferences& prefs);

}  // namespace flotilla::planner::testing
