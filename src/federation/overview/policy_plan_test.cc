// `flotilla plan` with a policy: which clusters a policy admits and how it
// divides the replicas, offline.
#include "federation/overview/policy_plan.h"

#include <gtest/gtest.h>

namespace flotilla::federation::overview {
namespace {

json::object Case(std::string_view text) {
  auto o = ParseJsonObject(text);
  EXPECT_TRUE(o.ok()) << text;
  return o.ok() ? *o : json::object();
}

constexpr std::string_view kClusters = R"("clusters":["on-prem","east","west"],
  "clusterObjects":{
    "on-prem":{"metadata":{"labels":{"location":"on-prem"}},"spec":{"provider":"on-prem"}},
    "east":{"metadata":{"labels":{"location":"cloud"}},"spec":{"provider":"aws"}},
    "west":{"metadata":{"labels":{"location":"cloud"}},"spec":{"provider":"gcp",
      "taints":[{"key":"maintenance","effect":"NoExecute"}]}}})";

TEST(PolicyPlanTest, StaticWeightsDivideOverTheAdmittedClusters) {
  json::object c = Case(R"({"replicas":6,)" + std::string(kClusters) + R"(,
    "policy":{"apiVersion":"policy.karmada.io/v1alpha1","kind":"ClusterPropagationPolicy",
      "metadata":{"name":"cloud"},"spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment"}],
      "placement":{"clusterAffinity":{"labelSelector":{"matchLabels":{"location":"cloud"}}},
        "clusterTolerations":[{"key":"maintenance","operator":"Exists","effect":"NoExecute"}],
        "replicaScheduling":{"replicaSchedulingType":"Divided","replicaDivisionPreference":"Weighted",
          "weightPreference":{"staticWeightList":[
            {"targetCluster":{"clusterNames":["east"]},"weight":2},
            {"targetCluster":{"clusterNames":["west"]},"weight":1}]}}}}}})");
  ASSERT_TRUE(HasPolicy(c));
  StatusOr<json::object> r = RunPolicyPlanCase(c, true);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(json::serialize(r->at("plan")), R"({"east":4,"west":2})");
  const json::object& clusters = r->at("policy").at("clusters").as_object();
  EXPECT_EQ(GetBool(clusters.at("on-prem").as_object(), "admitted"), false);
  EXPECT_FALSE(StringAt(clusters.at("on-prem").as_object(), "why").empty());
  EXPECT_EQ(json::serialize(clusters.at("east")), R"({"admitted":true,"staticWeight":2})");
  EXPECT_EQ(StringAt(r->at("policy").as_object(), "name"), "cloud");
}

TEST(PolicyPlanTest, DuplicatedGivesEveryAdmittedClusterAllAndTaintsKeepAway) {
  json::object c = Case(R"({"replicas":3,)" + std::string(kClusters) + R"(,
    "policy":{"kind":"PropagationPolicy","metadata":{"name":"everywhere"},
      "spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment"}]}}})");
  StatusOr<json::object> r = RunPolicyPlanCase(c, true);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // west's NoExecute taint is not tolerated.
  EXPECT_EQ(json::serialize(r->at("plan")), R"({"on-prem":3,"east":3})");
  EXPECT_EQ(StringAt(r->at("policy").as_object(), "name"), "default/everywhere");
  EXPECT_EQ(StringAt(r->at("policy").as_object(), "clusters.west.why"),
            "a NoExecute taint the policy does not tolerate");
}

TEST(PolicyPlanTest, BadPoliciesNameTheField) {
  StatusOr<json::object> r = RunPolicyPlanCase(
      Case(R"({"replicas":3,"clusters":["a"],"policy":{"kind":"ClusterPropagationPolicy",
        "metadata":{"name":"x"},"spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment"}],
        "placement":{"replicaScheduling":{"replicaSchedulingType":"Divided"}}}}})"),
      false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(
                "policy.spec.placement.replicaScheduling.replicaDivisionPreference"),
            std::string::npos)
      << r.status().ToString();
  r = RunPolicyPlanCase(Case(R"({"replicas":1,"clusters":["a"],"preferences":{},
    "policy":{"kind":"ClusterPropagationPolicy"}})"),
                        false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("preferences: Forbidden"), std::string::npos);
}

}  // namespace
}  // namespace flotilla::federation::overview
