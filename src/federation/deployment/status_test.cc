#include "federation/deployment/status.h"

#include <gtest/gtest.h>

#include "federation/common/rollout_events.h"

namespace flotilla::federation::deployment {
namespace {

json::object Deployment(int64_t replicas, bool paused = false) {
  json::object spec{{"replicas", replicas}, {"strategy", json::object{{"type", "RollingUpdate"}}}};
  if (paused) spec["paused"] = true;
  return json::object{{"metadata", json::object{{"name", "web"}, {"generation", 5}}},
                      {"spec", std::move(spec)},
                      {"status", json::object{{"collisionCount", 1}}}};
}

json::object Local(int64_t replicas, int64_t updated, int64_t available) {
  return json::object{{"metadata", json::object{{"generation", 2}}},
                      {"status", json::object{{"observedGeneration", 2},
                                              {"replicas", replicas},
                                              {"updatedReplicas", updated},
                                              {"readyReplicas", available},
                                              {"availableReplicas", available},
                                              {"unavailableReplicas", replicas - available}}}};
}

const json::object& Condition(const json::object& status, const std::string& type) {
  for (const json::value& c : status.at("conditions").as_array()) {
    if (c.as_object().at("type") == json::value(type)) return c.as_object();
  }
  static const json::object kNone;
  return kNone;
}

TEST(DeploymentStatusTest, UpdatedCountsOnlyClustersOnTheTemplate) {
  json::object a = Local(3, 3, 3), b = Local(3, 3, 3);
  std::vector<ClusterStatus> clusters{{.cluster = "a",
                                       .planned = 3,
                                       .local = &a,
                                       .on_template = true,
                                       .rollout = ClusterRollout::kComplete,
                                       .observed = true},
                                      {.cluster = "b",
                                       .planned = 3,
                                       .local = &b,
                                       .on_template = false,
                                       .rollout = ClusterRollout::kWaiting,
                                       .observed = true}};
  json::object status = AggregateStatus(Deployment(6), clusters, "web-abc", TimePoint{});
  EXPECT_EQ(status.at("replicas"), 6);
  EXPECT_EQ(status.at("updatedReplicas"), 3);
  EXPECT_EQ(status.at("availableReplicas"), 6);
  EXPECT_EQ(status.at("observedGeneration"), 5);
  EXPECT_EQ(status.at("collisionCount"), 1);
  EXPECT_EQ(Condition(status, "Available").at("reason"), "MinimumReplicasAvailable");
  EXPECT_EQ(Condition(status, "Progressing").at("reason"), "ReplicaSetUpdated");

  clusters[1].on_template = true;
  clusters[1].rollout = ClusterRollout::kComplete;
  status = AggregateStatus(Deployment(6), clusters, "web-abc", TimePoint{});
  EXPECT_EQ(status.at("updatedReplicas"), 6);
  EXPECT_EQ(Condition(status, "Progressing").at("reason"), "NewReplicaSetAvailable");
  EXPECT_EQ(Condition(status, "Progressing").at("message"),
            "ReplicaSet \"web-abc\" has successfully progressed.");
}

TEST(DeploymentStatusTest, PodsWaitingInAFullClusterAreLeftOut) {
  json::object a = Local(4, 4, 4), c = Local(3, 3, 1);  // c: 2 pods wait for room
  std::vector<ClusterStatus> clusters{{.cluster = "a",
                                       .planned = 4,
                                       .local = &a,
                                       .on_template = true,
                                       .rollout = ClusterRollout::kComplete,
                                       .observed = true},
                                      {.cluster = "c",
                                       .planned = 3,
                                       .local = &c,
                                       .on_template = true,
                                       .rollout = ClusterRollout::kComplete,
                                       .pending = 2,
                                       .unscheduled = 2,
                                       .full = true,
                                       .observed = true}};
  json::object status = AggregateStatus(Deployment(5), clusters, "web-abc", TimePoint{});
  EXPECT_EQ(status.at("replicas"), 5);
  EXPECT_EQ(status.at("updatedReplicas"), 5);
  EXPECT_EQ(status.at("availableReplicas"), 5);
  EXPECT_EQ(status.at("unavailableReplicas"), 0);
  EXPECT_EQ(Condition(status, "Progressing").at("reason"), "NewReplicaSetAvailable");
  clusters[1].full = false;  // pods that just wait for the scheduler count
  status = AggregateStatus(Deployment(5), clusters, "web-abc", TimePoint{});
  EXPECT_EQ(status.at("replicas"), 7);
}

TEST(DeploymentStatusTest, AFailedClusterIsAProgressDeadlineExceeded) {
  json::object a = Local(3, 1, 1);
  std::vector<ClusterStatus> clusters{{.cluster = "a",
                                       .planned = 3,
                                       .local = &a,
                                       .on_template = true,
                                       .rollout = ClusterRollout::kFailed,
                                       .observed = true}};
  json::object status = AggregateStatus(Deployment(3), clusters, "web-abc", TimePoint{});
  const json::object& p = Condition(status, "Progressing");
  EXPECT_EQ(p.at("status"), "False");
  EXPECT_EQ(p.at("reason"), "ProgressDeadlineExceeded");
  EXPECT_NE(std::string(p.at("message").as_string()).find("cluster a"), std::string::npos);
  EXPECT_EQ(Condition(status, "Available").at("reason"), "MinimumReplicasUnavailable");
}

TEST(DeploymentStatusTest, ObservedOnlyOnceEveryClusterObserved) {
  json::object a = Local(3, 3, 3);
  json::object d = Deployment(3);
  d["status"].as_object()["observedGeneration"] = 4;
  std::vector<ClusterStatus> clusters{
      {.cluster = "a", .planned = 3, .local = &a, .on_template = true, .observed = false}};
  EXPECT_EQ(AggregateStatus(d, clusters, "web-abc", TimePoint{}).at("observedGeneration"), 4);
}

TEST(DeploymentStatusTest, PausedAndTheBreakdown) {
  json::object a = Local(3, 3, 3);
  std::vector<ClusterStatus> clusters{{.cluster = "a",
                                       .planned = 3,
                                       .local = &a,
                                       .on_template = false,
                                       .rollout = ClusterRollout::kPaused,
                                       .revision = "1",
                                       .observed = true},
                                      {.cluster = "unused"}};
  json::object status = AggregateStatus(Deployment(3, true), clusters, "web-abc", TimePoint{});
  EXPECT_EQ(Condition(status, "Progressing").at("reason"), "DeploymentPaused");
  std::string breakdown = BreakdownAnnotation("2", clusters);
  EXPECT_EQ(breakdown,
            R"({"revision":"2","clusters":{"a":{"planned":3,"revision":"1","replicas":3,)"
            R"("updated":0,"ready":3,"available":3,"unschedulable":0,"rollout":"paused"}}})")
      << "a cluster with nothing planned, no copy and no estimate has no entry";
  EXPECT_EQ(PreviousRollout(breakdown, "a"), "paused");
  EXPECT_EQ(PreviousRollout(breakdown, "b"), "");
  EXPECT_EQ(PreviousRollout("not json", "a"), "");
}

}  // namespace
}  // namespace flotilla::federation::deployment
