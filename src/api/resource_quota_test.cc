// What objects charge a ResourceQuota, and which quotas count them.
#include "api/resource_quota.h"

#include <gtest/gtest.h>

namespace flotilla::api {
namespace {

json::object QuotaParse(std::string_view text) {
  auto o = ParseJsonObject(text);
  EXPECT_TRUE(o.ok()) << text;
  return o.ok() ? *o : json::object();
}

TEST(ResourceQuotaTest, NamesCountTheirKind) {
  EXPECT_EQ(CountedBy("requests.cpu"), (CountedResource{"", "pods"}));
  EXPECT_EQ(CountedBy("pods"), (CountedResource{"", "pods"}));
  EXPECT_EQ(CountedBy("services.nodeports"), (CountedResource{"", "services"}));
  EXPECT_EQ(CountedBy("gold.storageclass.storage.k8s.io/requests.storage"),
            (CountedResource{"", "persistentvolumeclaims"}));
  EXPECT_EQ(CountedBy("count/deployments.apps"), (CountedResource{"apps", "deployments"}));
  EXPECT_EQ(CountedBy("count/widgets.example.com"), (CountedResource{"example.com", "widgets"}));
  EXPECT_EQ(CountedBy("count/configmaps"), (CountedResource{"", "configmaps"}));
  EXPECT_FALSE(CountedBy("requests.nvidia.com/gpu").has_value());
  EXPECT_FALSE(CountedBy("count/").has_value());
}

TEST(ResourceQuotaTest, WhatObjectsCharge) {
  json::object pod = QuotaParse(R"({"spec":{"containers":[
      {"name":"a","resources":{"requests":{"cpu":"250m"},"limits":{"cpu":"1","memory":"1Gi"}}},
      {"name":"b","resources":{"limits":{"memory":"512Mi"}}}]}})");
  QuotaUsage u = ObjectUsage("", "pods", pod);
  EXPECT_EQ(u["pods"], 1000);
  EXPECT_EQ(u["requests.cpu"], 250);
  EXPECT_EQ(u["limits.cpu"], 1000);
  // A limit stands in for a missing request, as defaulting does.
  EXPECT_EQ(u["requests.memory"], int64_t{1536} * 1024 * 1024 * 1000);
  pod["status"] = QuotaParse(R"({"phase":"Failed"})");
  EXPECT_TRUE(ObjectUsage("", "pods", pod).empty());

  QuotaUsage svc = ObjectUsage(
      "", "services",
      QuotaParse(R"({"spec":{"type":"LoadBalancer","ports":[{"port":80},{"port":443}]}})"));
  EXPECT_EQ(svc["services.loadbalancers"], 1000);
  EXPECT_EQ(svc["services.nodeports"], 2000);
  QuotaUsage pvc =
      ObjectUsage("", "persistentvolumeclaims", QuotaParse(R"({"spec":{"storageClassName":"gold",
                                 "resources":{"requests":{"storage":"1Gi"}}}})"));
  EXPECT_EQ(pvc["requests.storage"], (int64_t{1} << 30) * 1000);
  EXPECT_EQ(pvc["gold.storageclass.storage.k8s.io/persistentvolumeclaims"], 1000);
  EXPECT_EQ(ObjectUsage("apps", "deployments", {}), (QuotaUsage{{"count/deployments.apps", 1000}}));
}

TEST(ResourceQuotaTest, ScopesMatchPodsOnly) {
  json::object quota =
      QuotaParse(R"({"spec":{"hard":{"pods":"1"},"scopeSelector":{"matchExpressions":[
      {"scopeName":"PriorityClass","operator":"In","values":["high"]}]}}})");
  EXPECT_TRUE(
      QuotaMatches(quota, "", "pods", QuotaParse(R"({"spec":{"priorityClassName":"high"}})")));
  EXPECT_FALSE(
      QuotaMatches(quota, "", "pods", QuotaParse(R"({"spec":{"priorityClassName":"low"}})")));
  EXPECT_FALSE(QuotaMatches(quota, "", "configmaps", {}));
  json::object terminating = QuotaParse(R"({"spec":{"scopes":["Terminating"]}})");
  EXPECT_TRUE(QuotaMatches(terminating, "", "pods",
                           QuotaParse(R"({"spec":{"activeDeadlineSeconds":30}})")));
  EXPECT_FALSE(QuotaMatches(terminating, "", "pods", QuotaParse(R"({"spec":{}})")));
  EXPECT_TRUE(QuotaMatches(QuotaParse(R"({"spec":{"hard":{}}})"), "", "configmaps", {}));
}

TEST(ResourceQuotaTest, QuantitiesAsKubernetesPrintsThem) {
  EXPECT_EQ(FormatQuotaQuantity("requests.cpu", 1500), "1500m");
  EXPECT_EQ(FormatQuotaQuantity("cpu", 2000), "2");
  EXPECT_EQ(FormatQuotaQuantity("limits.memory", (int64_t{64} << 20) * 1000), "64Mi");
  EXPECT_EQ(FormatQuotaQuantity("pods", 3000), "3");
  EXPECT_EQ(FormatQuotaQuantity("count/deployments.apps", 0), "0");
}

}  // namespace
}  // namespace flotilla::api
