// The HPA controller on a member's API (MemberTestEnv, FakeClock). No
// ReplicaSet or Deployment controller runs here: each test creates the
// scale target and plays the part of its controller, creating Running and
// Ready pods, and checks what the HPA writes to the target's scale and to
// its own status.
#include "member/hpa/hpa_controller.h"

#include <gtest/gtest.h>

#include "member/hpa/replica_calculator.h"
#include "member/test_util.h"
#include "runtime/test_util.h"

namespace flotilla::member::hpa {
namespace {

using runtime::testing::Eventually;
using std::chrono::seconds;

const client::ResourceRef kHpaV1{"autoscaling", "v1", "horizontalpodautoscalers", true};

// Gives the test the member's shared pods informer (the one the HPA reads).
class PodsProbe : public Component {
 public:
  explicit PodsProbe(ControllerContext& ctx) : pods(ctx.informers.For(kPods)) {}
  runtime::Informer& pods;
};

class HpaControllerTest : public ::testing::Test {
 protected:
  // Starts the env with a Deployment "web" of `replicas` and as many ready
  // pods requesting `request` cpu each ("" = no request).
  void StartWith(int replicas, const std::string& request = "500m") {
    request_ = request;
    json::object container{{"name", "app"}, {"image", "nginx"}};
    if (!request.empty()) container["resources"] = {{"requests", {{"cpu", request}}}};
    json::object deployment{{"apiVersion", "apps/v1"},
                            {"kind", "Deployment"},
                            {"metadata", {{"name", "web"}}},
                            {"spec",
                             {{"replicas", replicas},
                              {"selector", {{"matchLabels", {{"app", "web"}}}}},
                              {"template",
                               {{"metadata", {{"labels", {{"app", "web"}}}}},
                                {"spec", {{"containers", json::array{container}}}}}}}}};
    auto created = env_.client().Create(kDeployments, "default", deployment);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    SetPods(replicas);
    probe_ = &env_.Add<PodsProbe>();
    env_.Add<HpaController>();
    ASSERT_TRUE(env_.Start().ok());
  }

  // Creates ready pods web-<i> for i < n (the part of the ReplicaSet
  // controller and the kubelet).
  void SetPods(int n) {
    for (int i = pods_; i < n; ++i) {
      json::object container{{"name", "app"}, {"image", "nginx"}};
      if (!request_.empty()) container["resources"] = {{"requests", {{"cpu", request_}}}};
      json::object pod{
          {"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "web-" + std::to_string(i)}, {"labels", {{"app", "web"}}}}},
          {"spec", {{"containers", json::array{container}}}}};
      auto created = env_.client().Create(kPods, "default", pod);
      ASSERT_TRUE(created.ok()) << created.status().ToString();
      json::object ready = *created;
      ready["status"] = {{"phase", "Running"},
                         {"conditions", json::array{{{"type", "Ready"}, {"status", "True"}}}}};
      auto updated = env_.client().UpdateStatus(kPods, "default", ready);
      ASSERT_TRUE(updated.ok()) << updated.status().ToString();
    }
    pods_ = std::max(pods_, n);
    if (probe_ != nullptr) {
      ASSERT_TRUE(Eventually([&] { return ReadyPodsSeen() == pods_; }));
    }
  }

  int ReadyPodsSeen() {
    int n = 0;
    for (const runtime::ObjectPtr& pod : probe_->pods.cache().List()) n += IsPodReady(*pod);
    return n;
  }

  void CreateHpa(int64_t min, int64_t max, int64_t percent, const std::string& name = "web") {
    json::object spec{
        {"scaleTargetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "web"}}},
        {"minReplicas", min},
        {"maxReplicas", max},
        {"metrics",
         json::array{
             {{"type", "Resource"},
              {"resource",
               {{"name", "cpu"},
                {"target", {{"type", "Utilization"}, {"averageUtilization", percent}}}}}}}}};
    json::object hpa{{"apiVersion", "autoscaling/v2"},
                     {"kind", "HorizontalPodAutoscaler"},
                     {"metadata", {{"name", name}}},
                     {"spec", std::move(spec)}};
    auto created = env_.client().Create(kHorizontalPodAutoscalers, "default", hpa);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    ++hpas_;
    WaitIdle();
  }

  runtime::ControllerMetrics Metrics() {
    return env_.manager().Find(std::string(HpaController::kName))->Metrics();
  }

  // Waits until the HPA's key has been reconciled and waits for its next
  // period (nothing queued or in progress).
  // `hpas_` HPAs (at least one) wait for their period.
  void WaitIdle() {
    size_t hpas = std::max<size_t>(hpas_, 1);
    ASSERT_TRUE(Eventually([&] {
      runtime::ControllerMetrics m = Metrics();
      return m.reconciles > 0 && m.queue.depth == 0 && m.queue.processing == 0 &&
             m.queue.waiting == hpas;
    }));
  }

  // Moves the clock one sync period on and waits for that sync.
  void SyncOnce() {
    uint64_t before = Metrics().reconciles;
    env_.clock().Advance(env_.options().hpa_sync_period);
    ASSERT_TRUE(Eventually([&] { return Metrics().reconciles > before; }));
    WaitIdle();
  }

  int64_t ScaleReplicas() {
    auto scale = env_.client().GetScale(kDeployments, "default", "web");
    EXPECT_TRUE(scale.ok()) << scale.status().ToString();
    return scale.ok() ? GetInt(*GetObject(*scale, "spec"), "replicas").value_or(-1) : -1;
  }

  json::object Hpa(const client::ResourceRef& version = kHorizontalPodAutoscalers,
                   const std::string& name = "web") {
    auto hpa = env_.client().Get(version, "default", name);
    EXPECT_TRUE(hpa.ok()) << hpa.status().ToString();
    return hpa.ok() ? *hpa : json::object();
  }

  // "status reason: message" of a condition of the HPA's v2 status.
  std::string Condition(const std::string& type, const std::string& name = "web") {
    json::object hpa = Hpa(kHorizontalPodAutoscalers, name);
    const json::value* list = Find(hpa, "status.conditions");
    for (const json::value& c : list && list->is_array() ? list->get_array() : json::array()) {
      const json::object& o = c.get_object();
      if (GetString(o, "type") == type) {
        return std::string(*GetString(o, "status")) + " " + std::string(*GetString(o, "reason")) +
               ": " + std::string(*GetString(o, "message"));
      }
    }
    return "<none>";
  }

  int64_t StatusInt(const std::string& path,
                    const client::ResourceRef& v = kHorizontalPodAutoscalers) {
    json::object hpa = Hpa(v);  // Find points into it: keep it alive
    const json::value* value = Find(hpa, path);
    return value && value->is_int64() ? value->get_int64() : -1;
  }

  // The messages of the HPA's events with `reason`.
  std::vector<std::string> Events(const std::string& reason) {
    std::vector<std::string> out;
    auto list = env_.client().List(runtime::kEvents, "default", {});
    for (const json::object& e : list.ok() ? list->items : std::vector<json::object>()) {
      if (GetString(e, "reason") == reason) out.emplace_back(*GetString(e, "message"));
    }
    return out;
  }

  bool HasEvent(const std::string& reason, const std::string& message) {
    return Eventually([&] {
      for (const std::string& m : Events(reason)) {
        if (m == message) return true;
      }
      return false;
    });
  }

  testing::MemberTestEnv env_;
  PodsProbe* probe_ = nullptr;
  std::string request_;
  int pods_ = 0;
  size_t hpas_ = 0;
};

TEST_F(HpaControllerTest, ScalesOutByTheCeilRuleWhenDemandRises) {
  StartWith(4);
  env_.demand().Set("Deployment", "default", "web", 1000);  // 50% of 4 x 500m
  CreateHpa(1, 10, 50);
  EXPECT_EQ(ScaleReplicas(), 4);
  EXPECT_EQ(StatusInt("status.desiredReplicas"), 4);
  EXPECT_EQ(StatusInt("metadata.generation"), 1);
  EXPECT_EQ(StatusInt("status.observedGeneration"), 1);
  EXPECT_EQ(Condition("ScalingActive"),
            "True ValidMetricFound: the HPA was able to successfully calculate a replica count "
            "from cpu resource utilization (percentage of request)");
  EXPECT_EQ(Condition("AbleToScale"),
            "True ReadyForNewScale: recommended size matches current size");
  EXPECT_EQ(Condition("ScalingLimited"),
            "False DesiredWithinRange: the desired count is within the acceptable range");

  // 1700m over 4 pods of 500m: 85% against 50% -> ceil(4 * 1.7) = 7.
  env_.demand().Set("Deployment", "default", "web", 1700);
  SyncOnce();
  EXPECT_EQ(ScaleReplicas(), 7);
  json::object hpa = Hpa();
  EXPECT_EQ(StatusInt("status.currentReplicas"), 4);
  EXPECT_EQ(StatusInt("status.desiredReplicas"), 7);
  const json::value* current = Find(hpa, "status.currentMetrics");
  ASSERT_NE(current, nullptr);
  EXPECT_EQ(
      json::serialize(*current),
      R"([{"type":"Resource","resource":{"name":"cpu","current":{"averageValue":"425m","averageUtilization":85}}}])");
  EXPECT_EQ(StringAt(hpa, "status.lastScaleTime"), FormatRfc3339(env_.clock().Now()));
  EXPECT_EQ(Condition("AbleToScale"),
            "True SucceededRescale: the HPA controller was able to update the target scale to 7");
  EXPECT_TRUE(HasEvent("SuccessfulRescale",
                       "New size: 7; reason: cpu resource utilization (percentage of request) "
                       "above target"));
}

TEST_F(HpaControllerTest, NoChangeWithinTolerance) {
  StartWith(4);
  env_.demand().Set("Deployment", "default", "web", 1080);  // 54%: ratio 1.08
  CreateHpa(1, 10, 50);
  SyncOnce();
  EXPECT_EQ(ScaleReplicas(), 4);
  EXPECT_EQ(StatusInt("status.desiredReplicas"), 4);
  json::object hpa = Hpa();
  const json::value* u = Find(hpa, "status.currentMetrics");
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(Find(u->get_array()[0], "resource.current.averageUtilization")->as_int64(), 54);
  EXPECT_EQ(Find(Hpa(), "status.lastScaleTime"), nullptr);
}

TEST_F(HpaControllerTest, ClampsAtMaxReplicas) {
  StartWith(4);
  env_.demand().Set("Deployment", "default", "web", 1700);  // proposes 7
  CreateHpa(1, 5, 50);
  EXPECT_EQ(ScaleReplicas(), 5);
  EXPECT_EQ(Condition("ScalingLimited"),
            "True TooManyReplicas: the desired replica count is more than the maximum replica "
            "count");
  EXPECT_EQ(StatusInt("status.desiredReplicas"), 5);
}

TEST_F(HpaControllerTest, ScalesInOnlyAfterTheStabilizationWindow) {
  env_.options().hpa_downscale_stabilization = seconds(60);
  StartWith(4);
  env_.demand().Set("Deployment", "default", "web", 1700);
  CreateHpa(1, 10, 50);
  ASSERT_EQ(ScaleReplicas(), 7);
  SetPods(7);
  // 700m over 7 pods: 20% against 50% -> ceil(7 * 0.4) = 3, held for 60 s
  // by the recommendation of 7 made at the start.
  env_.demand().Set("Deployment", "default", "web", 700);
  for (int i = 1; i <= 4; ++i) {
    SyncOnce();
    EXPECT_EQ(ScaleReplicas(), 7) << "after " << 15 * i << " s";
  }
  EXPECT_EQ(Condition("AbleToScale"),
            "True ScaleDownStabilized: recent recommendations were higher than current one, "
            "applying the highest recent recommendation");
  EXPECT_EQ(StatusInt("status.desiredReplicas"), 7);
  SyncOnce();  // 75 s: the 7 left the window
  EXPECT_EQ(ScaleReplicas(), 3);
  EXPECT_TRUE(HasEvent("SuccessfulRescale", "New size: 3; reason: All metrics below target"));
}

TEST_F(HpaControllerTest, V1AndV2ViewsAgree) {
  StartWith(4);
  env_.demand().Set("Deployment", "default", "web", 1700);
  json::object v1{
      {"apiVersion", "autoscaling/v1"},
      {"kind", "HorizontalPodAutoscaler"},
      {"metadata", {{"name", "web"}}},
      {"spec",
       {{"scaleTargetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "web"}}},
        {"minReplicas", 2},
        {"maxReplicas", 10},
        {"targetCPUUtilizationPercentage", 50}}}};
  auto created = env_.client().Create(kHpaV1, "default", v1);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  WaitIdle();
  EXPECT_EQ(ScaleReplicas(), 7);
  EXPECT_EQ(StatusInt("status.currentReplicas", kHpaV1), 4);
  EXPECT_EQ(StatusInt("status.desiredReplicas", kHpaV1), 7);
  EXPECT_EQ(StatusInt("status.currentCPUUtilizationPercentage", kHpaV1), 85);
  json::object v2 = Hpa();
  EXPECT_EQ(Find(v2, "status.currentMetrics")
                ->get_array()[0]
                .at("resource")
                .at("current")
                .at("averageUtilization"),
            85);
  EXPECT_EQ(*Find(Hpa(kHpaV1), "status.lastScaleTime"), *Find(v2, "status.lastScaleTime"));
  EXPECT_EQ(StatusInt("status.desiredReplicas"), 7);
  EXPECT_EQ(StatusInt("spec.minReplicas"), 2);
}

TEST_F(HpaControllerTest, MissingRequestsStopScaling) {
  StartWith(2, "");
  env_.demand().Set("Deployment", "default", "web", 5000);
  CreateHpa(1, 10, 50);
  EXPECT_EQ(ScaleReplicas(), 2);
  EXPECT_EQ(Condition("ScalingActive"),
            "False FailedGetResourceMetric: the HPA was unable to compute the replica count: "
            "failed to get cpu utilization: missing request for cpu in container app of Pod "
            "web-0");
  EXPECT_EQ(Condition("AbleToScale"),
            "True SucceededGetScale: the HPA controller was able to get the target's current "
            "scale");
  EXPECT_EQ(StatusInt("status.currentReplicas"), 2);
  EXPECT_TRUE(HasEvent("FailedComputeMetricsReplicas",
                       "invalid metrics (1 invalid out of 1), first error is: failed to get cpu "
                       "resource metric value: failed to get cpu utilization: missing request for "
                       "cpu in container app of Pod web-0"));
  EXPECT_EQ(json::serialize(*Find(Hpa(), "status.currentMetrics")), R"([{"type":""}])");
}

TEST_F(HpaControllerTest, ZeroReplicasDisableAutoscaling) {
  StartWith(0);
  env_.demand().Set("Deployment", "default", "web", 5000);
  CreateHpa(1, 10, 50);
  SyncOnce();
  EXPECT_EQ(ScaleReplicas(), 0);
  EXPECT_EQ(Condition("ScalingActive"),
            "False ScalingDisabled: scaling is disabled since the replica count of the target is "
            "zero");
  EXPECT_EQ(StatusInt("status.desiredReplicas"), 0);
}

TEST_F(HpaControllerTest, TwoHpasOnTheSamePodsAreAmbiguous) {
  StartWith(2);
  env_.demand().Set("Deployment", "default", "web", 5000);
  CreateHpa(1, 3, 50);
  ASSERT_EQ(ScaleReplicas(), 3);
  CreateHpa(1, 10, 50, "other");
  EXPECT_EQ(Condition("ScalingActive", "other"),
            "False AmbiguousSelector: pods by selector app=web are controlled by multiple HPAs: "
            "[default/other default/web]");
  EXPECT_EQ(ScaleReplicas(), 3);
}

TEST_F(HpaControllerTest, MissingTargetFailsToGetScale) {
  StartWith(1);
  json::object spec{
      {"scaleTargetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "nope"}}}};
  json::object hpa{{"apiVersion", "autoscaling/v2"},
                   {"kind", "HorizontalPodAutoscaler"},
                   {"metadata", {{"name", "web"}}},
                   {"spec", {{"scaleTargetRef", spec["scaleTargetRef"]}, {"maxReplicas", 3}}}};
  ASSERT_TRUE(env_.client().Create(kHorizontalPodAutoscalers, "default", hpa).ok());
  WaitIdle();
  EXPECT_EQ(Condition("AbleToScale"),
            "False FailedGetScale: the HPA controller was unable to get the target's current "
            "scale: deployments.apps \"nope\" not found");
}

}  // namespace
}  // namespace flotilla::member::hpa
