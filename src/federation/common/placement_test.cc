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

TEST(PlacementTest, AFullClusterRunsItsCapacityAndTheRestGoesElsewhere) {
  // Seed scenario 1, "C has capacity for 6": C runs 6 of its 17.
  std::vector<ClusterView> views = Abc();
  views[0].placed = 16;
  views[1].placed = 17;
  views[2] = {.name = "C", .placed = 17, .scheduled = 6, .pending = 11, .full = true, .capacity = 6};
  Targets t = ComputeTargets(50, views, "default/web", Even(true));
  EXPECT_EQ(t.replicas["A"], 22);
  EXPECT_EQ(t.replicas["B"], 22);
  EXPECT_EQ(t.capacity["C"], 6);
  EXPECT_EQ(t.replicas["C"], 6);
  EXPECT_EQ(Sum(t.replicas), 50);
  EXPECT_GT(t.overflow["C"], 0);

  // While the member scales C down to 6, and once it has: the same
  // placement (no oscillation), still 50.
  views[0].placed = 22;
  views[1].placed = 22;
  views[2] = {.name = "C", .placed = 6, .scheduled = 6, .pending = 11, .full = true, .capacity = 6};
  EXPECT_EQ(ComputeTargets(50, views, "default/web", Even(true)).replicas, t.replicas);
  views[2] = {.name = "C", .placed = 6, .scheduled = 6, .full = true, .capacity = 6};
  EXPECT_EQ(ComputeTargets(50, views, "default/web", Even(true)).replicas, t.replicas);

  // A probe: C gets two more, the others keep theirs (52 while it lasts).
  views[2].probing = true;
  Targets probe = ComputeTargets(50, views, "default/web", Even(true));
  EXPECT_EQ(probe.replicas["A"], 22);
  EXPECT_EQ(probe.replicas["B"], 22);
  EXPECT_EQ(probe.replicas["C"], 6 + kProbeReplicas);

  // The probe's pods ran (room appeared): C is unbounded again.
  views[2] = {.name = "C", .placed = 8, .scheduled = 8};
  Targets room = ComputeTargets(50, views, "default/web", Even(true));
  EXPECT_FALSE(room.capacity.contains("C"));
  EXPECT_GE(room.replicas["C"], 16);
  EXPECT_EQ(Sum(room.replicas), 50);
}

// The README's walk-through (issue 36): 50 replicas over on-prem,
// cloud-east and cloud-west, which runs 8; then on-prem drained. Every
// finished placement sums to 50, with and without rebalance.
TEST(PlacementTest, OverflowPlacesExactlyTheReplicasAskedFor) {
  for (bool rebalance : {true, false}) {
    SCOPED_TRACE(rebalance ? "rebalance" : "no rebalance");
    std::vector<ClusterView> views = {
        {.name = "on-prem", .placed = 17, .current = 17, .scheduled = 17},
        {.name = "cloud-east", .placed = 17, .current = 17, .scheduled = 17},
        {.name = "cloud-west",
         .placed = 16,
         .current = 16,
         .scheduled = 8,
         .pending = 8,
         .unscheduled = 8,
         .full = true,
         .capacity = 8}};
    Targets t = ComputeTargets(50, views, "default/spread", Even(rebalance));
    EXPECT_EQ(Sum(t.replicas), 50);
    EXPECT_EQ(t.replicas["cloud-west"], 8);
    EXPECT_EQ(t.replicas["on-prem"] + t.replicas["cloud-east"], 42);

    views[0].draining = true;
    Targets drained = ComputeTargets(50, views, "default/spread", Even(rebalance));
    EXPECT_EQ(Sum(drained.replicas), 50);
    EXPECT_EQ(drained.replicas["on-prem"], 0);
    EXPECT_EQ(drained.replicas["cloud-west"], 8);
    EXPECT_EQ(drained.replicas["cloud-east"], 42);
  }
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
