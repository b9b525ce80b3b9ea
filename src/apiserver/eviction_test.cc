// The pods/eviction subresource (`kubectl drain`'s): a pod's
// PodDisruptionBudget decides, as in kube-apiserver.
#include <gtest/gtest.h>

#include "apiserver/api_server_test_util.h"

namespace flotilla::apiserver {
namespace {

using testing::RecordingResponder;
using testing::TestServer;

constexpr const char* kPodsPath = "/api/v1/namespaces/default/pods";
constexpr const char* kBudgets = "/apis/policy/v1/namespaces/default/poddisruptionbudgets";

std::string EvictionJson(const std::string& name, const std::string& extra = "") {
  return R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":")" + name +
         R"(","namespace":"default"})" + extra + "}";
}

class EvictionTest : public ::testing::Test {
 protected:
  EvictionTest() : s_(/*member_kinds=*/true) {}

  int Do(const std::string& method, const std::string& target, const std::string& body = "",
         json::object* out = nullptr, const std::string& content_type = "application/json") {
    RecordingResponder r;
    s_.Do(r, method, target, body, content_type);
    if (out != nullptr) *out = r.Json();
    return r.code();
  }
  // A pod of app=web bound to a node, Running, and Ready or not.
  void CreateRunning(const std::string& name, bool ready = true) {
    ASSERT_EQ(Do("POST", kPodsPath,
                 R"({"metadata":{"name":")" + name +
                     R"(","labels":{"app":"web"}},"spec":{"nodeName":"node-1",)"
                     R"("containers":[{"name":"c","image":"nginx"}]}})"),
              201);
    std::string status =
        R"({"status":{"phase":"Running","conditions":[{"type":"Ready","status":")" +
        std::string(ready ? "True" : "False") + R"("}]}})";
    ASSERT_EQ(Do("PATCH", std::string(kPodsPath) + "/" + name + "/status", status, nullptr,
                 "application/merge-patch+json"),
              200);
  }
  // A budget for app=web whose controller has observed it and allows
  // `allowed` disruptions of `healthy` pods, `desired` wanted.
  void CreateBudget(const std::string& name, int allowed, int healthy, int desired,
                    const std::string& extra_spec = "") {
    json::object created;
    ASSERT_EQ(Do("POST", kBudgets,
                 R"({"metadata":{"name":")" + name + R"("},"spec":{)" + extra_spec +
                     R"("minAvailable":2,"selector":{"matchLabels":{"app":"web"}}}})",
                 &created),
              201);
    std::string status = R"({"status":{"observedGeneration":1,"disruptionsAllowed":)" +
                         std::to_string(allowed) + R"(,"currentHealthy":)" +
                         std::to_string(healthy) + R"(,"desiredHealthy":)" +
                         std::to_string(desired) + R"(,"expectedPods":3}})";
    ASSERT_EQ(Do("PATCH", std::string(kBudgets) + "/" + name + "/status", status, nullptr,
                 "application/merge-patch+json"),
              200);
  }
  json::object Get(const std::string& target) {
    json::object out;
    Do("GET", target, "", &out);
    return out;
  }

  TestServer s_;
};

TEST_F(EvictionTest, DiscoveryListsPodsEvictionInThePolicyGroup) {
  json::object list = Get("/api/v1");
  const json::object* eviction = nullptr;
  for (const json::value& r : list.at("resources").as_array()) {
    if (r.as_object().at("name") == "pods/eviction") eviction = &r.as_object();
  }
  ASSERT_NE(eviction, nullptr);
  EXPECT_EQ(eviction->at("group"), "policy");
  EXPECT_EQ(eviction->at("version"), "v1");
  EXPECT_EQ(eviction->at("kind"), "Eviction");
  EXPECT_EQ(json::serialize(eviction->at("verbs")), R"(["create"])");
}

TEST_F(EvictionTest, WithoutABudgetThePodIsDeletedGracefully) {
  CreateRunning("web-1");
  json::object answer;
  EXPECT_EQ(Do("POST", std::string(kPodsPath) + "/web-1/eviction",
               EvictionJson("web-1", R"(,"deleteOptions":{"gracePeriodSeconds":7})"), &answer),
            201);
  EXPECT_EQ(answer.at("status"), "Success");
  json::object pod = Get(std::string(kPodsPath) + "/web-1");
  EXPECT_EQ(*Find(pod, "metadata.deletionGracePeriodSeconds"), 7);
  bool disruption_target = false;
  for (const json::value& c : Find(pod, "status.conditions")->as_array()) {
    if (c.as_object().at("type") == "DisruptionTarget") {
      disruption_target = true;
      EXPECT_EQ(c.as_object().at("reason"), "EvictionByEvictionAPI");
    }
  }
  EXPECT_TRUE(disruption_target);
}

TEST_F(EvictionTest, ABudgetAllowsWhatItAllowsAndThenRefusesWith429) {
  CreateRunning("web-1");
  CreateRunning("web-2");
  CreateBudget("web", /*allowed=*/1, /*healthy=*/3, /*desired=*/2);
  EXPECT_EQ(Do("POST", std::string(kPodsPath) + "/web-1/eviction", EvictionJson("web-1")), 201);
  json::object pdb = Get(std::string(kBudgets) + "/web");
  EXPECT_EQ(*Find(pdb, "status.disruptionsAllowed"), 0);
  EXPECT_NE(Find(pdb, "status.disruptedPods.web-1"), nullptr);
  EXPECT_EQ(Find(pdb, "status.conditions")->as_array()[0].as_object().at("reason"),
            "InsufficientPods");

  json::object refused;
  EXPECT_EQ(Do("POST", std::string(kPodsPath) + "/web-2/eviction", EvictionJson("web-2"), &refused),
            429);
  EXPECT_EQ(refused.at("reason"), "TooManyRequests");
  EXPECT_EQ(refused.at("message"),
            "Cannot evict pod as it would violate the pod's disruption budget.");
  const json::object& cause = Find(refused, "details.causes")->as_array()[0].as_object();
  EXPECT_EQ(cause.at("reason"), "DisruptionBudget");
  EXPECT_EQ(cause.at("message"),
            "The disruption budget web needs 2 healthy pods and has 3 currently");
  EXPECT_EQ(Find(Get(std::string(kPodsPath) + "/web-2"), "metadata.deletionTimestamp"), nullptr);
}

TEST_F(EvictionTest, ABudgetNotYetObservedAsksToRetry) {
  CreateRunning("web-1");
  ASSERT_EQ(Do("POST", kBudgets,
               R"({"metadata":{"name":"web"},"spec":{"maxUnavailable":1,)"
               R"("selector":{"matchLabels":{"app":"web"}}}})"),
            201);
  json::object refused;
  EXPECT_EQ(Do("POST", std::string(kPodsPath) + "/web-1/eviction", EvictionJson("web-1"), &refused),
            429);
  EXPECT_EQ(Find(refused, "details.causes")->as_array()[0].as_object().at("message"),
            "The disruption budget web is still being processed by the server.");
}

TEST_F(EvictionTest, UnreadyPodsGoWhenTheBudgetIsMetOrAlwaysAllows) {
  CreateRunning("sick", /*ready=*/false);
  CreateBudget("web", /*allowed=*/0, /*healthy=*/2, /*desired=*/2);
  EXPECT_EQ(Do("POST", std::string(kPodsPath) + "/sick/eviction", EvictionJson("sick")), 201);
  // Nothing was taken from the budget.
  EXPECT_EQ(Find(Get(std::string(kBudgets) + "/web"), "status.disruptedPods"), nullptr);

  CreateRunning("sick-2", /*ready=*/false);
  ASSERT_EQ(Do("DELETE", std::string(kBudgets) + "/web"), 200);
  CreateBudget("web", /*allowed=*/0, /*healthy=*/1, /*desired=*/2,
               R"("unhealthyPodEvictionPolicy":"IfHealthyBudget",)");
  EXPECT_EQ(Do("POST", std::string(kPodsPath) + "/sick-2/eviction", EvictionJson("sick-2")), 429);
  ASSERT_EQ(Do("DELETE", std::string(kBudgets) + "/web"), 200);
  CreateBudget("web", 0, 1, 2, R"("unhealthyPodEvictionPolicy":"AlwaysAllow",)");
  EXPECT_EQ(Do("POST", std::string(kPodsPath) + "/sick-2/eviction", EvictionJson("sick-2")), 201);
}

TEST_F(EvictionTest, BadEvictions) {
  CreateRunning("web-1");
  json::object answer;
  EXPECT_EQ(Do("POST", std::string(kPodsPath) + "/web-1/eviction", EvictionJson("other"), &answer),
            400);
  EXPECT_EQ(answer.at("message"), "name in URL does not match name in Eviction object");
  EXPECT_EQ(Do("POST", std::string(kPodsPath) + "/nope/eviction", EvictionJson("nope")), 404);
  EXPECT_EQ(Do("GET", std::string(kPodsPath) + "/web-1/eviction"), 405);
  // Two budgets over one pod: kube refuses to choose.
  CreateBudget("a", 1, 1, 0);
  CreateBudget("b", 1, 1, 0);
  EXPECT_EQ(Do("POST", std::string(kPodsPath) + "/web-1/eviction", EvictionJson("web-1"), &answer),
            500);
  EXPECT_EQ(answer.at("message"),
            "This pod has more than one PodDisruptionBudget, which the eviction subresource does "
            "not support.");
}

}  // namespace
}  // namespace flotilla::apiserver
