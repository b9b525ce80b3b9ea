// What the API server does for pods beyond the generic verbs: the binding
// subresource and graceful deletion, as kube-apiserver does them.
#include <gtest/gtest.h>

#include "apiserver/api_server_test_util.h"

namespace flotilla::apiserver {
namespace {

using testing::RecordingResponder;
using testing::TestServer;

constexpr const char* kPods = "/api/v1/namespaces/default/pods";

std::string PodJson(const std::string& name, const std::string& extra_spec = "") {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"("},"spec":{)" +
         extra_spec + R"("containers":[{"name":"c","image":"nginx"}]}})";
}

std::string BindingJson(const std::string& node) {
  return R"({"apiVersion":"v1","kind":"Binding","target":{"kind":"Node","name":")" + node +
         R"("}})";
}

class PodsTest : public ::testing::Test {
 protected:
  PodsTest() : s_(/*member_kinds=*/true) {}

  int Do(const std::string& method, const std::string& target, const std::string& body = "",
         json::object* out = nullptr) {
    RecordingResponder r;
    s_.Do(r, method, target, body);
    if (out != nullptr) *out = r.Json();
    return r.code();
  }
  json::object Pod(const std::string& name) {
    json::object pod;
    Do("GET", std::string(kPods) + "/" + name, "", &pod);
    return pod;
  }
  void CreateBound(const std::string& name, const std::string& extra_spec = "") {
    ASSERT_EQ(Do("POST", kPods, PodJson(name, extra_spec)), 201);
    ASSERT_EQ(Do("POST", std::string(kPods) + "/" + name + "/binding", BindingJson("node-1")), 201);
  }

  TestServer s_;
};

TEST_F(PodsTest, BindingAssignsTheNodeAndMarksThePodScheduled) {
  CreateBound("web");
  json::object pod = Pod("web");
  EXPECT_EQ(*Find(pod, "spec.nodeName"), "node-1");
  const json::value& cond = Find(pod, "status.conditions")->as_array().at(0);
  EXPECT_EQ(cond.as_object().at("type"), "PodScheduled");
  EXPECT_EQ(cond.as_object().at("status"), "True");
}

TEST_F(PodsTest, BindingAnAssignedOrMissingPodFails) {
  CreateBound("web");
  json::object status;
  EXPECT_EQ(Do("POST", std::string(kPods) + "/web/binding", BindingJson("node-2"), &status), 409);
  EXPECT_EQ(*Find(status, "reason"), "Conflict");
  EXPECT_EQ(*Find(status, "message"),
            "Operation cannot be fulfilled on pods/binding \"web\": pod web is already assigned "
            "to node \"node-1\"");
  EXPECT_EQ(*Find(Pod("web"), "spec.nodeName"), "node-1");
  EXPECT_EQ(Do("POST", std::string(kPods) + "/nope/binding", BindingJson("node-1"), &status), 404);
  EXPECT_EQ(*Find(status, "message"), "pods \"nope\" not found");
}

TEST_F(PodsTest, BindingBodyIsValidated) {
  ASSERT_EQ(Do("POST", kPods, PodJson("web")), 201);
  json::object status;
  EXPECT_EQ(Do("POST", std::string(kPods) + "/web/binding",
               R"({"apiVersion":"v1","kind":"Binding","target":{"kind":"Pod"}})", &status),
            422);
  EXPECT_EQ(Find(status, "details.causes")->as_array().size(), 2u);
  EXPECT_EQ(Do("POST", std::string(kPods) + "/web/binding",
               R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"other"},)"
               R"("target":{"name":"n"}})"),
            400);
  EXPECT_EQ(Do("PUT", std::string(kPods) + "/web/binding", BindingJson("n")), 405);
  EXPECT_EQ(Find(Pod("web"), "spec.nodeName"), nullptr);
}

TEST_F(PodsTest, DiscoveryListsPodsBinding) {
  json::object core;
  Do("GET", "/api/v1", "", &core);
  bool binding = false;
  for (const auto& r : Find(core, "resources")->as_array()) {
    if (r.as_object().at("name") == "pods/binding") {
      binding = true;
      EXPECT_EQ(r.as_object().at("verbs"), json::array{"create"});
    }
  }
  EXPECT_TRUE(binding);
}

TEST_F(PodsTest, BoundPodGetsItsGracePeriodUntilDeletedWithZero) {
  CreateBound("web", R"("terminationGracePeriodSeconds":45,)");
  TimePoint now = s_.clock().Now();
  json::object marked;
  EXPECT_EQ(Do("DELETE", std::string(kPods) + "/web", "", &marked), 200);
  EXPECT_EQ(*Find(marked, "metadata.deletionGracePeriodSeconds"), 45);
  EXPECT_EQ(*Find(marked, "metadata.deletionTimestamp"),
            json::value(FormatRfc3339(now + std::chrono::seconds(45))));
  EXPECT_EQ(Pod("web"), marked);

  // A longer period changes nothing; a shorter one moves the deadline.
  Do("DELETE", std::string(kPods) + "/web?gracePeriodSeconds=60");
  EXPECT_EQ(*Find(Pod("web"), "metadata.deletionGracePeriodSeconds"), 45);
  Do("DELETE", std::string(kPods) + "/web", R"({"gracePeriodSeconds":5})");
  EXPECT_EQ(*Find(Pod("web"), "metadata.deletionGracePeriodSeconds"), 5);
  EXPECT_EQ(*Find(Pod("web"), "metadata.deletionTimestamp"),
            json::value(FormatRfc3339(now + std::chrono::seconds(5))));

  json::object binding;
  EXPECT_EQ(Do("POST", std::string(kPods) + "/web/binding", BindingJson("n2"), &binding), 409);

  EXPECT_EQ(Do("DELETE", std::string(kPods) + "/web?gracePeriodSeconds=0"), 200);
  EXPECT_EQ(Do("GET", std::string(kPods) + "/web"), 404);
}

TEST_F(PodsTest, UnboundTerminalOrZeroGracePodsGoAtOnce) {
  ASSERT_EQ(Do("POST", kPods, PodJson("pending")), 201);
  EXPECT_EQ(Do("DELETE", std::string(kPods) + "/pending"), 200);
  EXPECT_EQ(Do("GET", std::string(kPods) + "/pending"), 404);

  CreateBound("now");
  EXPECT_EQ(Do("DELETE", std::string(kPods) + "/now?gracePeriodSeconds=0"), 200);
  EXPECT_EQ(Do("GET", std::string(kPods) + "/now"), 404);

  CreateBound("done");
  RecordingResponder patched;
  s_.Do(patched, "PATCH", std::string(kPods) + "/done/status",
        R"({"status":{"phase":"Succeeded"}})", "application/merge-patch+json");
  ASSERT_EQ(patched.code(), 200) << patched.body();
  EXPECT_EQ(Do("DELETE", std::string(kPods) + "/done"), 200);
  EXPECT_EQ(Do("GET", std::string(kPods) + "/done"), 404);
}

TEST_F(PodsTest, FinalizersStillHoldAPodDeletedWithZeroGrace) {
  ASSERT_EQ(Do("POST", kPods,
               R"({"metadata":{"name":"held","finalizers":["example.com/hold"]},)"
               R"("spec":{"nodeName":"node-1","containers":[{"name":"c","image":"nginx"}]}})"),
            201);
  EXPECT_EQ(Do("DELETE", std::string(kPods) + "/held?gracePeriodSeconds=0"), 200);
  EXPECT_EQ(*Find(Pod("held"), "metadata.deletionGracePeriodSeconds"), 0);
  RecordingResponder release;
  s_.Do(release, "PATCH", std::string(kPods) + "/held", R"({"metadata":{"finalizers":null}})",
        "application/merge-patch+json");
  ASSERT_EQ(release.code(), 200) << release.body();
  EXPECT_EQ(Do("GET", std::string(kPods) + "/held"), 404);
}

}  // namespace
}  // namespace flotilla::apiserver
