// The shares of a federated HPA's min and max (partition.h).
#include "federation/hpa/partition.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <tuple>

namespace flotilla::federation::hpa {
namespace {

constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

// A chosen cluster while a check works on it.
struct Slot {
  const HpaCluster* c = nullptr;
  Bounds have;  // its shares as the steps leave them
  Bounds base;
  int64_t upper = kUnbounded;  // its preferred maxReplicas
  bool frozen = false;

  int64_t Runs() const { return std::max(c->current, int64_t{0}); }
  bool AtCeiling() const {
    return have.max > 0 && c->current == have.max && c->desired == have.max;
  }
  bool AtFloor() const { return c->current == have.min && c->desired == have.min; }
  bool LowLoad(double threshold) const { return c->load && *c->load < threshold; }
};

// Adds `total` to `shares`, smallest first (ties: the first in order),
// never above `upper` unless every share is there (then *over is set).
void Fill(int64_t total, std::vector<int64_t>& shares, const std::vector<int64_t>& upper,
          bool* over) {
  while (total > 0) {
    std::vector<size_t> open;
    for (size_t i = 0; i < shares.size(); ++i) {
      if (shares[i] < upper[i]) open.push_back(i);
    }
    bool capped = !open.empty();
    if (!capped) {
      if (over != nullptr) *over = true;
      for (size_t i = 0; i < shares.size(); ++i) open.push_back(i);
    }
    int64_t low = kUnbounded;
    for (size_t i : open) low = std::min(low, shares[i]);
    std::vector<size_t> lowest;
    int64_t next = kUnbounded;  // how far the lowest may rise together
    for (size_t i : open) {
      if (shares[i] == low) {
        lowest.push_back(i);
        if (capped) next = std::min(next, upper[i]);
      } else {
        next = std::min(next, shares[i]);
      }
    }
    int64_t k = static_cast<int64_t>(lowest.size());
    int64_t step = next == kUnbounded ? total / k : std::min(next - low, total / k);
    if (step == 0) {
      // Fewer left than the lowest: one each, in order.
      for (size_t i = 0; i < lowest.size() && total > 0; ++i, --total) ++shares[lowest[i]];
      continue;
    }
    for (size_t i : lowest) shares[i] += step;
    total -= step * k;
  }
}

// Spreads `total`: each its `lower` in order while it lasts, then Fill.
std::vector<int64_t> Spread(int64_t total, const std::vector<int64_t>& lower,
                            const std::vector<int64_t>& upper, bool* over) {
  std::vector<int64_t> shares(lower.size(), 0);
  for (size_t i = 0; i < lower.size() && total > 0; ++i) {
    shares[i] = std::min(lower[i], total);
    total -= shares[i];
  }
  Fill(total, shares, upper, over);
  return shares;
}

// Takes `amount` from `field` of the slots, each at most `room(slot)`,
// the most room first (ties: the last in order). Returns what it took.
template <typename Room>
int64_t Take(std::vector<Slot>& slots, int64_t Bounds::*field, int64_t amount, Room room) {
  int64_t taken = 0;
  while (taken < amount) {
    Slot* best = nullptr;
    int64_t best_room = 0;
    for (Slot& s : slots) {
      int64_t r = room(s);
      if (r > 0 && r >= best_room) {
        best = &s;
        best_room = r;
      }
    }
    if (best == nullptr) break;
    int64_t t = std::min(best_room, amount - taken);
    best->have.*field -= t;
    taken += t;
  }
  return taken;
}

// Step 1: the sums.
void FixSums(int64_t min, int64_t max, std::vector<Slot>& slots, bool* over) {
  auto fix = [&](int64_t Bounds::*field, int64_t total, auto floor_of) {
    int64_t sum = 0;
    for (const Slot& s : slots) sum += s.have.*field;
    if (sum < total) {
      int64_t deficit = total - sum;
      // First back to the default shares, the furthest below first.
      while (deficit > 0) {
        Slot* best = nullptr;
        for (Slot& s : slots) {
          int64_t gap = s.base.*field - s.have.*field;
          if (gap > 0 && (best == nullptr || gap > best->base.*field - best->have.*field)) {
            best = &s;
          }
        }
        if (best == nullptr) break;
        int64_t give = std::min(best->base.*field - best->have.*field, deficit);
        best->have.*field += give;
        deficit -= give;
      }
      std::vector<int64_t> shares, upper;
      for (const Slot& s : slots) {
        shares.push_back(s.have.*field);
        upper.push_back(s.upper);
      }
      Fill(deficit, shares, upper, over);
      for (size_t i = 0; i < slots.size(); ++i) slots[i].have.*field = shares[i];
    } else if (sum > total) {
      int64_t surplus = sum - total;
      // Above both the default share and what is used, then above what is
      // used, then down to the floor.
      surplus -= Take(slots, field, surplus, [&](const Slot& s) {
        return s.have.*field - std::max(s.base.*field, floor_of(s, true));
      });
      surplus -= Take(slots, field, surplus,
                      [&](const Slot& s) { return s.have.*field - floor_of(s, true); });
      Take(slots, field, surplus,
           [&](const Slot& s) { return s.have.*field - floor_of(s, false); });
    }
  };
  fix(&Bounds::min, min,
      [](const Slot& s, bool used) { return used ? std::max<int64_t>(1, s.c->desired) : 1; });
  for (Slot& s : slots) s.have.max = std::max(s.have.max, s.have.min);
  fix(&Bounds::max, max, [](const Slot& s, bool used) {
    return used ? std::max({s.have.min, s.Runs(), s.c->desired}) : s.have.min;
  });
}

std::string Percent(double load) { return std::to_string(std::lround(load * 100)) + "%"; }

// Moves up to `want` of `field` to `to` from the donors' `spare`, the most
// spare first. Records the move.
int64_t Transfer(std::vector<Slot>& slots, Slot& to, int64_t Bounds::*field, int64_t want,
                 const std::function<int64_t(const Slot&)>& spare, bool min, std::string reason,
                 std::vector<Move>& moves) {
  Move m{.min = min, .to = to.c->name, .reason = std::move(reason)};
  while (m.amount < want) {
    Slot* best = nullptr;
    int64_t best_spare = 0;
    for (Slot& s : slots) {
      if (&s == &to || s.frozen) continue;
      int64_t sp = spare(s);
      if (sp > best_spare) {
        best = &s;
        best_spare = sp;
      }
    }
    if (best == nullptr) break;
    int64_t t = std::min(best_spare, want - m.amount);
    best->have.*field -= t;
    m.from.emplace_back(best->c->name, t);
    m.amount += t;
  }
  if (m.amount == 0) return 0;
  to.have.*field += m.amount;
  moves.push_back(std::move(m));
  return moves.back().amount;
}

// After a step: the clusters it changed are left alone by the next ones.
void FreezeChanged(std::vector<Slot>& slots, const std::vector<Bounds>& before) {
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].have != before[i]) slots[i].frozen = true;
  }
}

std::vector<Bounds> Snapshot(const std::vector<Slot>& slots) {
  std::vector<Bounds> out;
  for (const Slot& s : slots) out.push_back(s.have);
  return out;
}

// What a cluster at its ceiling asks for beyond it (0: nothing).
int64_t Need(const Slot& s) {
  if (!s.AtCeiling() || !s.c->load || *s.c->load <= 1 + kTolerance) return 0;
  auto wanted = static_cast<int64_t>(std::ceil(static_cast<double>(s.c->current) * *s.c->load));
  return std::max<int64_t>(wanted - s.have.max, 1);
}

}  // namespace

std::vector<std::string> Partition::Changed(std::span<const HpaCluster> clusters) const {
  std::vector<std::string> out;
  for (const auto& [name, b] : shares) {
    auto it = std::find_if(clusters.begin(), clusters.end(),
                           [&name = name](const HpaCluster& c) { return c.name == name; });
    if (it == clusters.end() || !it->held || *it->held != b) out.push_back(name);
  }
  return out;
}

Partition PartitionHpa(int64_t min, int64_t max, const planner::Preferences& prefs,
                       std::span<const HpaCluster> clusters, const PartitionOptions& options) {
  Partition out;
  min = std::max<int64_t>(min, 1);
  max = std::max(max, min);
  // The candidates, in the order of choice.
  std::vector<const HpaCluster*> order;
  for (const HpaCluster& c : clusters) {
    const planner::ClusterPreferences* p = prefs.For(c.name);
    if (p == nullptr || (p->max_replicas && *p->max_replicas == 0)) continue;
    if (c.cordoned && !c.held) continue;
    order.push_back(&c);
  }
  // Clusters that can run none of the target's pods give their shares up
  // to those that can.
  if (std::any_of(order.begin(), order.end(), [](const HpaCluster* c) { return !c->full; })) {
    std::erase_if(order, [](const HpaCluster* c) { return c->full; });
  }
  auto weight = [&](const HpaCluster* c) { return prefs.For(c->name)->weight; };
  std::stable_sort(order.begin(), order.end(), [&](const HpaCluster* a, const HpaCluster* b) {
    return std::make_tuple(!a->held.has_value(), !a->runs_target, -weight(a), a->name) <
           std::make_tuple(!b->held.has_value(), !b->runs_target, -weight(b), b->name);
  });
  order.resize(std::min<size_t>(order.size(), static_cast<size_t>(min)));
  if (order.empty()) return out;

  std::vector<Slot> slots;
  std::vector<int64_t> min_lower, upper;
  for (const HpaCluster* c : order) {
    const planner::ClusterPreferences* p = prefs.For(c->name);
    Slot s{.c = c, .frozen = c->frozen};
    if (p->max_replicas) s.upper = *p->max_replicas;
    if (c->cordoned) s.upper = std::min(s.upper, c->held->max);
    slots.push_back(s);
    min_lower.push_back(std::max<int64_t>(1, std::min(p->min_replicas, s.upper)));
    upper.push_back(s.upper);
    out.chosen.push_back(c->name);
  }
  std::vector<int64_t> mins = Spread(min, min_lower, upper, &out.over_preferences);
  std::vector<int64_t> maxes = Spread(max, mins, upper, &out.over_preferences);
  for (size_t i = 0; i < slots.size(); ++i) {
    slots[i].base = {mins[i], maxes[i]};
    Bounds& have = slots[i].have = slots[i].c->held.value_or(slots[i].base);
    have.min = std::max<int64_t>(have.min, 1);
    have.max = std::max(have.max, have.min);
  }
  FixSums(min, max, slots, &out.over_preferences);

  // Step 2: max to the load, the neediest first.
  std::vector<Bounds> before = Snapshot(slots);
  std::vector<Slot*> needy;
  for (Slot& s : slots) {
    if (!s.frozen && Need(s) > 0) needy.push_back(&s);
  }
  std::stable_sort(needy.begin(), needy.end(),
                   [](const Slot* a, const Slot* b) { return Need(*a) > Need(*b); });
  for (Slot* s : needy) {
    int64_t want = std::min(Need(*s), s->upper - s->have.max);
    if (want <= 0) continue;
    Transfer(
        slots, *s, &Bounds::max, want,
        [](const Slot& d) {
          return d.AtCeiling() ? 0 : d.have.max - std::max(d.have.min, d.Runs());
        },
        false,
        "its local HPA is at its ceiling of " + std::to_string(s->have.max) +
            " replicas with its busiest metric at " + Percent(*s->c->load) + " of its target",
        out.moves);
  }
  FreezeChanged(slots, before);
  // Step 3: max back, when no cluster at its ceiling wants more.
  before = Snapshot(slots);
  if (needy.empty()) {
    for (Slot& s : slots) {
      int64_t gap = s.base.max - s.have.max;
      if (s.frozen || gap <= 0) continue;
      Transfer(
          slots, s, &Bounds::max, gap,
          [](const Slot& d) {
            return d.have.max - std::max({d.base.max, d.have.min, d.Runs(), d.c->desired});
          },
          false, "back to its default share of " + std::to_string(s.base.max), out.moves);
    }
  }
  FreezeChanged(slots, before);
  // Step 4: min to the load.
  before = Snapshot(slots);
  auto idle_floor = [&](const Slot& d, int64_t keep) {
    return d.AtFloor() && d.LowLoad(options.min_transfer_load) ? d.have.min - keep : 0;
  };
  for (Slot& s : slots) {
    int64_t want = s.c->desired - s.have.min;
    if (s.frozen || want <= 0) continue;
    Transfer(
        slots, s, &Bounds::min, want, [&](const Slot& d) { return idle_floor(d, 1); }, true,
        "its local HPA wants " + std::to_string(s.c->desired) + " replicas, above its min of " +
            std::to_string(s.have.min),
        out.moves);
  }
  FreezeChanged(slots, before);
  // Step 5: min back.
  for (Slot& s : slots) {
    int64_t want = std::min(s.base.min, s.have.max) - s.have.min;
    if (s.frozen || want <= 0) continue;
    Transfer(
        slots, s, &Bounds::min, want,
        [&](const Slot& d) { return idle_floor(d, std::max<int64_t>(d.base.min, 1)); }, true,
        "back to its default share of " + std::to_string(s.base.min), out.moves);
  }
  for (const Slot& s : slots) {
    out.shares[s.c->name] = s.have;
    out.base[s.c->name] = s.base;
  }
  return out;
}

Partition Duplicate(Bounds bounds, std::span<const HpaCluster> clusters) {
  Partition out;
  for (const HpaCluster& c : clusters) {
    if (c.cordoned && !c.held) continue;
    out.chosen.push_back(c.name);
    out.shares[c.name] = bounds;
    out.base[c.name] = bounds;
  }
  return out;
}

std::string Describe(const std::map<std::string, Bounds>& shares) {
  std::string out;
  for (const auto& [name, b] : shares) {
    if (!out.empty()) out += ", ";
    out += name + "=" + std::to_string(b.min) + "/" + std::to_string(b.max);
  }
  return out.empty() ? "none" : out;
}

}  // namespace flotilla::federation::hpa
