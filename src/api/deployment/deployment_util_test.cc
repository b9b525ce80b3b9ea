// The Deployment controller's pure rules.
#include "api/deployment/deployment_util.h"

#include <gtest/gtest.h>

namespace flotilla::api::deployment {
namespace {

json::object Deployment(int replicas, json::value surge, json::value unavailable) {
  return {{"metadata", {{"name", "web"}, {"annotations", {{"kubernetes.io/change-cause", "v2"}}}}},
          {"spec",
           {{"replicas", replicas},
            {"strategy",
             {{"type", "RollingUpdate"},
              {"rollingUpdate", {{"maxSurge", surge}, {"maxUnavailable", unavailable}}}}}}}};
}

TEST(DeploymentUtilTest, SurgeRoundsUpAndUnavailableRoundsDown) {
  EXPECT_EQ(MaxSurge(Deployment(10, "25%", "25%")), 3);
  EXPECT_EQ(MaxUnavailable(Deployment(10, "25%", "25%")), 2);
  EXPECT_EQ(MaxSurge(Deployment(3, 2, 0)), 2);
  EXPECT_EQ(MaxUnavailable(Deployment(3, 2, 0)), 0);
  // Both zero: one may be unavailable, so a rollout can move at all.
  EXPECT_EQ(MaxUnavailable(Deployment(3, "0%", "10%")), 1);
  // Capped at replicas.
  EXPECT_EQ(MaxUnavailable(Deployment(2, 0, 5)), 2);
  json::object recreate = {{"spec", {{"replicas", 3}, {"strategy", {{"type", "Recreate"}}}}}};
  EXPECT_EQ(MaxSurge(recreate), 0);
  EXPECT_EQ(MaxUnavailable(recreate), 0);
}

TEST(DeploymentUtilTest, HashIsStableIgnoresKeyOrderAndMovesWithCollisions) {
  json::object a = {{"metadata", {{"labels", {{"app", "web"}}}}},
                    {"spec", {{"containers", json::array{{{"name", "c"}, {"image", "nginx:1"}}}}}}};
  json::object b = {{"spec", {{"containers", json::array{{{"image", "nginx:1"}, {"name", "c"}}}}}},
                    {"metadata", {{"labels", {{"app", "web"}}}}}};
  std::string h = ComputeHash(a, std::nullopt);
  EXPECT_EQ(h, ComputeHash(b, std::nullopt));
  EXPECT_FALSE(h.empty());
  EXPECT_LE(h.size(), 10u);
  EXPECT_EQ(h.find_first_not_of("bcdfghjklmnpqrstvwxz2456789"), std::string::npos) << h;
  EXPECT_NE(h, ComputeHash(a, 1));
  EXPECT_NE(ComputeHash(a, 1), ComputeHash(a, 2));
  a["spec"].as_object()["containers"].as_array()[0].as_object()["image"] = "nginx:2";
  EXPECT_NE(h, ComputeHash(a, std::nullopt));
}

TEST(DeploymentUtilTest, EqualIgnoreHashIgnoresTheHashLabelAndEmptyFields) {
  json::object d = {{"metadata", {{"labels", {{"app", "web"}}}}},
                    {"spec", {{"containers", json::array{{{"name", "c"}}}}}}};
  json::object rs = {
      {"metadata",
       {{"labels", {{"app", "web"}, {"pod-template-hash", "abc"}}},
        {"annotations", json::object()}}},
      {"spec", {{"containers", json::array{{{"name", "c"}}}}, {"volumes", nullptr}}}};
  EXPECT_TRUE(EqualIgnoreHash(d, rs));
  rs["metadata"].as_object()["labels"].as_object()["tier"] = "x";
  EXPECT_FALSE(EqualIgnoreHash(d, rs));
}

TEST(DeploymentUtilTest, NewReplicaSetAnnotationsCarryRevisionsAndHistory) {
  json::object d = Deployment(4, "25%", "25%");
  json::object rs = {{"metadata", {{"name", "web-abc"}}}};
  EXPECT_TRUE(SetNewReplicaSetAnnotations(d, rs, "1", false));
  const json::object& a = rs["metadata"].as_object()["annotations"].as_object();
  EXPECT_EQ(a.at(kRevisionAnnotation), "1");
  EXPECT_EQ(a.at(kDesiredReplicasAnnotation), "4");
  EXPECT_EQ(a.at(kMaxReplicasAnnotation), "5");
  EXPECT_EQ(a.at("kubernetes.io/change-cause"), "v2");
  EXPECT_FALSE(SetNewReplicaSetAnnotations(d, rs, "1", true));
  // Becoming new again at revision 3 (a rollback) keeps revision 1.
  EXPECT_TRUE(SetNewReplicaSetAnnotations(d, rs, "3", true));
  EXPECT_EQ(a.at(kRevisionAnnotation), "3");
  EXPECT_EQ(a.at(kRevisionHistoryAnnotation), "1");
  EXPECT_TRUE(SetNewReplicaSetAnnotations(d, rs, "5", true));
  EXPECT_EQ(a.at(kRevisionHistoryAnnotation), "1,3");
  // An older revision never replaces a newer one.
  EXPECT_FALSE(SetNewReplicaSetAnnotations(d, rs, "2", true));
  EXPECT_EQ(a.at(kRevisionAnnotation), "5");
}

TEST(DeploymentUtilTest, ConditionsKeepTransitionTimeWhileStatusHolds) {
  json::object status;
  TimePoint t0 = TimePoint(std::chrono::seconds(1000));
  SetCondition(status, NewCondition("Progressing", "True", kNewRSReason, "Created", t0));
  SetCondition(status, NewCondition("Progressing", "True", kNewRSReason, "again",
                                    t0 + std::chrono::seconds(5)));
  EXPECT_EQ(GetCondition(status, "Progressing")->at("message"), "Created");
  SetCondition(status, NewCondition("Progressing", "True", kNewRSAvailableReason, "done",
                                    t0 + std::chrono::seconds(9)));
  const json::object* c = GetCondition(status, "Progressing");
  EXPECT_EQ(c->at("reason"), json::value(kNewRSAvailableReason));
  EXPECT_EQ(c->at("lastTransitionTime"), json::value(FormatRfc3339(t0)));
  EXPECT_EQ(c->at("lastUpdateTime"), json::value(FormatRfc3339(t0 + std::chrono::seconds(9))));
  EXPECT_EQ(status.at("conditions").as_array().size(), 1u);
}

}  // namespace
}  // namespace flotilla::api::deployment
