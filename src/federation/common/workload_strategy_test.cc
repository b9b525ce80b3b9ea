// HoldMoves (workload_strategy.h): what a move keeps where it leaves.
#include "federation/common/workload_strategy.h"

#include <gtest/gtest.h>

#include "federation/common/member_copy.h"

namespace flotilla::federation {
namespace {

// A check of a workload over clusters a, b, c whose managed copies have
// `placed` replicas of which `available` are available; targets `target`.
struct Fixture {
  Check check;
  WorkloadPlan plan;
  Fixture(std::vector<int64_t> placed, std::vector<int64_t> available,
          std::vector<int64_t> target) {
    for (size_t i = 0; i < placed.size(); ++i) {
      std::string name(1, static_cast<char>('a' + i));
      json::object copy{{"metadata", json::object{{"name", "web"}}},
                        {"spec", json::object{{"replicas", placed[i]}}},
                        {"status", json::object{{"availableReplicas", available[i]}}}};
      MarkManaged(copy, json::object{{"metadata", json::object{{"name", "web"}}}});
      Copy c{.target = {.cluster = name}};
      c.existing = std::make_shared<const json::object>(std::move(copy));
      check.copies.push_back(std::move(c));
      plan.placement.targets.replicas[name] = target[i];
    }
  }
};

TEST(HoldMovesTest, AShrinkingCopyKeepsWhatTheOthersLackAvailable) {
  // b is drained (2 -> 0); a and c grow to 3 and run 2 each.
  Fixture f({3, 2, 3}, {2, 2, 2}, {3, 0, 3});
  HoldMoves(f.check, f.plan);
  EXPECT_EQ(f.plan.unavailable, 2);
  EXPECT_EQ(f.plan.held, (std::vector<int64_t>{0, 2, 0}));
  // a runs its 3: b keeps one.
  Fixture g({3, 2, 3}, {3, 2, 2}, {3, 0, 3});
  HoldMoves(g.check, g.plan);
  EXPECT_EQ(g.plan.held, (std::vector<int64_t>{0, 1, 0}));
  // Only available replicas are kept: b's 2 are not running.
  Fixture h({3, 2, 3}, {2, 0, 2}, {3, 0, 3});
  HoldMoves(h.check, h.plan);
  EXPECT_EQ(h.plan.held, (std::vector<int64_t>{0, 0, 0}));
}

TEST(HoldMovesTest, AFullClustersProbesAreNotWaitedFor) {
  // c is full: capacity 2, its target 3 holds a probe no node takes.
  Fixture f({4, 2, 3}, {4, 2, 2}, {4, 0, 3});
  f.plan.placement.targets.capacity["c"] = 2;
  HoldMoves(f.check, f.plan);
  EXPECT_EQ(f.plan.unavailable, 0);
  EXPECT_EQ(f.plan.held, (std::vector<int64_t>{0, 0, 0}));
  // Without the estimate the probe would hold one of b's forever.
  Fixture g({4, 2, 3}, {4, 2, 2}, {4, 0, 3});
  HoldMoves(g.check, g.plan);
  EXPECT_EQ(g.plan.held, (std::vector<int64_t>{0, 1, 0}));
}

TEST(HoldMovesTest, NothingIsHeldUnderAnHpaOrForACoupledApplication) {
  Fixture f({3, 2, 3}, {2, 2, 2}, {3, 0, 3});
  f.plan.coupled = CoupledPlacement{};
  HoldMoves(f.check, f.plan);
  EXPECT_EQ(f.plan.held, (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(f.plan.unavailable, 2);
}

}  // namespace
}  // namespace flotilla::federation
