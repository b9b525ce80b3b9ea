// Why an object is where it is (explain.h), from objects as the API
// returns them.
#include "federation/overview/explain.h"

#include <gtest/gtest.h>

#include "api/federated.h"

namespace flotilla::federation::overview {
namespace {

json::object Obj(std::string_view text) {
  StatusOr<json::object> o = ParseJsonObject(text);
  EXPECT_TRUE(o.ok()) << text;
  return o.ok() ? *o : json::object{};
}

json::object Cluster(const std::string& name, const std::string& location,
                     const std::string& provider, const std::string& taints = "[]") {
  return Obj(R"({"apiVersion":"federation.kubernetes.io/v1","kind":"Cluster",
      "metadata":{"name":")" +
             name + R"(","labels":{"location":")" + location + R"("}},
      "spec":{"provider":")" +
             provider + R"(","taints":)" + taints + R"(},
      "status":{"conditions":[{"type":"Ready","status":"True"}]}})");
}

class ExplainTest : public ::testing::Test {
 protected:
  ExplainTest() {
    clusters_ = {Cluster("west", "cloud", "gcp", R"([{"key":"maint","effect":"NoExecute"}])"),
                 Cluster("on-prem", "on-prem", "on-prem"), Cluster("east", "cloud", "aws")};
    deployment_ = Obj(R"({"apiVersion":"apps/v1","kind":"Deployment",
        "metadata":{"name":"web","namespace":"shop","labels":{"tier":"front"},
          "annotations":{"federation.kubernetes.io/deployment-status":
            "{\"clusters\": {\"east\": {\"planned\": 4}}}"}},
        "spec":{"replicas":4}})");
    overrides_ = {Obj(R"({"apiVersion":"policy.karmada.io/v1alpha1",
        "kind":"ClusterOverridePolicy","metadata":{"name":"mirror"},
        "spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment"}],
          "overrideRules":[{"targetCluster":{"labelSelector":{"matchLabels":{"location":"cloud"}}},
            "overriders":{"imageOverrider":[{"component":"Registry","operator":"replace",
              "value":"mirror.example.com"}]}}]}})")};
  }

  Explanation Run() {
    return Explain({.obj = &deployment_,
                    .api_version = "apps/v1",
                    .kind = "Deployment",
                    .preferences_annotation = api::kDeploymentPreferencesAnnotation,
                    .breakdown_annotation = api::kDeploymentStatusAnnotation,
                    .propagation_policies = &policies_,
                    .override_policies = &overrides_,
                    .clusters = &clusters_});
  }

  std::vector<json::object> clusters_, policies_, overrides_;
  json::object deployment_;
};

TEST_F(ExplainTest, APolicysAffinityWeightsTaintsAndOverridesPerCluster) {
  policies_ = {Obj(R"({"apiVersion":"policy.karmada.io/v1alpha1",
      "kind":"ClusterPropagationPolicy","metadata":{"name":"cloud"},
      "spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment"}],
        "placement":{"clusterAffinity":{"labelSelector":{"matchLabels":{"location":"cloud"}}},
          "replicaScheduling":{"replicaSchedulingType":"Divided",
            "replicaDivisionPreference":"Weighted",
            "weightPreference":{"staticWeightList":[
              {"targetCluster":{"clusterNames":["east"]},"weight":2}]}}}}})")};
  Explanation e = Run();
  EXPECT_EQ(e.object, "Deployment shop/web");
  EXPECT_EQ(e.placed_by, "ClusterPropagationPolicy cloud");
  EXPECT_EQ(e.scheduling, "Divided, Weighted by the static weights");
  ASSERT_EQ(e.clusters.size(), 3u);
  const ClusterVerdict& east = e.clusters[0];
  EXPECT_EQ(east.name, "east");
  EXPECT_TRUE(east.admitted);
  EXPECT_EQ(east.why, "matches the clusterAffinity");
  EXPECT_EQ(east.weight, 2);
  EXPECT_EQ(east.planned, 4);
  EXPECT_EQ(east.overrides, std::vector<std::string>{"ClusterOverridePolicy mirror"});
  const ClusterVerdict& onprem = e.clusters[1];
  EXPECT_FALSE(onprem.admitted);
  EXPECT_EQ(onprem.why, "its labels do not match labelSelector");
  EXPECT_TRUE(onprem.overrides.empty());
  EXPECT_FALSE(onprem.planned.has_value());
  const ClusterVerdict& west = e.clusters[2];
  EXPECT_FALSE(west.admitted);
  EXPECT_EQ(west.why, "a NoExecute taint the policy does not tolerate");
  std::string text = ExplainText(e);
  EXPECT_NE(text.find("Placed by:   ClusterPropagationPolicy cloud"), std::string::npos) << text;
  EXPECT_NE(text.find("CLUSTER   HEALTH   ADMITTED"), std::string::npos) << text;
  EXPECT_EQ(ToJson(e).at("clusters").as_array().size(), 3u);
}

TEST_F(ExplainTest, AnnotationsComeFirstAndNoPolicyMeansEveryCluster) {
  Explanation none = Run();
  EXPECT_EQ(none.placed_by, "no policy");
  for (const ClusterVerdict& v : none.clusters) EXPECT_TRUE(v.admitted) << v.name;
  deployment_["metadata"].as_object()["annotations"].as_object()[api::kClusterSelectorAnnotation] =
      R"([{"key":"location","operator":"In","values":["on-prem"]}])";
  policies_ = {Obj(R"({"apiVersion":"policy.karmada.io/v1alpha1",
      "kind":"ClusterPropagationPolicy","metadata":{"name":"all"},
      "spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment"}]}})")};
  Explanation own = Run();
  EXPECT_EQ(own.placed_by, "its annotations");
  EXPECT_EQ(own.clusters[1].name, "on-prem");
  EXPECT_TRUE(own.clusters[1].admitted);
  EXPECT_FALSE(own.clusters[0].admitted);
  EXPECT_EQ(own.clusters[0].why, "its cluster selector does not");
}

}  // namespace
}  // namespace flotilla::federation::overview
