#include "api/kinds/hpa_convert.h"

#include <gtest/gtest.h>

#include "api/kinds/test_util.h"
#include "api/kinds/util.h"

namespace flotilla::api::kinds {
namespace {

const char kV1[] = R"({"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler",
    "metadata":{"name":"web","namespace":"default","annotations":{"team":"shop"}},
    "spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},
            "minReplicas":2,"maxReplicas":10,"targetCPUUtilizationPercentage":50}})";

// A defaulted v2 HPA using everything v1 cannot hold, CPU utilization last.
const char kRichV2[] = R"({"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler",
    "metadata":{"name":"web","namespace":"default"},
    "spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},
      "minReplicas":2,"maxReplicas":10,
      "metrics":[
        {"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageValue":"500Mi"}}},
        {"type":"Pods","pods":{"metric":{"name":"qps"},"target":{"type":"AverageValue","averageValue":"100"}}},
        {"type":"Object","object":{"describedObject":{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","name":"main"},
          "metric":{"name":"requests"},"target":{"type":"Value","value":"2k"}}},
        {"type":"External","external":{"metric":{"name":"queue","selector":{"matchLabels":{"q":"jobs"}}},
          "target":{"type":"AverageValue","averageValue":"30"}}},
        {"type":"ContainerResource","containerResource":{"name":"cpu","container":"app",
          "target":{"type":"Utilization","averageUtilization":70}}},
        {"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":60}}}],
      "behavior":{
        "scaleUp":{"stabilizationWindowSeconds":0,"selectPolicy":"Max","policies":[
          {"type":"Pods","value":4,"periodSeconds":15},{"type":"Percent","value":100,"periodSeconds":15}]},
        "scaleDown":{"stabilizationWindowSeconds":120,"selectPolicy":"Min","policies":[
          {"type":"Percent","value":10,"periodSeconds":60}]}}},
    "status":{"observedGeneration":3,"lastScaleTime":"2024-05-01T12:00:00Z",
      "currentReplicas":4,"desiredReplicas":5,
      "currentMetrics":[
        {"type":"Resource","resource":{"name":"memory","current":{"averageValue":"400Mi"}}},
        {"type":"Pods","pods":{"metric":{"name":"qps"},"current":{"averageValue":"120"}}},
        {"type":"Object","object":{"metric":{"name":"requests"},"current":{"value":"1500"},
          "describedObject":{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","name":"main"}}},
        {"type":"External","external":{"metric":{"name":"queue","selector":{"matchLabels":{"q":"jobs"}}},
          "current":{"value":"90","averageValue":"25"}}},
        {"type":"ContainerResource","containerResource":{"name":"cpu","container":"app",
          "current":{"averageValue":"300m","averageUtilization":75}}},
        {"type":"Resource","resource":{"name":"cpu","current":{"averageValue":"250m","averageUtilization":62}}}],
      "conditions":[
        {"type":"AbleToScale","status":"True","lastTransitionTime":"2024-05-01T11:00:00Z",
         "reason":"ReadyForNewScale","message":"recommended size matches current size"},
        {"type":"ScalingActive","status":"True","lastTransitionTime":"2024-05-01T11:00:00Z",
         "reason":"ValidMetricFound"}]}})";

std::string AnnotationOf(const json::object& obj, std::string_view key) {
  const json::object* a = ObjectAt(obj, "metadata.annotations");
  return a ? std::string(GetString(*a, key).value_or("")) : "";
}

void ExpectJsonEq(const json::object& got, const json::object& want) {
  EXPECT_EQ(json::value(got), json::value(want))
      << " got: " << json::serialize(got) << "\nwant: " << json::serialize(want);
}

TEST(HpaConvert, V1TargetBecomesACpuUtilizationMetric) {
  json::object v2 = HpaV1ToV2(Obj(kV1));
  ExpectJsonEq(v2, Obj(R"({"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler",
      "metadata":{"name":"web","namespace":"default","annotations":{"team":"shop"}},
      "spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},
              "minReplicas":2,"maxReplicas":10,
              "metrics":[{"type":"Resource","resource":{"name":"cpu",
                 "target":{"type":"Utilization","averageUtilization":50}}}]}})"));
}

TEST(HpaConvert, V1RoundTripsThroughV2Unchanged) {
  json::object v1 = Obj(kV1);
  ExpectJsonEq(HpaV2ToV1(HpaV1ToV2(v1)), v1);
}

TEST(HpaConvert, V1StatusKeepsItsRawCpuMetricInAnAnnotation) {
  json::object v1 = Obj(kV1);
  MergePatch(v1, Obj(R"({"status":{"currentReplicas":3,"desiredReplicas":4,
                                   "currentCPUUtilizationPercentage":45}})"));
  json::object v2 = HpaV1ToV2(v1);
  ExpectJsonEq(GetObject(v2, "status") ? *GetObject(v2, "status") : json::object(),
               Obj(R"({"currentReplicas":3,"desiredReplicas":4,"currentMetrics":[
                   {"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":45}}}]})"));
  json::object back = HpaV2ToV1(v2);
  EXPECT_EQ(AnnotationOf(back, kCurrentMetricsAnnotation),
            R"([{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":45,)"
            R"("currentAverageValue":"0"}}])");
  EXPECT_EQ(IntOr(back, "status.currentCPUUtilizationPercentage", 0), 45);
  // From there on the round trip is stable.
  ExpectJsonEq(HpaV2ToV1(HpaV1ToV2(back)), back);
}

TEST(HpaConvert, V2RoundTripsThroughV1Annotations) {
  json::object v2 = Obj(kRichV2);
  json::object v1 = HpaV2ToV1(v2);
  EXPECT_EQ(IntOr(v1, "spec.targetCPUUtilizationPercentage", 0), 60);
  EXPECT_EQ(IntOr(v1, "status.currentCPUUtilizationPercentage", 0), 62);
  EXPECT_EQ(ObjectsAt(v1, "spec.metrics").size(), 0u);
  for (std::string_view key : {kMetricsAnnotation, kCurrentMetricsAnnotation, kConditionsAnnotation,
                               kBehaviorAnnotation}) {
    EXPECT_FALSE(AnnotationOf(v1, key).empty()) << key;
  }
  ExpectJsonEq(HpaV1ToV2(v1), v2);
}

TEST(HpaConvert, AnnotationsUseKubernetesShapes) {
  json::object v1 = HpaV2ToV1(Obj(kRichV2));
  EXPECT_EQ(
      AnnotationOf(v1, kMetricsAnnotation),
      R"([{"type":"Resource","resource":{"name":"memory","targetAverageValue":"500Mi"}},)"
      R"({"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"100"}},)"
      R"({"type":"Object","object":{"target":{"kind":"Ingress","name":"main","apiVersion":"networking.k8s.io/v1"},)"
      R"("metricName":"requests","targetValue":"2k"}},)"
      R"({"type":"External","external":{"metricName":"queue","metricSelector":{"matchLabels":{"q":"jobs"}},)"
      R"("targetAverageValue":"30"}},)"
      R"({"type":"ContainerResource","containerResource":{"name":"cpu","targetAverageUtilization":70,)"
      R"("container":"app"}}])");
  EXPECT_EQ(
      AnnotationOf(v1, kBehaviorAnnotation),
      R"({"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[)"
      R"({"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}]},)"
      R"("ScaleDown":{"StabilizationWindowSeconds":120,"SelectPolicy":"Min","Policies":[)"
      R"({"Type":"Percent","Value":10,"PeriodSeconds":60}]}})");
  EXPECT_EQ(
      AnnotationOf(v1, kConditionsAnnotation),
      R"([{"type":"AbleToScale","status":"True","lastTransitionTime":"2024-05-01T11:00:00Z",)"
      R"("reason":"ReadyForNewScale","message":"recommended size matches current size"},)"
      R"({"type":"ScalingActive","status":"True","lastTransitionTime":"2024-05-01T11:00:00Z",)"
      R"("reason":"ValidMetricFound"}])");
}

TEST(HpaConvert, CpuTargetComesBackAfterTheOtherMetrics) {
  json::object v2 = Obj(kRichV2);
  json::array& metrics = v2["spec"].as_object()["metrics"].as_array();
  json::value cpu = metrics.back();
  metrics.pop_back();
  metrics.insert(metrics.begin(), cpu);
  json::object back = HpaV1ToV2(HpaV2ToV1(v2));
  std::vector<const json::object*> got = ObjectsAt(back, "spec.metrics");
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(StringAt(*got[0], "resource.name"), "memory");
  EXPECT_EQ(StringAt(*got[5], "resource.name"), "cpu");
}

TEST(HpaConvert, V1WithoutTargetGetsTheDefaultCpuTarget) {
  json::object v1 = Obj(kV1);
  v1["spec"].as_object().erase("targetCPUUtilizationPercentage");
  v1["spec"].as_object().erase("minReplicas");
  json::object v2 = HpaV1ToV2(v1);
  EXPECT_EQ(IntOr(v2, "spec.minReplicas", 0), 1);
  std::vector<const json::object*> metrics = ObjectsAt(v2, "spec.metrics");
  ASSERT_EQ(metrics.size(), 1u);
  EXPECT_EQ(IntOr(*metrics[0], "resource.target.averageUtilization", 0), 80);
  EXPECT_EQ(IntOr(HpaV2ToV1(v2), "spec.targetCPUUtilizationPercentage", 0), 80);
}

TEST(HpaConvert, RoundTripAnnotationsNeverReachV2) {
  json::object v1 = Obj(kV1);
  MergePatch(v1, Obj(R"({"metadata":{"annotations":{
      "autoscaling.alpha.kubernetes.io/metrics":"not json",
      "autoscaling.alpha.kubernetes.io/conditions":"[]"}}})"));
  json::object v2 = HpaV1ToV2(v1);
  const json::object* annotations = ObjectAt(v2, "metadata.annotations");
  ASSERT_NE(annotations, nullptr);
  EXPECT_EQ(json::value(*annotations), json::value(Obj(R"({"team":"shop"})")));
  EXPECT_EQ(ObjectsAt(v2, "spec.metrics").size(), 1u);

  json::object stray = Obj(kRichV2);
  MergePatch(
      stray,
      Obj(R"({"metadata":{"annotations":{"autoscaling.alpha.kubernetes.io/behavior":"{}"}}})"));
  DefaultHpaV2(stray);
  EXPECT_EQ(ObjectAt(stray, "metadata.annotations"), nullptr);
}

TEST(HpaConvert, ConvertPicksTheDirectionFromApiVersion) {
  StatusOr<json::object> same = ConvertHorizontalPodAutoscaler(Obj(kV1), "v1");
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(json::value(*same), json::value(Obj(kV1)));
  StatusOr<json::object> up = ConvertHorizontalPodAutoscaler(Obj(kV1), "v2");
  ASSERT_TRUE(up.ok());
  EXPECT_EQ(StringAt(*up, "apiVersion"), "autoscaling/v2");
  StatusOr<json::object> down = ConvertHorizontalPodAutoscaler(*up, "v1");
  ASSERT_TRUE(down.ok());
  EXPECT_EQ(StringAt(*down, "apiVersion"), "autoscaling/v1");
  json::object other = Obj(R"({"apiVersion":"autoscaling/v2beta2"})");
  EXPECT_TRUE(ConvertHorizontalPodAutoscaler(other, "v1").status().Is(Reason::kBadRequest));
}

}  // namespace
}  // namespace flotilla::api::kinds
