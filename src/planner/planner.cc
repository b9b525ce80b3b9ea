#include "planner/planner.h"

#include <absl/container/fixed_array.h>

#include <algorithm>

#include "planner/internal.h"

namespace flotilla::planner {
namespace {

using internal::kNoLimit;
using internal::Scratch;
using internal::Slot;
using u128 = unsigned __int128;

int64_t NonNegative(int64_t v) { return v < 0 ? 0 : v; }

// Step 1: the clusters that a preferences entry matches, in planning order.
// Every field of every slot is set here.
void FillSlots(std::span<const ClusterState> clusters, std::span<const internal::Ordered> order,
               std::span<Slot> slots) {
  for (size_t k = 0; k < order.size(); ++k) {
    const ClusterPreferences& p = *order[k].prefs;
    const ClusterState& c = clusters[order[k].index];
    Slot& s = slots[k];
    s.weight = NonNegative(p.weight);
    s.max_replicas = p.max_replicas ? NonNegative(*p.max_replicas) : kNoLimit;
    s.min_replicas = std::min(NonNegative(p.min_replicas), s.max_replicas);
    s.capacity = c.estimated_capacity ? NonNegative(*c.estimated_capacity) : kNoLimit;
    s.current = NonNegative(c.current_replicas);
    s.plan = s.min_given = s.wanted = s.kept = s.prealloc = s.overflow = 0;
    s.index = order[k].index;
    s.limit = Limit::kNone;
  }
}

// Step 2: minReplicas, in order, while replicas and capacity last.
void GiveMinimum(std::span<Slot> slots, int64_t& remaining) {
  for (Slot& s : slots) {
    int64_t give = std::min({s.min_replicas, remaining, s.capacity});
    if (give < s.min_replicas) {
      s.limit = s.capacity < s.min_replicas && s.capacity <= remaining ? Limit::kCapacity
                                                                       : Limit::kReplicas;
    }
    s.plan = s.min_given = give;
    remaining -= give;
  }
}

// How many running replicas beyond its minReplicas placement a cluster may
// keep: bounded by its maxReplicas and capacity.
int64_t Wanted(Slot& s) {
  if (s.current <= s.plan) return 0;
  int64_t target = std::min({s.current, s.max_replicas, s.capacity});
  if (target < s.current) {
    s.limit = s.capacity < s.max_replicas ? Limit::kCapacity : Limit::kMaxReplicas;
  }
  return std::max<int64_t>(target - s.plan, 0);
}

// Fewer replicas than the available clusters run.
bool IsScaleDown(std::span<const ClusterState> clusters, int64_t replicas) {
  u128 running = 0;
  for (const ClusterState& c : clusters)
    running += static_cast<u128>(NonNegative(c.current_replicas));
  return static_cast<u128>(replicas) < running;
}

// Step 3 (rebalance false): running replicas stay. When they do not all fit
// in a scale-down, the fair trim decides; otherwise, as in the original, each
// cluster in order keeps what still fits.
void KeepRunning(std::span<const ClusterState> clusters, std::span<Slot> slots, int64_t replicas,
                 int64_t& remaining) {
  u128 wanted_total = 0;
  for (Slot& s : slots) {
    s.wanted = Wanted(s);
    wanted_total += static_cast<u128>(s.wanted);
  }
  if (wanted_total > static_cast<u128>(remaining) && IsScaleDown(clusters, replicas)) {
    internal::KeepFairlyOnScaleDown(slots, replicas, remaining);
    remaining = 0;
    return;
  }
  for (Slot& s : slots) {
    s.kept = std::min(s.wanted, remaining);
    if (s.kept < s.wanted) s.limit = Limit::kReplicas;
    s.plan += s.kept;
    s.prealloc = s.kept;
    remaining -= s.kept;
  }
}

// ceil(dist * weight / weight_sum), exact for every int64 input.
// REQUIRES: 0 < weight <= weight_sum, dist >= 0.
int64_t CeilShare(int64_t dist, int64_t weight, u128 weight_sum) {
  uint64_t product;
  if (weight_sum <= UINT64_MAX &&
      !__builtin_mul_overflow(static_cast<uint64_t>(dist), static_cast<uint64_t>(weight),
                              &product)) {
    uint64_t sum = static_cast<uint64_t>(weight_sum);
    return static_cast<int64_t>(product / sum + (product % sum != 0));
  }
  u128 wide = static_cast<u128>(dist) * static_cast<u128>(weight);
  return static_cast<int64_t>(wide / weight_sum + (wide % weight_sum != 0));
}

// One round of step 4 over the open clusters; closes the ones capped by
// maxReplicas or capacity. Returns whether any cluster changed.
bool DistributeRound(std::span<Slot> slots, size_t& open_count, std::span<uint32_t> open,
                     u128& weight_sum, int64_t& remaining) {
  const int64_t dist = remaining;
  const u128 round_sum = weight_sum;
  bool modified = false;
  size_t still_open = 0;
  // Slots are sorted by weight, so equal shares come in runs: one division
  // per run.
  int64_t share_weight = 0, share = 0;
  for (uint32_t pos : open.first(open_count)) {
    Slot& s = slots[pos];
    if (s.weight != share_weight) {
      share_weight = s.weight;
      share = CeilShare(dist, s.weight, round_sum);
    }
    int64_t extra = std::min(share, remaining);
    int64_t used = std::min(extra, s.prealloc);
    s.prealloc -= used;
    extra -= used;
    modified |= used > 0;
    int64_t total = s.plan + extra;
    bool full = false;
    if (total > s.max_replicas) {
      total = s.max_replicas;
      full = true;
      s.limit = Limit::kMaxReplicas;
    }
    if (total > s.capacity) {
      s.overflow = total - s.capacity;
      total = s.capacity;
      full = true;
      s.limit = Limit::kCapacity;
    }
    remaining -= total - s.plan;
    modified |= total > s.plan;
    s.plan = total;
    if (full) {
      weight_sum -= static_cast<u128>(s.weight);
    } else {
      open[still_open++] = pos;
    }
  }
  open_count = still_open;
  return modified;
}

// Step 4: rounds until nothing remains, nothing changes or no weight is left.
// Clusters of weight 0 never receive anything here, so they are left out.
void DistributeByWeight(std::span<Slot> slots, int64_t& remaining) {
  absl::FixedArray<uint32_t, 64> open(slots.size());
  size_t open_count = 0;
  u128 weight_sum = 0;
  for (uint32_t pos = 0; pos < slots.size(); ++pos) {
    if (slots[pos].weight == 0) continue;
    open[open_count++] = pos;
    weight_sum += static_cast<u128>(slots[pos].weight);
  }
  bool modified = true;
  while (modified && remaining > 0 && weight_sum > 0) {
    modified = DistributeRound(slots, open_count, open, weight_sum, remaining);
  }
}

void Explain(std::span<const ClusterState> clusters, std::span<const Slot> slots,
             const Preferences& prefs, std::vector<Explanation>& out) {
  out.assign(clusters.size(), Explanation{});
  for (const Slot& s : slots) {
    Explanation& e = out[s.index];
    auto own = prefs.clusters.find(clusters[s.index].name);
    e.preference = own != prefs.clusters.end() ? std::string_view(own->first) : kAnyCluster;
    e.min = s.min_given;
    e.kept = s.kept;
    e.weighted = s.plan - s.min_given - s.kept;
    e.limit = s.limit;
  }
}

}  // namespace

uint32_t TieBreakHash(std::string_view cluster, std::string_view workload_key) {
  return internal::TieBreak(cluster, workload_key);
}

Placement PlanPlacement(int64_t replicas, std::span<const ClusterState> clusters,
                        std::string_view workload_key, const Preferences& prefs,
                        std::vector<Explanation>* explanations) {
  replicas = NonNegative(replicas);
  // Uninitialized (both are trivial); PlanningOrder and FillSlots set every
  // field they keep.
  absl::FixedArray<internal::Ordered, 16> order(clusters.size());
  const size_t matched = internal::PlanningOrder(clusters, workload_key, prefs, order);
  absl::FixedArray<Slot, 16> slots(matched);
  FillSlots(clusters, std::span(order).first(matched), slots);
  int64_t remaining = replicas;
  GiveMinimum(slots, remaining);
  if (!prefs.rebalance) KeepRunning(clusters, slots, replicas, remaining);
  DistributeByWeight(slots, remaining);

  Placement out;
  out.replicas.assign(clusters.size(), 0);
  out.overflow.assign(clusters.size(), 0);
  for (const Slot& s : slots) {
    out.replicas[s.index] = s.plan;
    // Without rebalance, overflow is only what could not be placed anywhere.
    out.overflow[s.index] = prefs.rebalance ? s.overflow : std::min(s.overflow, remaining);
  }
  if (explanations != nullptr) Explain(clusters, slots, prefs, *explanations);
  return out;
}

PlanResult Plan(int64_t replicas, const std::vector<std::string>& available_clusters,
                const ReplicaCounts& current_replicas_by_cluster,
                const ReplicaCounts& estimated_capacity_by_cluster, std::string_view workload_key,
                const Preferences& prefs) {
  // The output map also removes repeated names; each cluster keeps a pointer
  // to its count in it (std::map entries do not move).
  PlanResult out;
  std::vector<ClusterState> clusters;
  std::vector<int64_t*> counts;
  clusters.reserve(available_clusters.size());
  counts.reserve(available_clusters.size());
  for (const std::string& name : available_clusters) {
    auto [entry, inserted] = out.plan.emplace(name, 0);
    if (!inserted) continue;
    ClusterState c{.name = name};
    if (auto it = current_replicas_by_cluster.find(name); it != current_replicas_by_cluster.end()) {
      c.current_replicas = it->second;
    }
    if (auto it = estimated_capacity_by_cluster.find(name);
        it != estimated_capacity_by_cluster.end()) {
      c.estimated_capacity = it->second;
    }
    clusters.push_back(c);
    counts.push_back(&entry->second);
  }
  Placement placement = PlanPlacement(replicas, clusters, workload_key, prefs);
  for (size_t i = 0; i < clusters.size(); ++i) {
    *counts[i] = placement.replicas[i];
    if (placement.overflow[i] > 0) out.overflow.emplace(clusters[i].name, placement.overflow[i]);
  }
  return out;
}

}  // namespace flotilla::planner
