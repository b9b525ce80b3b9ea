#include "planner/reference_planner.h"

#include <algorithm>
#include <optional>

namespace flotilla::planner::testing {
namespace {

struct Named {
  std::string name;
  uint32_t hash;
  ClusterPreferences prefs;
};

std::optional<int64_t> Lookup(const ReplicaCounts& counts, const std::string& name) {
  auto it = counts.find(name);
  if (it == counts.end()) return std::nullopt;
  return it->second;
}

int64_t CeilShare(int64_t dist, int64_t weight, __int128 weight_sum) {
  __int128 product = static_cast<__int128>(dist) * weight;
  return static_cast<int64_t>((product + weight_sum - 1) / weight_sum);
}

}  // namespace

PlanResult ReferencePlan(int64_t replicas, const std::vector<std::string>& available_clusters,
                         const ReplicaCounts& current, const ReplicaCounts& capacity,
                         std::string_view workload_key, const Preferences& prefs) {
  PlanResult out;
  std::vector<Named> named;
  for (const std::string& cluster : available_clusters) {
    const ClusterPreferences* p = prefs.For(cluster);
    if (p == nullptr) {
      out.plan[cluster] = 0;
    } else {
      named.push_back({cluster, TieBreakHash(cluster, workload_key), *p});
    }
  }
  std::sort(named.begin(), named.end(), [](const Named& a, const Named& b) {
    if (a.prefs.weight != b.prefs.weight) return a.prefs.weight > b.prefs.weight;
    if (a.hash != b.hash) return a.hash < b.hash;
    return a.name < b.name;
  });

  int64_t remaining = replicas;
  for (const Named& n : named) {
    int64_t min = std::min(n.prefs.min_replicas, remaining);
    if (auto cap = Lookup(capacity, n.name)) min = std::min(min, *cap);
    remaining -= min;
    out.plan[n.name] = min;
  }

  ReplicaCounts preallocated;
  if (!prefs.rebalance) {
    for (const Named& n : named) {
      int64_t planned = out.plan[n.name];
      auto count = Lookup(current, n.name);
      if (!count || *count <= planned) continue;
      int64_t target = *count;
      if (n.prefs.max_replicas) target = std::min(*n.prefs.max_replicas, target);
      if (auto cap = Lookup(capacity, n.name)) target = std::min(*cap, target);
      int64_t extra = std::max<int64_t>(std::min(target - planned, remaining), 0);
      remaining -= extra;
      preallocated[n.name] = extra;
      out.plan[n.name] = extra + planned;
    }
  }

  ReplicaCounts overflow;
  bool modified = true;
  while (modified && remaining > 0) {
    modified = false;
    __int128 weight_sum = 0;
    for (const Named& n : named) weight_sum += n.prefs.weight;
    if (weight_sum == 0) break;
    std::vector<Named> still_open;
    const int64_t dist = remaining;
    for (const Named& n : named) {
      int64_t start = out.plan[n.name];
      int64_t extra = std::min(CeilShare(dist, n.prefs.weight, weight_sum), remaining);
      int64_t prealloc = preallocated[n.name];
      int64_t used = std::min(extra, prealloc);
      preallocated[n.name] = prealloc - used;
      extra -= used;
      if (used > 0) modified = true;
      int64_t total = start + extra;
      bool full = false;
      if (n.prefs.max_replicas && total > *n.prefs.max_replicas) {
        total = *n.prefs.max_replicas;
        full = true;
      }
      if (auto cap = Lookup(capacity, n.name); cap && total > *cap) {
        overflow[n.name] = total - *cap;
        total = *cap;
        full = true;
      }
      if (!full) still_open.push_back(n);
      remaining -= total - start;
      out.plan[n.name] = total;
      if (total > start) modified = true;
    }
    named = std::move(still_open);
  }

  for (const auto& [name, value] : overflow) {
    int64_t kept = prefs.rebalance ? value : std::min(value, remaining);
    if (kept > 0) out.overflow[name] = kept;
  }
  return out;
}

}  // namespace flotilla::planner::testing
