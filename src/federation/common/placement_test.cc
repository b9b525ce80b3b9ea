#include "federation/common/placement.h"

#include <gtest/gtest.h>

#include <vector>

namespace flotilla::federation {
namespace {

planner::Preferences Even(bool rebalance) {
  planner::Preferences p = planner::Preferences::Default();
  p.rebalance = rebalance;
  return p;
}

std::vector<ClusterView> Abc() { return {{.name = "A"}, {.name = "B"}, {.name = "C"}}; }

int64_t Sum(const planner::ReplicaCounts& counts) {
  int64_t s = 0;
  for (const auto& [name, n] : counts) s += n;
  return s;
}

TEST(PlacementTest, WithoutWaitingPodsEveryClusterIsUnbounded) {
  Targets t = ComputeTargets(50, Abc(), "default/web", Even(true));
  EXPECT_EQ(Sum(t.replicas), 50);
  for (const auto& [name, n] : t.replicas) EXPECT_TRUE(n == 16 || n == 17) << name;
  EXPECT_TRUE(t.capacity.empty());
  EXPECT_TRUE(t.overflow.empty());
}

TEST(PlacementTest, PodsWaitingTooLongCapTheClusterAndLeaveTwoProbes) {
  // Seed scenario 1, "C has capacity for 6": C runs 6 of its 17.
  std::vector<ClusterView> views = Abc();
  views[0].placed = 16;
  views[1].placed = 17;
  views[2] = {.name = "C", .placed = 17, .scheduled = 6, .pending = 11, .full = true};
  Targets t = ComputeTargets(50, views, "default/web", Even(true));
  EXPECT_EQ(t.replicas["A"], 22);
  EXPECT_EQ(t.replicas["B"], 22);
  EXPECT_EQ(t.capacity["C"], 6);
  EXPECT_EQ(t.replicas["C"], 6 + kProbeReplicas);
  EXPECT_GT(t.overflow["C"], 0);

  // While the member scales C down to 8, and once it has, its two probes
  // still wait: the same placement (no oscillation).
  views[0].placed = 22;
  views[1].placed = 22;
  views[2] = {.name = "C", .placed = 8, .scheduled = 6, .pending = 11, .full = true};
  EXPECT_EQ(ComputeTargets(50, views, "default/web", Even(true)).replicas, t.replicas);
  views[2] = {.name = "C", .placed = 8, .scheduled = 6, .pending = 2, .full = true};
  EXPECT_EQ(ComputeTargets(50, views, "default/web", Even(true)).replicas, t.replicas);

  // A probe got scheduled (room appeared): C is unbounded again.
  views[2] = {.name = "C", .placed = 8, .scheduled = 7, .pending = 1, .full = false};
  Targets room = ComputeTargets(50, views, "default/web", Even(true));
  EXPECT_FALSE(room.capacity.contains("C"));
  EXPECT_GE(room.replicas["C"], 16);
}

TEST(PlacementTest, PendingPodsWithinTheThresholdDoNotCap) {
  std::vector<ClusterView> views = Abc();
  views[2] = {.name = "C", .placed = 17, .pending = 11, .full = false};
  Targets t = ComputeTargets(50, views, "default/web", Even(true));
  EXPECT_FALSE(t.capacity.contains("C"));
  EXPECT_GE(t.replicas["C"], 16);
}

TEST(PlacementTest, ARejectedCreateSendsEverythingElsewhereWithoutProbes) {
  std::vector<ClusterView> views = Abc();
  views[1].create_failed = true;
  Targets t = ComputeTargets(50, views, "default/web", Even(true));
  EXPECT_EQ(t.replicas["B"], 0);
  EXPECT_EQ(t.replicas["A"] + t.replicas["C"], 50);
  EXPECT_EQ(t.capacity["B"], 0);
}

TEST(PlacementTest, WithoutRebalanceRunningReplicasStay) {
  // Seed scenario 7: A already runs 20.
  std::vector<ClusterView> views = Abc();
  views[0].placed = 20;
  views[0].current = 20;
  Targets t = ComputeTargets(50, views, "default/web", Even(false));
  EXPECT_EQ(t.replicas["A"], 20);
  EXPECT_EQ(t.replicas["B"], 15);
  EXPECT_EQ(t.replicas["C"], 15);
}

TEST(PlacementTest, APlacementIsItsOwnFixedPoint) {
  // Seed scenario 5: on-prem first. Placed, then planned again with what
  // was placed as current, nothing moves (with or without rebalance).
  planner::Preferences prefs;
  prefs.clusters["A"] = {.weight = 1000000};
  prefs.clusters["B"] = {.weight = 1};
  prefs.clusters["C"] = {.weight = 1};
  for (bool rebalance : {false, true}) {
    prefs.rebalance = rebalance;
    Targets first = ComputeTargets(40, Abc(), "default/web", prefs);
    EXPECT_EQ(first.replicas["A"], 40);
    std::vector<ClusterView> views = Abc();
    for (ClusterView& v : views) v.current = v.placed = first.replicas[v.name];
    EXPECT_EQ(ComputeTargets(40, views, "default/web", prefs).replicas, first.replicas);
  }
}

TEST(PlacementTest, ReplicasNoClusterCanTakeWaitWhereTheyWere) {
  // One cluster, full with 1 of 6 running: all 6 stay, 5 pending.
  std::vector<ClusterView> one = {
      {.name = "A", .placed = 6, .current = 6, .scheduled = 1, .pending = 5, .full = true}};
  EXPECT_EQ(ComputeTargets(6, one, "default/web", Even(true)).replicas["A"], 6);
  // Two full clusters: what neither takes goes back to them in order.
  std::vector<ClusterView> two = {
      {.name = "A", .placed = 10, .scheduled = 4, .pending = 6, .full = true},
      {.name = "B", .placed = 10, .scheduled = 3, .pending = 7, .full = true}};
  Targets t = ComputeTargets(20, two, "default/web", Even(true));
  EXPECT_EQ(t.replicas["A"] + t.replicas["B"], 20);
  EXPECT_GE(t.replicas["A"], 4 + kProbeReplicas);
  EXPECT_GE(t.replicas["B"], 3 + kProbeReplicas);
}

TEST(PlacementTest, EstimatedCapacity) {
  EXPECT_EQ(EstimatedCapacity({.placed = 5, .pending = 9, .full = true}), 0);
  EXPECT_EQ(EstimatedCapacity({.placed = 5, .scheduled = 3, .pending = 2, .full = true}), 3);
  EXPECT_EQ(EstimatedCapacity({.placed = 5, .scheduled = 3, .pending = 2}), std::nullopt);
  EXPECT_EQ(EstimatedCapacity({.placed = 5, .create_failed = true}), 0);
  // Cordoned: what it holds, or less.
  EXPECT_EQ(EstimatedCapacity({.placed = 5, .current = 4, .cordoned = true}), 4);
  EXPECT_EQ(EstimatedCapacity({.current = 4, .scheduled = 3, .full = true, .cordoned = true}), 3);
  EXPECT_EQ(EstimatedCapacity({.cordoned = true}), 0);
}

TEST(PlacementTest, ACordonedClusterGetsNothingNewAndLosesNothing) {
  std::vector<ClusterView> views = Abc();
  views[1].cordoned = true;
  // A new workload: nothing there.
  Targets fresh = ComputeTargets(30, views, "default/web", Even(true));
  EXPECT_EQ(fresh.replicas["A"], 15);
  EXPECT_EQ(fresh.replicas["B"], 0);
  EXPECT_EQ(fresh.replicas["C"], 15);
  // One that runs there keeps its replicas; a scale-up goes elsewhere.
  for (ClusterView& v : views) v.current = v.placed = 10;
  Targets grown = ComputeTargets(45, views, "default/web", Even(true));
  EXPECT_EQ(grown.replicas["B"], 10);
  EXPECT_EQ(grown.replicas["A"] + grown.replicas["C"], 35);
  EXPECT_EQ(grown.overflow["B"], 5);  // its even share (15) beyond what it holds
}

}  // namespace
}  // namespace flotilla::federation
