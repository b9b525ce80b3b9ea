// The fix for the original planner's scale-down defect (issue 31816 of the
// original federation): with rebalance off, the original let clusters keep
// their running replicas greedily in planning order, so a scale-down could
// empty a cluster that was below its share (A=10 B=70 scaled to 50 gave A=0
// B=50). Here replicas are taken away one at a time from the cluster whose
// level is furthest above its weighted share, which gives A=10 B=40.
//
// Taking them one at a time would cost O(excess * log clusters); instead the
// removal keys are counted against a threshold found by binary search, so the
// cost is O(clusters * 128 + candidates * log candidates).
#include <algorithm>
#include <vector>

#include "planner/internal.h"

namespace flotilla::planner::internal {
namespace {

using i128 = __int128;
using u128 = unsigned __int128;

// A cluster's weighted share of the replicas, replicas * weight / weight_sum,
// as whole part and remainder (over weight_sum).
struct Share {
  i128 whole = 0;
  u128 remainder = 0;
};

// The replica that would bring slot s from level m to m - 1 has the removal
// key (m - share.whole, -share.remainder): the larger key is removed first.
// Counts the replicas of `s` whose key's whole part is at least g.
i128 CountAtLeast(const Slot& s, const Share& share, i128 g) {
  const i128 lowest = static_cast<i128>(s.plan) + 1;
  const i128 highest = static_cast<i128>(s.plan) + s.wanted;
  const i128 from = std::max(lowest, g + share.whole);
  return from > highest ? 0 : highest - from + 1;
}

i128 CountAll(std::span<const Slot> slots, const std::vector<Share>& shares, i128 g) {
  i128 n = 0;
  for (size_t i = 0; i < slots.size(); ++i) n += CountAtLeast(slots[i], shares[i], g);
  return n;
}

std::vector<Share> Shares(std::span<const Slot> slots, int64_t replicas) {
  u128 weight_sum = 0;
  for (const Slot& s : slots) weight_sum += static_cast<u128>(s.weight);
  std::vector<Share> shares(slots.size());
  if (weight_sum == 0) return shares;  // no weights: every share is 0
  for (size_t i = 0; i < slots.size(); ++i) {
    u128 product = static_cast<u128>(replicas) * static_cast<u128>(slots[i].weight);
    shares[i].whole = static_cast<i128>(product / weight_sum);
    shares[i].remainder = product % weight_sum;
  }
  return shares;
}

// The largest g with at least `excess` removal keys whose whole part is >= g.
i128 Threshold(std::span<const Slot> slots, const std::vector<Share>& shares, i128 excess) {
  i128 lo = 0, hi = 0;  // CountAll(lo) >= excess > CountAll(hi)
  bool first_seen = false;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].wanted == 0) continue;
    i128 first = static_cast<i128>(slots[i].plan) + 1 - shares[i].whole;
    i128 last = static_cast<i128>(slots[i].plan) + slots[i].wanted - shares[i].whole;
    if (!first_seen || first < lo) lo = first;
    if (!first_seen || last + 1 > hi) hi = last + 1;
    first_seen = true;
  }
  while (hi - lo > 1) {
    i128 mid = lo + (hi - lo) / 2;
    if (CountAll(slots, shares, mid) >= excess) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace

void KeepFairlyOnScaleDown(std::span<Slot> slots, int64_t replicas, int64_t remaining) {
  i128 wanted_total = 0;
  for (const Slot& s : slots) wanted_total += s.wanted;
  const i128 excess = wanted_total - remaining;
  const std::vector<Share> shares = Shares(slots, replicas);
  const i128 g = Threshold(slots, shares, excess);

  // Every key above the threshold goes; of the keys at it, the ones with the
  // smallest remainder (furthest above the share), later clusters first.
  i128 left = excess;
  std::vector<uint32_t> at_threshold;
  for (uint32_t i = 0; i < slots.size(); ++i) {
    i128 above = CountAtLeast(slots[i], shares[i], g + 1);
    slots[i].kept = slots[i].wanted - static_cast<int64_t>(above);
    left -= above;
    if (CountAtLeast(slots[i], shares[i], g) > above) at_threshold.push_back(i);
  }
  std::sort(at_threshold.begin(), at_threshold.end(), [&](uint32_t a, uint32_t b) {
    if (shares[a].remainder != shares[b].remainder) {
      return shares[a].remainder < shares[b].remainder;
    }
    return a > b;
  });
  for (size_t k = 0; k < at_threshold.size() && left > 0; ++k, --left) {
    --slots[at_threshold[k]].kept;
  }
  for (Slot& s : slots) {
    if (s.kept < s.wanted) s.limit = Limit::kScaleDown;
    s.plan += s.kept;
    s.prealloc = s.kept;
  }
}

}  // namespace flotilla::planner::internal
