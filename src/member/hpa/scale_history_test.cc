// Stabilization and rate limits, with and without spec.behavior.
#include "member/hpa/scale_history.h"

#include <gtest/gtest.h>

namespace flotilla::member::hpa {
namespace {

using std::chrono::seconds;
const TimePoint kT0 = TimePoint(seconds(1700000000));
const Duration kWindow = seconds(300);

Behavior Defaults() { return *ParseBehavior(json::object{{"behavior", json::object()}}, kWindow); }

TEST(ScaleHistoryTest, BehaviorDefaultsAreKubernetes) {
  EXPECT_FALSE(ParseBehavior(json::object(), kWindow).has_value());
  Behavior b = Defaults();
  EXPECT_EQ(b.scale_up.stabilization_window_seconds, 0);
  EXPECT_EQ(b.scale_up.select_policy, "Max");
  ASSERT_EQ(b.scale_up.policies.size(), 2u);
  EXPECT_EQ(b.scale_down.stabilization_window_seconds, 300);
  ASSERT_EQ(b.scale_down.policies.size(), 1u);
  EXPECT_EQ(b.scale_down.policies[0].type, "Percent");
  EXPECT_EQ(b.scale_down.policies[0].value, 100);
}

TEST(ScaleHistoryTest, ScaleDownWaitsForTheWindow) {
  ScaleHistory h;
  h.RecordInitial(5, kT0);
  Normalized n = h.Normalize(std::nullopt, kWindow, 5, 2, 1, 10, kT0 + seconds(15));
  EXPECT_EQ(n.replicas, 5);
  EXPECT_EQ(n.able_reason, "ScaleDownStabilized");
  n = h.Normalize(std::nullopt, kWindow, 5, 2, 1, 10, kT0 + seconds(299));
  EXPECT_EQ(n.replicas, 5);
  n = h.Normalize(std::nullopt, kWindow, 5, 2, 1, 10, kT0 + seconds(316));
  EXPECT_EQ(n.replicas, 2);
  EXPECT_EQ(n.able_reason, "ReadyForNewScale");
  EXPECT_FALSE(n.limited);
  EXPECT_EQ(n.limited_reason, "DesiredWithinRange");
}

TEST(ScaleHistoryTest, LimitsWithoutBehavior) {
  ScaleHistory h;
  Normalized n = h.Normalize(std::nullopt, kWindow, 2, 20, 1, 10, kT0);
  EXPECT_EQ(n.replicas, 4);
  EXPECT_TRUE(n.limited);
  EXPECT_EQ(n.limited_reason, "ScaleUpLimit");
  n = h.Normalize(std::nullopt, kWindow, 8, 20, 1, 10, kT0);
  EXPECT_EQ(n.replicas, 10);
  EXPECT_EQ(n.limited_reason, "TooManyReplicas");
  EXPECT_EQ(n.limited_message, "the desired replica count is more than the maximum replica count");
  ScaleHistory fresh;
  n = fresh.Normalize(std::nullopt, kWindow, 3, 0, 2, 10, kT0);
  EXPECT_EQ(n.replicas, 2);
  EXPECT_EQ(n.limited_reason, "TooFewReplicas");
}

TEST(ScaleHistoryTest, ScaleUpRateFollowsThePoliciesPerPeriod) {
  std::optional<Behavior> b = Defaults();
  ScaleHistory h;
  h.RecordInitial(2, kT0);
  // Max(2 + 4 pods, 2 * 200%) = 6.
  Normalized n = h.Normalize(b, kWindow, 2, 20, 1, 100, kT0);
  EXPECT_EQ(n.replicas, 6);
  EXPECT_EQ(n.limited_reason, "ScaleUpLimit");
  h.RecordScale(b, 2, 6, kT0);
  // Within the same 15 s period the period started at 2: no more room.
  EXPECT_EQ(h.Normalize(b, kWindow, 6, 20, 1, 100, kT0 + seconds(5)).replicas, 6);
  // A new period starts at 6: max(10, 12) = 12.
  EXPECT_EQ(h.Normalize(b, kWindow, 6, 20, 1, 100, kT0 + seconds(16)).replicas, 12);
}

TEST(ScaleHistoryTest, ScaleDownPoliciesAndSelectPolicy) {
  json::object spec{
      {"behavior",
       {{"scaleDown",
         {{"stabilizationWindowSeconds", 0},
          {"policies", json::array{{{"type", "Pods"}, {"value", 1}, {"periodSeconds", 60}}}}}}}}};
  std::optional<Behavior> b = ParseBehavior(spec, kWindow);
  ScaleHistory h;
  Normalized n = h.Normalize(b, kWindow, 10, 2, 1, 20, kT0);
  EXPECT_EQ(n.replicas, 9);
  EXPECT_EQ(n.limited_reason, "ScaleDownLimit");
  h.RecordScale(b, 10, 9, kT0);
  EXPECT_EQ(h.Normalize(b, kWindow, 9, 2, 1, 20, kT0 + seconds(30)).replicas, 9);
  EXPECT_EQ(h.Normalize(b, kWindow, 9, 2, 1, 20, kT0 + seconds(61)).replicas, 8);

  b->scale_down.select_policy = "Disabled";
  ScaleHistory disabled;
  EXPECT_EQ(disabled.Normalize(b, kWindow, 10, 2, 1, 20, kT0).replicas, 10);
}

TEST(ScaleHistoryTest, ScaleUpStabilizationWindow) {
  std::optional<Behavior> b = Defaults();
  b->scale_up.stabilization_window_seconds = 60;
  ScaleHistory h;
  h.RecordInitial(2, kT0);
  Normalized n = h.Normalize(b, kWindow, 2, 3, 1, 10, kT0 + seconds(30));
  EXPECT_EQ(n.replicas, 2);  // the initial 2 is still in the window
  EXPECT_EQ(n.able_reason, "ScaleUpStabilized");
  n = h.Normalize(b, kWindow, 2, 8, 1, 10, kT0 + seconds(61));
  EXPECT_EQ(n.replicas, 3);  // the lowest of the last 60 s: 3
}

}  // namespace
}  // namespace flotilla::member::hpa
