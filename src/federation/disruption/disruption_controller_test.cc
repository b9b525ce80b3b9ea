// The federated PodDisruptionBudget controller: how a budget is divided,
// how the copies' status adds up, and against real API servers
// (cluster::testing::ControllerTest, members c1, c2 and c3) a budget placed
// where its pods run and following them. The tests play each member's
// disruption controller where a test needs its status.
#include "federation/disruption/disruption_controller.h"

#include <gtest/gtest.h>

#include "api/annotations.h"
#include "api/federated.h"
#include "federation/cluster/controller_fixture.h"
#include "federation/common/member_copy.h"

namespace flotilla::federation::disruption {
namespace {

using client::kDeployments;
using client::kPodDisruptionBudgets;
using runtime::testing::Eventually;

json::object Parse(std::string_view text) {
  StatusOr<json::object> o = ParseJsonObject(text);
  EXPECT_TRUE(o.ok()) << text;
  return o.ok() ? *o : json::object{};
}

std::string Serialized(const std::map<std::string, json::object>& specs) {
  json::object out;
  for (const auto& [cluster, spec] : specs) out[cluster] = spec;
  return json::serialize(out);
}

TEST(DivideSpec, MinAvailableRoundsUpInProportion) {
  EXPECT_EQ(Serialized(DivideSpec(Parse(R"({"minAvailable":3})"), {{"a", 4}, {"b", 2}})),
            R"({"a":{"minAvailable":2},"b":{"minAvailable":1}})");
  // 5 of 9: ceil(5*3/9) = 2 each, 6 in all; the minimum holds in every part.
  EXPECT_EQ(Serialized(DivideSpec(Parse(R"({"minAvailable":5})"), {{"a", 3}, {"b", 3}, {"c", 3}})),
            R"({"a":{"minAvailable":2},"b":{"minAvailable":2},"c":{"minAvailable":2}})");
}

TEST(DivideSpec, MaxUnavailableSumsToTheWholeAllowance) {
  EXPECT_EQ(Serialized(DivideSpec(Parse(R"({"maxUnavailable":1})"), {{"a", 2}, {"b", 4}})),
            R"({"a":{"maxUnavailable":0},"b":{"maxUnavailable":1}})");
  EXPECT_EQ(
      Serialized(DivideSpec(Parse(R"({"maxUnavailable":2})"), {{"a", 1}, {"b", 1}, {"c", 1}})),
      R"({"a":{"maxUnavailable":1},"b":{"maxUnavailable":1},"c":{"maxUnavailable":0}})");
}

TEST(DivideSpec, PercentagesAndSelectorsAreKept) {
  EXPECT_EQ(Serialized(DivideSpec(
                Parse(R"({"minAvailable":"50%","selector":{"matchLabels":{"app":"web"}}})"),
                {{"a", 1}, {"b", 7}})),
            R"({"a":{"minAvailable":"50%","selector":{"matchLabels":{"app":"web"}}},)"
            R"("b":{"minAvailable":"50%","selector":{"matchLabels":{"app":"web"}}}})");
}

TEST(AggregateStatus, SumsTheCopiesAndSetsTheCondition) {
  json::object pdb = Parse(R"({"metadata":{"generation":3},"status":{"observedGeneration":2}})");
  json::object a = Parse(
      R"({"status":{"currentHealthy":4,"desiredHealthy":2,"expectedPods":4,"disruptionsAllowed":2,
          "disruptedPods":{"web-1":"2026-01-01T00:00:00Z"}}})");
  json::object b = Parse(
      R"({"status":{"currentHealthy":1,"desiredHealthy":1,"expectedPods":2,"disruptionsAllowed":0}})");
  TimePoint now;
  json::object waiting = AggregateStatus(pdb, {&a, &b, nullptr}, false, now);
  EXPECT_EQ(json::serialize(waiting.at("currentHealthy")), "5");
  EXPECT_EQ(json::serialize(waiting.at("desiredHealthy")), "3");
  EXPECT_EQ(json::serialize(waiting.at("expectedPods")), "6");
  EXPECT_EQ(json::serialize(waiting.at("disruptionsAllowed")), "2");
  EXPECT_EQ(json::serialize(waiting.at("observedGeneration")), "2");
  EXPECT_FALSE(waiting.contains("disruptedPods"));
  EXPECT_EQ(waiting.at("conditions").as_array()[0].as_object().at("reason"), "SufficientPods");
  json::object observed = AggregateStatus(pdb, {&b}, true, now);
  EXPECT_EQ(json::serialize(observed.at("observedGeneration")), "3");
  EXPECT_EQ(observed.at("conditions").as_array()[0].as_object().at("reason"), "InsufficientPods");
}

class DisruptionBudgetControllerTest : public cluster::testing::ControllerTest {
 protected:
  DisruptionBudgetControllerTest()
      : ControllerTest({DisruptionBudgetController::kName}, "default/web") {}
  std::string Name(int i) const override { return "c" + std::to_string(i + 1); }

  void Start() {
    WorkloadOptions options;
    options.member_change_delay = Duration::zero();
    StartWith([&] { Make<DisruptionBudgetController>(options); });
  }
  // A Deployment of `replicas` app=web pods in member i, as the federation's
  // Deployment controller would leave it there.
  void Deploy(int i, int replicas) {
    auto made = member_clients_[i]->Create(kDeployments, kNs,
                                           Parse(R"({"apiVersion":"apps/v1",
      "kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":)" +
                                                 std::to_string(replicas) + R"(,
      "selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},
      "spec":{"containers":[{"name":"c","image":"nginx"}]}}}})"));
    ASSERT_TRUE(made.ok()) << made.status().ToString();
  }
  json::object Fed() {
    auto s = fed_client_->Get(kPodDisruptionBudgets, kNs, "web");
    return s.ok() ? *s : json::object{};
  }
  json::object Local(int i) {
    auto s = member_clients_[i]->Get(kPodDisruptionBudgets, kNs, "web");
    return s.ok() ? *s : json::object{};
  }
  // Each member's minAvailable ("-" without a budget).
  std::vector<std::string> MinAvailable() {
    std::vector<std::string> out;
    for (int i = 0; i < 3; ++i) {
      json::object local = Local(i);
      const json::value* v = Find(local, "spec.minAvailable");
      out.push_back(local.empty() ? "-" : v == nullptr ? "?" : json::serialize(*v));
    }
    return out;
  }
  // Plays member i's disruption controller.
  void Report(int i, int64_t healthy, int64_t desired, int64_t expected) {
    ASSERT_TRUE(Eventually([&] {
      json::object s = Local(i);
      if (s.empty()) return false;
      s["status"] = json::object{{"observedGeneration", IntAt(s, "metadata.generation", 0)},
                                 {"currentHealthy", healthy},
                                 {"desiredHealthy", desired},
                                 {"expectedPods", expected},
                                 {"disruptionsAllowed", std::max<int64_t>(0, healthy - desired)}};
      return member_clients_[i]->UpdateStatus(kPodDisruptionBudgets, kNs, s).ok();
    }));
  }
  bool Settle(const std::function<bool()>& done) {
    return ControllerTest::Settle(done, std::chrono::seconds(30));
  }
};

TEST_F(DisruptionBudgetControllerTest, EachClusterWithPodsGetsItsShareOfTheBudget) {
  Deploy(0, 4);
  Deploy(1, 2);
  Start();
  ASSERT_TRUE(fed_client_
                  ->Create(kPodDisruptionBudgets, kNs,
                           Parse(R"({"apiVersion":"policy/v1","kind":"PodDisruptionBudget",
      "metadata":{"name":"web"},"spec":{"minAvailable":3,
      "selector":{"matchLabels":{"app":"web"}}}})"))
                  .ok());
  ASSERT_TRUE(Settle([&] {
    return MinAvailable() == std::vector<std::string>{"2", "1", "-"};
  })) << ::testing::PrintToString(MinAvailable());
  EXPECT_TRUE(IsManaged(Local(0)));
  EXPECT_EQ(api::AnnotationAt(Local(0), api::kFederatedObjectAnnotation), "default/web");

  Report(0, 4, 2, 4);
  Report(1, 1, 1, 2);
  ASSERT_TRUE(Settle([&] {
    json::object fed = Fed();
    return IntAt(fed, "status.disruptionsAllowed", -1) == 2 &&
           IntAt(fed, "status.currentHealthy", -1) == 5 &&
           IntAt(fed, "status.desiredHealthy", -1) == 3 &&
           IntAt(fed, "status.expectedPods", -1) == 6 &&
           IntAt(fed, "status.observedGeneration", -1) == IntAt(fed, "metadata.generation", 0);
  })) << json::serialize(Fed());
  // `kubectl flotilla status` lists it by each cluster's healthy pods.
  EXPECT_EQ(federation::testing::BreakdownCells(Fed(), api::kDisruptionStatusAnnotation),
            Name(0) + "=4/2," + Name(1) + "=1/1");

  // The pods leave c2 and come to c3: the budget follows them.
  ASSERT_TRUE(member_clients_[1]->Delete(kDeployments, kNs, "web", {}).ok());
  Deploy(2, 2);
  ASSERT_TRUE(Settle([&] {
    return MinAvailable() == std::vector<std::string>{"2", "-", "1"};
  })) << ::testing::PrintToString(MinAvailable());
  // A new minimum is divided anew.
  ASSERT_TRUE(fed_client_
                  ->Patch(kPodDisruptionBudgets, kNs, "web", client::PatchType::kMerge,
                          R"({"spec":{"minAvailable":6}})")
                  .ok());
  ASSERT_TRUE(Settle([&] {
    return MinAvailable() == std::vector<std::string>{"4", "-", "2"};
  })) << ::testing::PrintToString(MinAvailable());
}

}  // namespace
}  // namespace flotilla::federation::disruption
