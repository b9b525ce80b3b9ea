#include "api/policy/quota.h"

#include <gtest/gtest.h>

namespace flotilla::api::policy {
namespace {

json::object QuotaObj(std::string_view text) { return *ParseJsonObject(text); }

json::object Deployment(int replicas, std::string_view cpu, std::string_view memory) {
  return QuotaObj(
      R"({"kind":"Deployment","spec":{"replicas":)" + std::to_string(replicas) +
      R"(,"template":{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":")" +
      std::string(cpu) + R"(","memory":")" + std::string(memory) + R"("}}}]}}}})");
}

const json::object kQuota = QuotaObj(R"({"metadata":{"name":"team"},"spec":{"overall":
    {"requests.cpu":"2","memory":"1Gi","pods":"10","limits.cpu":"1","count/jobs.batch":"1"}}})");

TEST(QuotaTest, AWorkloadCountsItsReplicasTimesItsPodsRequests) {
  QuotaUsage u = WorkloadUsage(Deployment(3, "500m", "256Mi"));
  EXPECT_EQ(u["cpu"], 1500);
  EXPECT_EQ(u["memory"], int64_t{3} * 256 * 1024 * 1024 * 1000);
  EXPECT_EQ(u["pods"], 3000);
  EXPECT_TRUE(WorkloadUsage(QuotaObj(R"({"kind":"ConfigMap"})")).empty());
  EXPECT_TRUE(WorkloadUsage(Deployment(0, "1", "1Gi")).empty());
  json::object owned = Deployment(2, "1", "1Gi");
  owned["kind"] = "ReplicaSet";
  owned["metadata"] = QuotaObj(R"({"ownerReferences":[{"kind":"Deployment","controller":true}]})");
  EXPECT_TRUE(WorkloadUsage(owned).empty());
}

TEST(QuotaTest, AWriteBeyondTheCapIsRefusedWithKubernetesMessage) {
  QuotaUsage before = WorkloadUsage(Deployment(2, "500m", "128Mi"));  // cpu 1
  QuotaUsage after = before;
  Add(after, WorkloadUsage(Deployment(3, "500m", "128Mi")));  // cpu 2.5
  Status s = CheckQuota(kQuota, before, after);
  ASSERT_TRUE(s.Is(Reason::kForbidden)) << s.ToString();
  EXPECT_EQ(s.message(),
            "exceeded quota: team, requested: requests.cpu=1500m, used: requests.cpu=1, "
            "limited: requests.cpu=2");
  // Within the caps: passes.
  QuotaUsage fits = before;
  Add(fits, WorkloadUsage(Deployment(2, "500m", "128Mi")));
  EXPECT_TRUE(CheckQuota(kQuota, before, fits).ok());
  // Over the cap already, a write that lowers usage passes.
  EXPECT_TRUE(CheckQuota(kQuota, after, fits).ok());
  // Resources it does not count are not enforced (limits.cpu, count/...).
  EXPECT_EQ(CountedResource("limits.cpu"), "");
  EXPECT_EQ(CountedResource("requests.memory"), "memory");
}

TEST(QuotaTest, OverallUsedNamesTheResourcesAsTheQuotaDoes) {
  QuotaUsage used = WorkloadUsage(Deployment(4, "250m", "256Mi"));
  EXPECT_EQ(OverallUsed(kQuota, used),
            QuotaObj(R"({"requests.cpu":"1","memory":"1Gi","pods":"4"})"));
}

}  // namespace
}  // namespace flotilla::api::policy
