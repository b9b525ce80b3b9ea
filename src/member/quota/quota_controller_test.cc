// ResourceQuota on a member: the API server's admission refuses what a
// quota does not allow (its words, Kubernetes'), concurrent creates cannot
// both take the last unit, and the quota controller reports the usage.
#include "member/quota/quota_controller.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "member/test_util.h"
#include "runtime/test_util.h"

namespace flotilla::member {
namespace {

using runtime::testing::Eventually;

using testing::Parse;

json::object Pod(const std::string& name, std::string_view cpu) {
  return Parse(
      R"({"metadata":{"name":")" + name +
      R"("},"spec":{"containers":[{"name":"app","image":"nginx","resources":{"requests":{"cpu":")" +
      std::string(cpu) + R"(","memory":"64Mi"}}}]}})");
}

class QuotaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.Add<QuotaController>(env_.registry());
    ASSERT_TRUE(env_.Start().ok());
  }
  Status CreateQuota(std::string_view spec) {
    return env_.client()
        .Create(kResourceQuotas, "default",
                Parse(R"({"metadata":{"name":"team"},"spec":)" + std::string(spec) + "}"))
        .status();
  }
  // status.used of the quota "team" as JSON text ("" until it has one).
  std::string Used() {
    auto q = env_.client().Get(kResourceQuotas, "default", "team");
    const json::value* used = q.ok() ? Find(*q, "status.used") : nullptr;
    return used ? ToJson(*used) : "";
  }
  testing::MemberTestEnv env_;
};

TEST_F(QuotaTest, APodBeyondTheQuotaIsRefusedInKubernetesWords) {
  ASSERT_TRUE(CreateQuota(R"({"hard":{"pods":"2","requests.cpu":"1"}})").ok());
  EXPECT_TRUE(env_.client().Create(kPods, "default", Pod("a", "300m")).ok());
  EXPECT_TRUE(env_.client().Create(kPods, "default", Pod("b", "300m")).ok());
  Status third = env_.client().Create(kPods, "default", Pod("c", "500m")).status();
  EXPECT_TRUE(third.Is(Reason::kForbidden)) << third.ToString();
  EXPECT_EQ(third.message(),
            "pods \"c\" is forbidden: exceeded quota: team, requested: pods=1,requests.cpu=500m, "
            "used: "
            "pods=2,requests.cpu=600m, limited: pods=2,requests.cpu=1");
  EXPECT_TRUE(Eventually([&] { return Used() == R"({"pods":"2","requests.cpu":"600m"})"; }))
      << Used();
  // A pod gone frees its share at once (the store, not the status, counts).
  ASSERT_TRUE(env_.client().Delete(kPods, "default", "a", {}).ok());
  EXPECT_TRUE(env_.client().Create(kPods, "default", Pod("c", "300m")).ok());
  EXPECT_TRUE(Eventually([&] { return Used() == R"({"pods":"2","requests.cpu":"600m"})"; }))
      << Used();
  // A pod that finished uses nothing.
  auto b = env_.client().Get(kPods, "default", "b");
  ASSERT_TRUE(b.ok());
  (*b)["status"] = Parse(R"({"phase":"Succeeded"})");
  ASSERT_TRUE(env_.client().UpdateStatus(kPods, "default", *b).ok());
  EXPECT_TRUE(Eventually([&] { return Used() == R"({"pods":"1","requests.cpu":"300m"})"; }))
      << Used();
  EXPECT_TRUE(env_.client().Create(kPods, "default", Pod("d", "300m")).ok());
}

TEST_F(QuotaTest, APodMustAskForWhatTheQuotaLimits) {
  ASSERT_TRUE(CreateQuota(R"({"hard":{"limits.cpu":"4","requests.memory":"1Gi"}})").ok());
  Status s = env_.client()
                 .Create(kPods, "default", Parse(R"({"metadata":{"name":"p"},"spec":{"containers":[
                           {"name":"app","image":"nginx","resources":{"requests":{"cpu":"1"}}},
                           {"name":"side","image":"nginx","resources":{"limits":{"memory":"1Gi"}}}]}})"))
                 .status();
  EXPECT_TRUE(s.Is(Reason::kForbidden)) << s.ToString();
  EXPECT_EQ(s.message(),
            "pods \"p\" is forbidden: failed quota: team: must specify limits.cpu for: app,side; "
            "requests.memory for: app");
}

TEST_F(QuotaTest, ConcurrentCreatesCannotBothTakeTheLastPod) {
  ASSERT_TRUE(CreateQuota(R"({"hard":{"pods":"5"}})").ok());
  std::atomic<int> created = 0, refused = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < 12; ++i) {
    threads.emplace_back([&, i] {
      Status s =
          env_.client().Create(kPods, "default", Pod("p" + std::to_string(i), "1m")).status();
      (s.ok() ? created : refused)++;
      EXPECT_TRUE(s.ok() || s.Is(Reason::kForbidden)) << s.ToString();
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(created, 5);
  EXPECT_EQ(refused, 7);
}

TEST_F(QuotaTest, ObjectCountsAndScopes) {
  ASSERT_TRUE(
      env_.client()
          .Create(runtime::testing::kConfigMaps, "default", Parse(R"({"metadata":{"name":"one"}})"))
          .ok());
  ASSERT_TRUE(CreateQuota(R"({"hard":{"configmaps":"2","count/deployments.apps":"0"}})").ok());
  EXPECT_TRUE(Eventually([&] {
    return Used() == R"({"configmaps":"1","count/deployments.apps":"0"})";
  })) << Used();
  EXPECT_TRUE(
      env_.client()
          .Create(runtime::testing::kConfigMaps, "default", Parse(R"({"metadata":{"name":"two"}})"))
          .ok());
  Status s = env_.client()
                 .Create(runtime::testing::kConfigMaps, "default",
                         Parse(R"({"metadata":{"name":"three"}})"))
                 .status();
  EXPECT_EQ(s.message(),
            "configmaps \"three\" is forbidden: exceeded quota: team, requested: configmaps=1, "
            "used: configmaps=2, limited: "
            "configmaps=2");
  s = env_.client()
          .Create(client::kDeployments, "default",
                  Parse(R"({"metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},
                    "template":{"metadata":{"labels":{"a":"b"}},
                    "spec":{"containers":[{"name":"c","image":"nginx"}]}}}})"))
          .status();
  EXPECT_TRUE(s.Is(Reason::kForbidden)) << s.ToString();

  // A BestEffort-scoped quota counts only pods without requests.
  ASSERT_TRUE(env_.client()
                  .Create(kResourceQuotas, "default", Parse(R"({"metadata":{"name":"besteffort"},
                            "spec":{"hard":{"pods":"1"},"scopes":["BestEffort"]}})"))
                  .ok());
  json::object plain = Parse(R"({"metadata":{"name":"plain"},
    "spec":{"containers":[{"name":"app","image":"nginx"}]}})");
  EXPECT_TRUE(env_.client().Create(kPods, "default", plain).ok());
  plain["metadata"].as_object()["name"] = "plain2";
  EXPECT_TRUE(env_.client().Create(kPods, "default", plain).status().Is(Reason::kForbidden));
  EXPECT_TRUE(env_.client().Create(kPods, "default", Pod("sized", "100m")).ok());
}

TEST_F(QuotaTest, BadQuotasAreInvalid) {
  Status s = CreateQuota(R"({"hard":{"cpu":"-1","pods":"1.5","gpus":"1"},"scopes":["Sometimes"]})");
  EXPECT_TRUE(s.Is(Reason::kInvalid)) << s.ToString();
  for (std::string_view want :
       {R"(spec.hard[cpu]: Invalid value: "-1": must be greater than or equal to 0)",
        R"(spec.hard[pods]: Invalid value: "1.5": must be an integer)",
        R"(spec.hard[gpus]: Invalid value: "gpus": must be a standard resource for quota)",
        R"(spec.scopes[0]: Unsupported value: "Sometimes")"}) {
    EXPECT_NE(s.ToString().find(want), std::string::npos) << want << "\n" << s.ToString();
  }
}

// LimitRanger: a namespace's LimitRange fills in what a pod's containers
// do not ask for, and holds them within its min and max.
TEST_F(QuotaTest, ALimitRangeDefaultsAndBoundsContainers) {
  const client::ResourceRef limit_ranges{"", "v1", "limitranges", true};
  ASSERT_TRUE(env_.client()
                  .Create(limit_ranges, "default", Parse(R"({"metadata":{"name":"defaults"},
      "spec":{"limits":[{"type":"Container","max":{"cpu":"2"},"min":{"cpu":"100m"},
        "default":{"cpu":"500m","memory":"256Mi"},"defaultRequest":{"cpu":"200m"}}]}})"))
                  .ok());
  auto bare = env_.client().Create(
      kPods, "default",
      Parse(R"({"metadata":{"name":"bare"},"spec":{"containers":[{"name":"app","image":"x"}]}})"));
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  const json::object& resources =
      Find(*bare, "spec.containers")->as_array()[0].as_object().at("resources").as_object();
  EXPECT_EQ(ToJson(resources.at("limits")), R"({"cpu":"500m","memory":"256Mi"})");
  // The stored range's defaultRequest took memory from its default.
  EXPECT_EQ(ToJson(resources.at("requests")), R"({"cpu":"200m","memory":"256Mi"})");
  const json::value* annotations = Find(*bare, "metadata.annotations");
  ASSERT_NE(annotations, nullptr);
  EXPECT_EQ(
      ToJson(annotations->as_object().at("kubernetes.io/limit-ranger")),
      R"("LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app")");

  Status big = env_.client()
                   .Create(kPods, "default", Parse(R"({"metadata":{"name":"big"},
      "spec":{"containers":[{"name":"app","image":"x","resources":{"limits":{"cpu":"4"}}}]}})"))
                   .status();
  EXPECT_TRUE(big.Is(Reason::kForbidden)) << big.ToString();
  EXPECT_EQ(big.message(),
            "pods \"big\" is forbidden: maximum cpu usage per Container is 2, but limit is 4");
}

}  // namespace
}  // namespace flotilla::member
