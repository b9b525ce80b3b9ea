// Properties of PlanPlacement over seeded random inputs: limits hold, the sum
// is what fits, the result is deterministic and independent of the order of
// the cluster list, single replicas spread, the output equals the literal
// transcription of the original wherever the original's behaviour is kept,
// and with rebalance off a scale-down never moves replicas beyond what
// minReplicas, maxReplicas and capacity force.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "planner/planner.h"
#include "planner/reference_planner.h"

namespace flotilla::planner {
namespace {

constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();

struct Input {
  int64_t replicas = 0;
  std::vector<std::string> names;
  ReplicaCounts current;
  ReplicaCounts capacity;
  std::string key;
  Preferences prefs;

  std::vector<ClusterState> States() const {
    std::vector<ClusterState> out;
    for (const std::string& n : names) {
      ClusterState s{.name = n};
      if (current.contains(n)) s.current_replicas = current.at(n);
      if (capacity.contains(n)) s.estimated_capacity = capacity.at(n);
      out.push_back(s);
    }
    return out;
  }
  int64_t Capacity(const std::string& n) const {
    return capacity.contains(n) ? capacity.at(n) : kNoLimit;
  }
  int64_t Current(const std::string& n) const { return current.contains(n) ? current.at(n) : 0; }
  int64_t Running() const {
    int64_t sum = 0;
    for (const std::string& n : names) sum += Current(n);
    return sum;
  }
};

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool Chance(int percent) { return Uniform(1, 100) <= percent; }

  ClusterPreferences Cluster() {
    ClusterPreferences c;
    c.min_replicas = Chance(30) ? Uniform(0, 10) : 0;
    if (Chance(40)) c.max_replicas = c.min_replicas + Uniform(0, 30);
    c.weight = Chance(15) ? 0 : Uniform(1, Chance(10) ? 1000000 : 5);
    return c;
  }

  Input Make(int max_clusters) {
    Input in;
    int n = static_cast<int>(Uniform(0, max_clusters));
    for (int i = 0; i < n; ++i) in.names.push_back("c" + std::to_string(Uniform(0, 3 * n)));
    std::sort(in.names.begin(), in.names.end());
    in.names.erase(std::unique(in.names.begin(), in.names.end()), in.names.end());
    std::shuffle(in.names.begin(), in.names.end(), rng_);
    in.replicas = Chance(5) ? Uniform(0, 500000) : Uniform(0, 200);
    in.key = "ns/w" + std::to_string(Uniform(0, 1000));
    in.prefs.rebalance = Chance(40);
    if (Chance(85)) in.prefs.clusters["*"] = Cluster();
    for (const std::string& name : in.names) {
      if (Chance(30)) in.prefs.clusters[name] = Cluster();
      if (Chance(50)) in.current[name] = Uniform(0, 60);
      if (Chance(30)) in.capacity[name] = Uniform(0, 40);
    }
    return in;
  }

 private:
  std::mt19937_64 rng_;
};

// What a cluster may hold: min(maxReplicas, capacity); 0 without an entry.
int64_t Limit(const Input& in, const std::string& name) {
  const ClusterPreferences* p = in.prefs.For(name);
  if (p == nullptr) return 0;
  return std::min(p->max_replicas.value_or(kNoLimit), in.Capacity(name));
}

void CheckLimitsAndSum(const Input& in, const Placement& p) {
  int64_t sum = 0;
  bool all_weighted_full = true;
  for (size_t i = 0; i < in.names.size(); ++i) {
    const std::string& name = in.names[i];
    const ClusterPreferences* pref = in.prefs.For(name);
    EXPECT_GE(p.replicas[i], 0) << name;
    EXPECT_LE(p.replicas[i], Limit(in, name)) << name;
    EXPECT_GE(p.overflow[i], 0) << name;
    if (p.overflow[i] > 0) {
      EXPECT_EQ(p.replicas[i], in.Capacity(name)) << name;
    }
    if (pref != nullptr && pref->weight > 0 && p.replicas[i] < Limit(in, name)) {
      all_weighted_full = false;
    }
    sum += p.replicas[i];
  }
  EXPECT_LE(sum, in.replicas);
  // Replicas are left over only when every cluster that takes weighted
  // replicas is full.
  if (sum < in.replicas) {
    EXPECT_TRUE(all_weighted_full);
  }
}

// With rebalance off and a scale-down: no cluster gains beyond its
// minReplicas while another loses running replicas it could have kept.
void CheckNoMovesOnScaleDown(const Input& in, const Placement& p,
                             const std::vector<Explanation>& why) {
  bool gained_freely = false, lost_freely = false;
  for (size_t i = 0; i < in.names.size(); ++i) {
    const std::string& name = in.names[i];
    int64_t current = in.Current(name);
    if (p.replicas[i] > current && p.replicas[i] > why[i].min) gained_freely = true;
    if (p.replicas[i] < std::min(current, Limit(in, name))) lost_freely = true;
  }
  EXPECT_FALSE(gained_freely && lost_freely);
}

// The fair trim: a cluster that lost running replicas it could have kept was
// at least as far above its weighted share as every cluster that kept some
// beyond its minReplicas.
void CheckFurthestAboveLosesFirst(const Input& in, const Placement& p,
                                  const std::vector<Explanation>& why) {
  __int128 weight_sum = 0;
  std::vector<int64_t> weights;
  for (const std::string& name : in.names) {
    const ClusterPreferences* pref = in.prefs.For(name);
    weights.push_back(pref == nullptr ? 0 : pref->weight);
    if (pref != nullptr) weight_sum += pref->weight;
  }
  __int128 w = weight_sum == 0 ? 1 : weight_sum;
  auto above = [&](size_t i, int64_t level) {  // (level - share) * weight_sum
    return static_cast<__int128>(level) * w - static_cast<__int128>(in.replicas) * weights[i];
  };
  for (size_t i = 0; i < in.names.size(); ++i) {
    if (p.replicas[i] >= std::min(in.Current(in.names[i]), Limit(in, in.names[i]))) continue;
    for (size_t j = 0; j < in.names.size(); ++j) {
      if (p.replicas[j] <= why[j].min) continue;
      EXPECT_GE(above(i, p.replicas[i] + 1), above(j, p.replicas[j]))
          << in.names[i] << " lost while " << in.names[j] << " stayed further above its share";
    }
  }
}

TEST(PlannerProperties, RandomInputs) {
  Generator gen(20240611);
  int scale_downs = 0, fair_trims = 0, compared = 0;
  for (int round = 0; round < 4000; ++round) {
    Input in = gen.Make(round % 10 == 0 ? 60 : 8);
    SCOPED_TRACE("round " + std::to_string(round));
    std::vector<ClusterState> states = in.States();
    std::vector<Explanation> why;
    Placement p = PlanPlacement(in.replicas, states, in.key, in.prefs, &why);
    CheckLimitsAndSum(in, p);

    Placement again = PlanPlacement(in.replicas, states, in.key, in.prefs);
    EXPECT_EQ(again.replicas, p.replicas);
    EXPECT_EQ(again.overflow, p.overflow);

    PlanResult maps = Plan(in.replicas, in.names, in.current, in.capacity, in.key, in.prefs);
    std::reverse(states.begin(), states.end());
    Placement reversed = PlanPlacement(in.replicas, states, in.key, in.prefs);
    for (size_t i = 0; i < in.names.size(); ++i) {
      EXPECT_EQ(reversed.replicas[in.names.size() - 1 - i], p.replicas[i]);
      EXPECT_EQ(maps.plan[in.names[i]], p.replicas[i]);
    }

    bool scale_down = !in.prefs.rebalance && in.replicas < in.Running();
    if (scale_down) {
      ++scale_downs;
      CheckNoMovesOnScaleDown(in, p, why);
      CheckFurthestAboveLosesFirst(in, p, why);
      for (const Explanation& e : why) fair_trims += e.limit == Limit::kScaleDown;
      continue;
    }
    ++compared;
    PlanResult want =
        testing::ReferencePlan(in.replicas, in.names, in.current, in.capacity, in.key, in.prefs);
    EXPECT_EQ(maps.plan, want.plan);
    EXPECT_EQ(maps.overflow, want.overflow);
  }
  // The generator reaches every path often enough for the checks to mean
  // something.
  EXPECT_GT(scale_downs, 400);
  EXPECT_GT(fair_trims, 200);
  EXPECT_GT(compared, 2000);
}

std::map<std::string, int> SingleReplicaHits(const std::string& prefix, const std::string& suffix) {
  std::vector<std::string> names = {"us-east", "us-west", "eu-west", "asia-east", "sa-east"};
  std::map<std::string, int> hits;
  for (int w = 0; w < 1000; ++w) {
    PlanResult r =
        Plan(1, names, {}, {}, prefix + std::to_string(w) + suffix, Preferences::Default());
    for (const auto& [name, count] : r.plan) hits[name] += static_cast<int>(count);
  }
  return hits;
}

TEST(PlannerProperties, SingleReplicaWorkloadsSpread) {
  // Keys that differ before their last bytes spread evenly (200 each on
  // average).
  std::map<std::string, int> hits = SingleReplicaHits("team-", "/web");
  ASSERT_EQ(hits.size(), 5u);
  for (const auto& [name, count] : hits) {
    EXPECT_GT(count, 150) << name;
    EXPECT_LT(count, 250) << name;
  }
  // FNV-1 mixes a key's last bytes weakly (the final byte is xored in after
  // the last multiplication), so keys that differ only at the end spread
  // unevenly. Kept for the original's placements; they still reach every
  // cluster and none takes half.
  hits = SingleReplicaHits("default/app-", "");
  for (const auto& [name, count] : hits) {
    EXPECT_GT(count, 0) << name;
    EXPECT_LT(count, 500) << name;
  }
}

TEST(PlannerProperties, LargeClusterCountsMatchTheOriginal) {
  Generator gen(7);
  for (int n : {100, 1000}) {
    Input in;
    for (int i = 0; i < n; ++i) in.names.push_back("cluster-" + std::to_string(i));
    in.replicas = 20 * n;
    in.prefs = Preferences::Default();
    in.prefs.rebalance = true;
    for (int i = 0; i < n; ++i) {
      if (i % 4 == 0) in.prefs.clusters[in.names[i]] = {.max_replicas = 25, .weight = 1 + i % 3};
      if (i % 5 == 0) in.capacity[in.names[i]] = gen.Uniform(0, 30);
    }
    PlanResult got = Plan(in.replicas, in.names, {}, in.capacity, "default/web", in.prefs);
    PlanResult want =
        testing::ReferencePlan(in.replicas, in.names, {}, in.capacity, "default/web", in.prefs);
    EXPECT_EQ(got.plan, want.plan) << n << " clusters";
    EXPECT_EQ(got.overflow, want.overflow) << n << " clusters";
  }
}

}  // namespace
}  // namespace flotilla::planner
