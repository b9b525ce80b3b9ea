// Planner throughput: plans per second at 10 to 10,000 clusters
// (docs/benchmarks.md, "Planner"). Workload: 20 replicas per cluster, every
// cluster under "*" with weight 1, a quarter with their own weight and
// maxReplicas, a fifth with a capacity limit. PlanPlacement is the planner's
// own interface, Plan its map-shaped form (the original's signature), and
// ReferencePlan the original algorithm transcribed literally, as a baseline.
// Every benchmark first checks that all three give the same placement.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "planner/planner.h"
#include "planner/reference_planner.h"

namespace flotilla::planner {
namespace {

struct Workload {
  int64_t replicas = 0;
  std::vector<std::string> names;
  std::vector<ClusterState> states;
  ReplicaCounts capacity;
  Preferences prefs = Preferences::Default();
  std::string key = "default/web";
};

Workload MakeWorkload(int clusters) {
  std::mt19937_64 rng(42);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Workload w;
  w.replicas = 20LL * clusters;
  for (int i = 0; i < clusters; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "cluster-%05d", i);
    w.names.push_back(name);
    if (i % 4 == 0) {
      w.prefs.clusters[name] = {.max_replicas = uniform(10, 40), .weight = uniform(1, 4)};
    }
    if (i % 5 == 0) w.capacity[name] = uniform(0, 30);
  }
  for (const std::string& name : w.names) {
    ClusterState s{.name = name};
    if (auto it = w.capacity.find(name); it != w.capacity.end()) s.estimated_capacity = it->second;
    w.states.push_back(s);
  }
  return w;
}

bool SameAsReference(const Workload& w) {
  PlanResult want = testing::ReferencePlan(w.replicas, w.names, {}, w.capacity, w.key, w.prefs);
  PlanResult maps = Plan(w.replicas, w.names, {}, w.capacity, w.key, w.prefs);
  Placement p = PlanPlacement(w.replicas, w.states, w.key, w.prefs);
  for (size_t i = 0; i < w.names.size(); ++i) {
    if (want.plan[w.names[i]] != p.replicas[i]) return false;
    auto it = want.overflow.find(w.names[i]);
    if ((it == want.overflow.end() ? 0 : it->second) != p.overflow[i]) return false;
  }
  return maps.plan == want.plan && maps.overflow == want.overflow;
}

void Report(benchmark::State& state, const Workload& w) {
  state.counters["plans_per_second"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["clusters"] = static_cast<double>(w.names.size());
}

void BM_PlanPlacement(benchmark::State& state) {
  Workload w = MakeWorkload(static_cast<int>(state.range(0)));
  if (!SameAsReference(w)) state.SkipWithError("placement differs from the reference");
  for (auto _ : state) {
    Placement p = PlanPlacement(w.replicas, w.states, w.key, w.prefs);
    benchmark::DoNotOptimize(p);
  }
  Report(state, w);
}

void BM_Plan(benchmark::State& state) {
  Workload w = MakeWorkload(static_cast<int>(state.range(0)));
  if (!SameAsReference(w)) state.SkipWithError("placement differs from the reference");
  for (auto _ : state) {
    PlanResult r = Plan(w.replicas, w.names, {}, w.capacity, w.key, w.prefs);
    benchmark::DoNotOptimize(r);
  }
  Report(state, w);
}

void BM_ReferencePlan(benchmark::State& state) {
  Workload w = MakeWorkload(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    PlanResult r = testing::ReferencePlan(w.replicas, w.names, {}, w.capacity, w.key, w.prefs);
    benchmark::DoNotOptimize(r);
  }
  Report(state, w);
}

BENCHMARK(BM_PlanPlacement)->Arg(10)->Arg(100)->Arg(1000)->Arg(10000);
BENCHMARK(BM_Plan)->Arg(10)->Arg(100)->Arg(1000)->Arg(10000);
BENCHMARK(BM_ReferencePlan)->Arg(10)->Arg(100)->Arg(1000)->Arg(10000);

}  // namespace
}  // namespace flotilla::planner

BENCHMARK_MAIN();
