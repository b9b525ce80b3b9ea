#include "federation/deployment/rollout.h"

#include <gtest/gtest.h>

namespace flotilla::federation::deployment {
namespace {

json::object Template(const std::string& image) {
  return json::object{
      {"metadata", json::object{{"labels", json::object{{"app", "web"}}}}},
      {"spec",
       json::object{{"containers", json::array{json::object{{"name", "c"}, {"image", image}}}}}}};
}

json::object Federated(const std::string& image, const std::string& strategy = "RollingUpdate",
                       const std::string& order = "", bool paused = false) {
  json::object d{{"metadata", json::object{{"name", "web"}, {"generation", 2}}},
                 {"spec", json::object{{"replicas", 6},
                                       {"template", Template(image)},
                                       {"strategy", json::object{{"type", strategy}}}}}};
  if (!order.empty()) {
    d["metadata"].as_object()["annotations"] =
        json::object{{"federation.kubernetes.io/cluster-update-order", order}};
  }
  if (paused) d["spec"].as_object()["paused"] = true;
  return d;
}

// A local Deployment running `image`; `done` says whether its rollout
// finished.
json::object Local(const std::string& image, bool done) {
  json::object status{{"observedGeneration", 3},
                      {"replicas", 2},
                      {"updatedReplicas", done ? 2 : 1},
                      {"unavailableReplicas", done ? 0 : 1}};
  return json::object{{"metadata", json::object{{"generation", 3}}},
                      {"spec", json::object{{"template", Template(image)}}},
                      {"status", status}};
}

json::object TimedOutLocal(const std::string& image) {
  json::object l = Local(image, false);
  l["status"].as_object()["conditions"] = json::array{json::object{
      {"type", "Progressing"}, {"status", "False"}, {"reason", "ProgressDeadlineExceeded"}}};
  return l;
}

std::vector<LocalDeployment> Clusters(const std::vector<const json::object*>& locals) {
  std::vector<LocalDeployment> out;
  const char* names[] = {"a", "b", "c", "d"};
  for (size_t i = 0; i < locals.size(); ++i) out.push_back({names[i], locals[i]});
  return out;
}

std::vector<bool> NewTemplate(const json::object& d, const std::vector<const json::object*>& l) {
  return PlanDeploymentRollout(d, Clusters(l)).new_template;
}

TEST(RolloutTest, MidUpdateIsTheSeedsThreeTests) {
  EXPECT_FALSE(MidUpdate(Local("v1", true)));
  EXPECT_TRUE(MidUpdate(Local("v1", false)));
  json::object unobserved = Local("v1", true);
  unobserved["metadata"].as_object()["generation"] = 4;
  EXPECT_TRUE(MidUpdate(unobserved));
  json::object unavailable = Local("v1", true);
  unavailable["status"].as_object()["unavailableReplicas"] = 1;
  EXPECT_TRUE(MidUpdate(unavailable));
  EXPECT_TRUE(TimedOut(TimedOutLocal("v1")));
  EXPECT_FALSE(TimedOut(Local("v1", false)));
}

TEST(RolloutTest, OneClusterAtATimeAlphabetically) {
  json::object a1 = Local("v1", true), b1 = Local("v1", true), c1 = Local("v1", true);
  json::object d = Federated("v2");
  EXPECT_EQ(NewTemplate(d, {&a1, &b1, &c1}), (std::vector<bool>{true, false, false}));
  json::object a2_busy = Local("v2", false), a2 = Local("v2", true);
  EXPECT_EQ(NewTemplate(d, {&a2_busy, &b1, &c1}), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(NewTemplate(d, {&a2, &b1, &c1}), (std::vector<bool>{true, true, false}));
  RolloutPlan plan = PlanDeploymentRollout(d, Clusters({&a2, &b1, &c1}));
  EXPECT_EQ(plan.states,
            (std::vector<ClusterRollout>{ClusterRollout::kComplete, ClusterRollout::kUpdating,
                                         ClusterRollout::kWaiting}));
}

TEST(RolloutTest, TheAnnotationOrdersTheClustersFirst) {
  json::object a1 = Local("v1", true), b1 = Local("v1", true), c1 = Local("v1", true);
  EXPECT_EQ(NewTemplate(Federated("v2", "RollingUpdate", "c, b"), {&a1, &b1, &c1}),
            (std::vector<bool>{false, false, true}));
  EXPECT_EQ(UpdateOrder(Federated("v2", "RollingUpdate", "c,nope,b,c"), {"b", "a", "c", "d"}),
            (std::vector<std::string>{"c", "b", "a", "d"}));
}

TEST(RolloutTest, AnyClusterMidUpdateHoldsTheOthers) {
  json::object a1 = Local("v1", true), b_scaling = Local("v1", false), c1 = Local("v1", true);
  // b is mid-update on the old template (scaling, say): no other cluster is,
  // so b may take the template; a, first in order, may not.
  EXPECT_EQ(NewTemplate(Federated("v2"), {&a1, &b_scaling, &c1}),
            (std::vector<bool>{false, true, false}));
  json::object c_scaling = Local("v1", false);
  EXPECT_EQ(NewTemplate(Federated("v2"), {&a1, &b_scaling, &c_scaling}),
            (std::vector<bool>{false, false, false}));
}

TEST(RolloutTest, PodsWaitingForRoomInAFullClusterHoldNoRollout) {
  json::object a1 = Local("v1", true), b1 = Local("v1", true);
  json::object c_probes = Local("v1", true);  // on its template, 2 pods wait for room
  c_probes["status"].as_object()["unavailableReplicas"] = 2;
  EXPECT_TRUE(MidUpdate(c_probes));
  EXPECT_FALSE(MidUpdate(c_probes, /*full=*/true));
  std::vector<LocalDeployment> clusters{{"a", &a1}, {"b", &b1}, {"c", &c_probes, true}};
  EXPECT_EQ(PlanDeploymentRollout(Federated("v2"), clusters).new_template,
            (std::vector<bool>{true, false, false}));
  clusters[2].full = false;  // not known full: its waiting pods are a rollout
  EXPECT_EQ(PlanDeploymentRollout(Federated("v2"), clusters).new_template,
            (std::vector<bool>{false, false, true}));
}

TEST(RolloutTest, AFailedClusterStopsTheUpdate) {
  json::object a_failed = TimedOutLocal("v2"), b1 = Local("v1", true), c1 = Local("v1", true);
  RolloutPlan plan = PlanDeploymentRollout(Federated("v2"), Clusters({&a_failed, &b1, &c1}));
  EXPECT_EQ(plan.new_template, (std::vector<bool>{true, false, false}));
  EXPECT_EQ(plan.states[0], ClusterRollout::kFailed);
  // A new template (an undo) reaches the failed cluster at once.
  EXPECT_EQ(NewTemplate(Federated("v1"), {&a_failed, &b1, &c1}),
            (std::vector<bool>{true, true, true}));
  EXPECT_EQ(NewTemplate(Federated("v3"), {&a_failed, &b1, &c1}),
            (std::vector<bool>{true, false, false}));
}

TEST(RolloutTest, ANewTemplateMovesTheClusterInProgressToTheNewest) {
  json::object a_busy = Local("v2", false), b1 = Local("v1", true), c1 = Local("v1", true);
  EXPECT_EQ(NewTemplate(Federated("v3"), {&a_busy, &b1, &c1}),
            (std::vector<bool>{true, false, false}));
  // a finished v2 before v3 came: it waits its turn like the others.
  json::object a2 = Local("v2", true), b_busy = Local("v2", false);
  EXPECT_EQ(NewTemplate(Federated("v3"), {&a2, &b_busy, &c1}),
            (std::vector<bool>{false, true, false}));
}

TEST(RolloutTest, RecreateUpdatesEveryClusterAtOnce) {
  json::object a1 = Local("v1", true), b_busy = Local("v1", false), c1 = Local("v1", true);
  EXPECT_EQ(NewTemplate(Federated("v2", "Recreate"), {&a1, &b_busy, &c1}),
            (std::vector<bool>{true, true, true}));
}

TEST(RolloutTest, PausedChangesNoTemplate) {
  json::object a2 = Local("v2", false), b1 = Local("v1", true);
  RolloutPlan plan =
      PlanDeploymentRollout(Federated("v2", "RollingUpdate", "", true), Clusters({&a2, &b1}));
  EXPECT_EQ(plan.new_template, (std::vector<bool>{true, false}));
  EXPECT_EQ(plan.states,
            (std::vector<ClusterRollout>{ClusterRollout::kUpdating, ClusterRollout::kPaused}));
}

TEST(RolloutTest, AClusterWithoutALocalDeploymentGetsTheTemplate) {
  json::object a1 = Local("v1", true);
  RolloutPlan plan = PlanDeploymentRollout(Federated("v2"), Clusters({&a1, nullptr}));
  EXPECT_EQ(plan.new_template, (std::vector<bool>{true, true}));
}

TEST(RolloutTest, TemplatesCompareWithoutTheHashLabelAndEmptyFields) {
  json::object local = Local("v1", true);
  json::object& labels = local["spec"]
                             .as_object()["template"]
                             .as_object()["metadata"]
                             .as_object()["labels"]
                             .as_object();
  labels["pod-template-hash"] = "abc";
  local["spec"].as_object()["template"].as_object()["metadata"].as_object()["annotations"] =
      json::object{};
  EXPECT_TRUE(RunsTemplate(local, Template("v1")));
  EXPECT_FALSE(RunsTemplate(local, Template("v2")));
}

}  // namespace
}  // namespace flotilla::federation::deployment
