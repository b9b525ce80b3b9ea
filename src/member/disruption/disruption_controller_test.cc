// The member's disruption controller with the ReplicaSet controller,
// scheduler and kubelet on a FakeClock: a budget's counts from its pods and
// their controller's scale, evictions counted out until their pods go (or
// time out), and budgets that cannot be computed.
#include "member/disruption/disruption_controller.h"

#include <gtest/gtest.h>

#include "member/kubelet/kubelet.h"
#include "member/nodes/nodes.h"
#include "member/object_util.h"
#include "member/replicaset/replicaset_controller.h"
#include "member/scheduler/scheduler.h"
#include "member/test_util.h"
#include "runtime/test_util.h"

namespace flotilla::member {
namespace {

using runtime::testing::Eventually;

using testing::Parse;

class DisruptionControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.options().nodes = 2;
    env_.Add<Nodes>();
    env_.Add<Scheduler>();
    env_.Add<Kubelet>();
    env_.Add<ReplicaSetController>();
    env_.Add<DisruptionController>();
    ASSERT_TRUE(env_.Start().ok());
  }

  // ReplicaSet "web" of `replicas` pods labelled app=web; they exit at once
  // when deleted.
  void CreateReplicaSet(int replicas) {
    ASSERT_TRUE(env_.client()
                    .Create(kReplicaSets, "default",
                            Parse(R"({"apiVersion":"apps/v1",
      "kind":"ReplicaSet","metadata":{"name":"web"},"spec":{"replicas":)" +
                                  std::to_string(replicas) + R"(,
      "selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},
      "spec":{"terminationGracePeriodSeconds":0,"containers":[{"name":"c","image":"nginx"}]}}}})"))
                    .ok());
  }
  void CreateBudget(std::string_view spec) {
    ASSERT_TRUE(env_.client()
                    .Create(kPodDisruptionBudgets, "default",
                            Parse(R"({"apiVersion":"policy/v1","kind":"PodDisruptionBudget",
      "metadata":{"name":"web"},"spec":)" +
                                  std::string(spec) + "}"))
                    .ok());
  }
  json::object Budget() {
    auto pdb = env_.client().Get(kPodDisruptionBudgets, "default", "web");
    return pdb.ok() ? *pdb : json::object{};
  }
  // The budget's status counts "healthy/desired/expected/allowed".
  std::string Counts() {
    json::object pdb = Budget();
    auto n = [&](std::string_view f) {
      return std::to_string(GetInt(StatusOf(pdb), f).value_or(-1));
    };
    return n("currentHealthy") + "/" + n("desiredHealthy") + "/" + n("expectedPods") + "/" +
           n("disruptionsAllowed");
  }
  // The budget's field at `path` (null when absent).
  json::value Field(std::string_view path) {
    json::object pdb = Budget();
    const json::value* v = Find(pdb, path);
    return v != nullptr ? *v : json::value(nullptr);
  }
  std::string Condition() {
    json::value conds_value = Field("status.conditions");
    const json::value* conds = &conds_value;
    if (conds == nullptr || !conds->is_array() || conds->as_array().empty()) return "";
    const json::object& c = conds->as_array()[0].as_object();
    return FieldString(c, "status") + " " + FieldString(c, "reason");
  }
  std::vector<std::string> PodNames() {
    std::vector<std::string> out;
    auto list = env_.client().List(kPods, "default", {});
    if (!list.ok()) return out;
    for (const json::object& pod : list->items) {
      if (MetaAt(pod, "deletionTimestamp").empty()) out.push_back(MetaAt(pod, "name"));
    }
    return out;
  }
  Status Evict(const std::string& pod) {
    return env_.client()
        .CreateSubresource(kPods, "default", pod, "eviction",
                           Parse(R"({"apiVersion":"policy/v1","kind":"Eviction",
                                     "metadata":{"name":")" +
                                 pod + R"("}})"))
        .status();
  }
  bool AdvanceUntil(const std::function<bool()>& done) {
    return env_.AdvanceUntil(done, std::chrono::minutes(5),
                             {"replicaset", "kubelet", "scheduler", "disruption"});
  }

  testing::MemberTestEnv env_;
};

TEST_F(DisruptionControllerTest, IntegerMinAvailableCountsTheBudgetsReadyPods) {
  CreateReplicaSet(3);
  CreateBudget(R"({"minAvailable":2,"selector":{"matchLabels":{"app":"web"}}})");
  ASSERT_TRUE(AdvanceUntil([&] { return Counts() == "3/2/3/1"; })) << Counts();
  EXPECT_EQ(Condition(), "True SufficientPods");
  EXPECT_EQ(Field("status.observedGeneration"), 1);

  // One eviction is allowed; the budget counts the pod out at once, and the
  // next eviction is refused until a replacement is Ready.
  std::vector<std::string> pods = PodNames();
  ASSERT_EQ(pods.size(), 3u);
  ASSERT_TRUE(Evict(pods[0]).ok());
  Status refused = Evict(pods[1]);
  EXPECT_TRUE(refused.Is(Reason::kTooManyRequests)) << refused.ToString();
  ASSERT_TRUE(AdvanceUntil([&] { return Counts() == "3/2/3/1" && PodNames().size() == 3; }))
      << Counts();
  EXPECT_TRUE(Field("status.disruptedPods").is_null());
  EXPECT_TRUE(Evict(pods[1]).ok());
}

TEST_F(DisruptionControllerTest, PercentagesAndMaxUnavailableScaleByTheController) {
  CreateReplicaSet(4);
  CreateBudget(R"({"maxUnavailable":"50%","selector":{"matchLabels":{"app":"web"}}})");
  // desired = 4 - ceil(50% of 4).
  ASSERT_TRUE(AdvanceUntil([&] { return Counts() == "4/2/4/2"; })) << Counts();
  ASSERT_TRUE(env_.client()
                  .Patch(kPodDisruptionBudgets, "default", "web", client::PatchType::kMerge,
                         R"({"spec":{"maxUnavailable":null,"minAvailable":"60%"}})")
                  .ok());
  // ceil(60% of 4) = 3.
  ASSERT_TRUE(AdvanceUntil([&] { return Counts() == "4/3/4/1"; })) << Counts();
  EXPECT_EQ(Field("status.observedGeneration"), 2);
}

TEST_F(DisruptionControllerTest, PodsWithoutAControllerFailAPercentageBudget) {
  ASSERT_TRUE(env_.client()
                  .Create(kPods, "default", Parse(R"({"apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"lone","labels":{"app":"web"}},
    "spec":{"containers":[{"name":"c","image":"nginx"}]}})"))
                  .ok());
  CreateBudget(R"({"minAvailable":"50%","selector":{"matchLabels":{"app":"web"}}})");
  ASSERT_TRUE(AdvanceUntil([&] { return Condition() == "False SyncFailed"; })) << Condition();
  json::value conds = Field("status.conditions");
  EXPECT_EQ(FieldString(conds.as_array()[0].as_object(), "message"),
            "found no controller ref for pod \"lone\"");
  EXPECT_EQ(Field("status.disruptionsAllowed"), 0);
  // An integer minAvailable needs no controller.
  ASSERT_TRUE(env_.client()
                  .Patch(kPodDisruptionBudgets, "default", "web", client::PatchType::kMerge,
                         R"({"spec":{"minAvailable":0}})")
                  .ok());
  ASSERT_TRUE(AdvanceUntil([&] { return Counts() == "1/0/1/1"; })) << Counts();
  EXPECT_EQ(Condition(), "True SufficientPods");
}

TEST_F(DisruptionControllerTest, AnEvictionNeverCarriedOutTimesOut) {
  CreateReplicaSet(2);
  CreateBudget(R"({"minAvailable":1,"selector":{"matchLabels":{"app":"web"}}})");
  ASSERT_TRUE(AdvanceUntil([&] { return Counts() == "2/1/2/1"; })) << Counts();
  // What an eviction records, for a pod that is then never deleted.
  std::string pod = PodNames()[0];
  TimePoint recorded = env_.clock().Now();
  json::object pdb = Budget();
  json::object& status = pdb["status"].as_object();
  status["disruptionsAllowed"] = 0;
  status["disruptedPods"] = json::object{{pod, FormatRfc3339(recorded)}};
  ASSERT_TRUE(env_.client().UpdateStatus(kPodDisruptionBudgets, "default", pdb).ok());
  ASSERT_TRUE(Eventually([&] { return Counts() == "1/1/2/0"; })) << Counts();
  // Two minutes on, the pod counts as healthy again.
  ASSERT_TRUE(AdvanceUntil([&] { return Counts() == "2/1/2/1"; })) << Counts();
  EXPECT_TRUE(Field("status.disruptedPods").is_null());
  EXPECT_GE(env_.clock().Now() - recorded, DisruptionController::kDeletionTimeout);
}

}  // namespace
}  // namespace flotilla::member
