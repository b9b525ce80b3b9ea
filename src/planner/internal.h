// Internal to the planner: the per-cluster working state and the steps that
// live in their own files (order.cc, scale_down.cc). Not part of the
// planner's interface.
#pragma once

#include <absl/container/inlined_vector.h>

#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "planner/planner.h"

namespace flotilla::planner::internal {

inline constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();

// Working arrays of one plan: on the stack for small plans, which are the
// common case and where a heap allocation costs as much as the planning.
template <typename T>
using Scratch = absl::InlinedVector<T, 16>;

// One cluster that a preferences entry matches, in planning order. Trivial,
// so that a plan's slots need no initialization before they are filled.
struct Slot {
  int64_t weight;
  int64_t min_replicas;
  int64_t max_replicas;  // kNoLimit when unbounded
  int64_t capacity;      // kNoLimit when unknown
  int64_t current;
  int64_t plan;       // replicas placed so far
  int64_t min_given;  // replicas placed for minReplicas
  int64_t wanted;     // running replicas beyond min_given it could keep
  int64_t kept;       // of those, the ones kept (rebalance false)
  int64_t prealloc;   // kept replicas the weighted rounds have not yet counted
  int64_t overflow;
  uint32_t index;  // position in the caller's cluster list
  Limit limit;
};

// A cluster that a preferences entry matches, with its planning-order keys.
// Trivial, like Slot: PlanningOrder sets every field.
struct Ordered {
  uint64_t sort_key;  // weight and hash packed, when weights fit in 32 bits
  uint32_t hash;      // TieBreak(name, workload key)
  uint32_t index;     // position in the caller's cluster list
  const ClusterPreferences* prefs;
};

// Step 1: writes the clusters that a preferences entry matches to the front
// of `order`, in planning order (weight descending, then TieBreak ascending,
// then name for hash collisions), and returns how many there are.
// REQUIRES: order.size() >= clusters.size().
size_t PlanningOrder(std::span<const ClusterState> clusters, std::string_view workload_key,
                     const Preferences& prefs, std::span<Ordered> order);

// 32-bit FNV-1 over the cluster name's bytes, then the workload key's.
uint32_t TieBreak(std::string_view cluster, std::string_view workload_key);

// Rebalance off and a scale-down whose running replicas do not all fit: sets
// every slot's `kept` (<= `wanted`) so that they sum to `remaining`, taking
// replicas away from the clusters furthest above their weighted share of
// `replicas` first, one replica at a time (ties: the cluster later in
// planning order loses first). Adds `kept` to `plan` and `prealloc`.
// REQUIRES: 0 <= remaining < sum of wanted.
void KeepFairlyOnScaleDown(std::span<Slot> slots, int64_t replicas, int64_t remaining);

}  // namespace flotilla::planner::internal
