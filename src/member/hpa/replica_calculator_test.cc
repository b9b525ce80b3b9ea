// The simulated metrics and Kubernetes' replica calculation over them.
#include "member/hpa/replica_calculator.h"

#include <gtest/gtest.h>

namespace flotilla::member::hpa {
namespace {

// A pod named `name` with one container per entry of `requests` ("" = no
// cpu request), in `phase`, Ready or not.
runtime::ObjectPtr Pod(const std::string& name, std::vector<std::string> requests,
                       const std::string& phase = "Running", bool ready = true) {
  json::array containers;
  for (size_t i = 0; i < requests.size(); ++i) {
    json::object c{{"name", "c" + std::to_string(i)}, {"image", "nginx"}};
    if (!requests[i].empty()) c["resources"] = {{"requests", {{"cpu", requests[i]}}}};
    containers.push_back(std::move(c));
  }
  json::object status{{"phase", phase}};
  if (phase == "Running") {
    status["conditions"] = json::array{{{"type", "Ready"}, {"status", ready ? "True" : "False"}}};
  }
  return std::make_shared<const json::object>(
      json::object{{"metadata", {{"name", name}}},
                   {"spec", {{"containers", std::move(containers)}}},
                   {"status", std::move(status)}});
}

std::vector<runtime::ObjectPtr> ReadyPods(int n, const std::string& request = "500m") {
  std::vector<runtime::ObjectPtr> out;
  for (int i = 0; i < n; ++i) out.push_back(Pod("p" + std::to_string(i), {request}));
  return out;
}

StatusOr<ResourceProposal> Cpu(int64_t current, int64_t target_percent,
                               const std::vector<runtime::ObjectPtr>& pods, int64_t demand) {
  return ResourceReplicas(current, {target_percent, std::nullopt}, "cpu",
                          SimulatedMetrics(pods, "cpu", demand), pods);
}

TEST(SimulatedMetricsTest, DemandIsSpreadOverReadyPodsOnly) {
  std::vector<runtime::ObjectPtr> pods = {Pod("a", {"1"}), Pod("b", {"1"}),
                                          Pod("c", {"1"}, "Running", false), Pod("d", {"1"}),
                                          Pod("e", {"1"}, "Pending")};
  PodMetrics m = SimulatedMetrics(pods, "cpu", 1000);
  EXPECT_EQ(m, (PodMetrics{{"a", 334}, {"b", 333}, {"c", 0}, {"d", 333}}));
  EXPECT_EQ(SimulatedMetrics(pods, "memory", 1000),
            (PodMetrics{{"a", 0}, {"b", 0}, {"c", 0}, {"d", 0}}));
  EXPECT_TRUE(SimulatedMetrics(pods, "ephemeral-storage", 1000).empty());
}

TEST(ReplicaCalculatorTest, CeilOfCurrentTimesRatio) {
  // 2 pods of 500m at 1700m demand: 170% of request against 50% -> ceil(2 * 3.4) = 7.
  auto p = Cpu(2, 50, ReadyPods(2), 1700);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->replicas, 7);
  EXPECT_EQ(p->utilization, 170);
  EXPECT_EQ(p->average_milli, 850);
}

TEST(ReplicaCalculatorTest, NoChangeWithinTolerance) {
  // 4 pods of 500m at 1080m: 54% against 50% (ratio 1.08).
  auto p = Cpu(4, 50, ReadyPods(4), 1080);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->replicas, 4);
  EXPECT_EQ(p->utilization, 54);
  // 56% (ratio 1.12) is outside: ceil(4 * 1.12) = 5.
  EXPECT_EQ(Cpu(4, 50, ReadyPods(4), 1120)->replicas, 5);
}

TEST(ReplicaCalculatorTest, ScalesDown) {
  // 10 pods of 500m at 500m: 10% against 50% -> ceil(10 * 0.2) = 2.
  EXPECT_EQ(Cpu(10, 50, ReadyPods(10), 500)->replicas, 2);
  EXPECT_EQ(Cpu(10, 50, ReadyPods(10), 0)->replicas, 0);
}

TEST(ReplicaCalculatorTest, UnreadyPodsCountAsIdleOnScaleUp) {
  // 2 ready + 2 unready pods, 1000m over the ready ones: 100% vs 50%
  // (ratio 2); with the unready at 0: 50% over 4 pods (ratio 1.0) -> no change.
  std::vector<runtime::ObjectPtr> pods = ReadyPods(2);
  pods.push_back(Pod("u1", {"500m"}, "Pending"));
  pods.push_back(Pod("u2", {"500m"}, "Running", false));
  auto p = Cpu(4, 50, pods, 1000);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->replicas, 4);
  EXPECT_EQ(p->utilization, 100);
  // At 3000m: 300% / 2 pods; with unready: 150% over 4 -> ceil(3 * 4) = 12.
  EXPECT_EQ(Cpu(4, 50, pods, 3000)->replicas, 12);
}

TEST(ReplicaCalculatorTest, AverageValueTarget) {
  // 3 pods at 1500m: 500m each against 200m -> ceil(3 * 2.5) = 8; no requests needed.
  std::vector<runtime::ObjectPtr> pods = {Pod("a", {""}), Pod("b", {""}), Pod("c", {""})};
  auto p =
      ResourceReplicas(3, {std::nullopt, 200}, "cpu", SimulatedMetrics(pods, "cpu", 1500), pods);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->replicas, 8);
  EXPECT_EQ(p->average_milli, 500);
  EXPECT_FALSE(p->utilization.has_value());
}

TEST(ReplicaCalculatorTest, ErrorsCarryKubernetesMessages) {
  std::vector<runtime::ObjectPtr> missing = {Pod("web-1", {"500m", ""})};
  EXPECT_EQ(Cpu(1, 50, missing, 100).status().message(),
            "missing request for cpu in container c1 of Pod web-1");
  std::vector<runtime::ObjectPtr> pending = {Pod("a", {"1"}, "Pending")};
  EXPECT_EQ(
      Cpu(1, 50, pending, 100).status().message(),
      "unable to get metrics for resource cpu: no metrics returned from resource metrics API");
  std::vector<runtime::ObjectPtr> unready = {Pod("a", {"1"}, "Running", false)};
  EXPECT_EQ(Cpu(1, 50, unready, 100).status().message(),
            "did not receive metrics for targeted pods (pods might be unready)");
  EXPECT_EQ(ResourceReplicas(1, {50, std::nullopt}, "cpu", {{"x", 1}}, {}).status().message(),
            "no pods returned by selector while calculating replica count");
}

}  // namespace
}  // namespace flotilla::member::hpa
