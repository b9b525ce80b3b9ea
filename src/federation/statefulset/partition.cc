// Where a federated StatefulSet's replicas go (partition.h).
#include "federation/statefulset/partition.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace flotilla::federation::statefulset {
namespace {

struct Slot {
  const StatefulCluster* cluster;
  planner::ClusterPreferences prefs;  // weight 0 and max 0 when none applies
  int64_t share = 0;

  int64_t Max() const { return prefs.max_replicas.value_or(std::numeric_limits<int64_t>::max()); }
  // Replicas per unit of weight, as a fraction compared by cross products.
  bool FewerPerWeightThan(const Slot& o) const {
    // (share + 1) / weight < (o.share + 1) / o.weight
    return (share + 1) * o.prefs.weight < (o.share + 1) * prefs.weight;
  }
};

void Grow(std::vector<Slot>& slots, int64_t need) {
  for (Slot& s : slots) {  // minReplicas first, in name order
    if (!s.cluster->ready || s.cluster->cordoned) continue;
    int64_t add =
        std::clamp<int64_t>(s.prefs.min_replicas - s.share, 0, std::min(need, s.Max() - s.share));
    s.share += add;
    need -= add;
  }
  while (need > 0) {
    Slot* best = nullptr;
    for (Slot& s : slots) {
      if (!s.cluster->ready || s.cluster->cordoned || s.prefs.weight <= 0 || s.share >= s.Max()) {
        continue;
      }
      if (best == nullptr || s.FewerPerWeightThan(*best)) best = &s;
    }
    if (best == nullptr) return;  // no cluster can take more
    ++best->share;
    --need;
  }
}

// How far above its share `s` stands, for choosing what shrinks first;
// larger goes first.
bool MoreAboveThan(const Slot& a, const Slot& b) {
  auto rank = [](const Slot& s) { return s.share > s.Max() ? 2 : s.share > s.prefs.min_replicas; };
  if (rank(a) != rank(b)) return rank(a) > rank(b);
  // share / weight, a weight of 0 counting as infinite.
  if ((a.prefs.weight == 0) != (b.prefs.weight == 0)) return a.prefs.weight == 0;
  if (a.prefs.weight != 0 && a.share * b.prefs.weight != b.share * a.prefs.weight) {
    return a.share * b.prefs.weight > b.share * a.prefs.weight;
  }
  if (a.share != b.share) return a.share > b.share;
  return a.cluster->name > b.cluster->name;
}

void Shrink(std::vector<Slot>& slots, int64_t excess) {
  while (excess > 0) {
    Slot* worst = nullptr;
    for (Slot& s : slots) {
      if (!s.cluster->ready || s.share == 0) continue;
      if (worst == nullptr || MoreAboveThan(s, *worst)) worst = &s;
    }
    if (worst == nullptr) return;  // what is left is in clusters out of reach
    --worst->share;
    --excess;
  }
}

}  // namespace

planner::ReplicaCounts Partition(int64_t replicas, std::span<const StatefulCluster> clusters,
                                 const planner::Preferences& prefs) {
  std::vector<Slot> slots;
  for (const StatefulCluster& c : clusters) {
    const planner::ClusterPreferences* p = prefs.For(c.name);
    Slot s{.cluster = &c,
           .prefs = p != nullptr ? *p : planner::ClusterPreferences{.max_replicas = 0},
           .share = std::max<int64_t>(c.current, 0)};
    slots.push_back(s);
  }
  std::sort(slots.begin(), slots.end(),
            [](const Slot& a, const Slot& b) { return a.cluster->name < b.cluster->name; });
  int64_t held = 0;
  for (const Slot& s : slots) held += s.share;
  int64_t want = std::max<int64_t>(replicas, 0);
  if (want > held) Grow(slots, want - held);
  if (want < held) Shrink(slots, held - want);
  planner::ReplicaCounts out;
  for (const Slot& s : slots) out[s.cluster->name] = s.share;
  return out;
}

}  // namespace flotilla::federation::statefulset
