// The federated Deployment controller against real API servers
// (cluster::testing::ControllerTest): the tests play each member's
// Deployment controller (its local ReplicaSets and the local Deployment's
// status), so that they decide exactly when a cluster's rollout
// progresses, finishes or fails. Time moves on a FakeClock.
#include "federation/deployment/deployment_controller.h"

#include <gtest/gtest.h>

#include "api/annotations.h"
#include "api/deployment/deployment_util.h"
#include "api/federated.h"
#include "federation/cluster/controller_fixture.h"
#include "federation/common/member_copy.h"

namespace flotilla::federation::deployment {
namespace {

using cluster::testing::At;
using runtime::testing::Eventually;

std::string ImageOf(const json::object& obj) {
  const json::value* c = Find(obj, "spec.template.spec.containers");
  if (c == nullptr || !c->is_array() || c->as_array().empty()) return "";
  return StringAt(c->as_array()[0].as_object(), "image");
}

class DeploymentControllerTest : public cluster::testing::ControllerTest {
 protected:
  DeploymentControllerTest() : ControllerTest({DeploymentController::kName}, "default/web") {}

  // Creates of Deployments fail while reject_[i] is set.
  std::shared_ptr<client::Client> ReadyClient(int i) override {
    return std::make_shared<cluster::testing::RejectingClient>(members_[i].InProcess(),
                                                               "deployments", reject_[i]);
  }
  // The members' pods are not played unless a test adds them: without a
  // test's own threshold, missing pods never make a cluster full (however
  // far the nudges move the clock).
  void Start(Duration unschedulable_threshold = std::chrono::hours(24)) {
    WorkloadOptions options;
    options.unschedulable_threshold = unschedulable_threshold;
    options.recheck_delay = std::chrono::seconds(30);
    options.member_change_delay = Duration::zero();
    // Ready before the start, as after a restart's probes: no check plans
    // without a cluster that is about to come.
    StartWith([&] { Make<DeploymentController>(options); });
  }

  // A Deployment of `replicas` running `image` (the API server defaults
  // the strategy: RollingUpdate, 25%/25%).
  void Create(int64_t replicas, const std::string& image, json::object annotations = {},
              const std::string& strategy = "") {
    auto d = ParseJsonObject(R"({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "x"}]}}}})");
    ASSERT_TRUE(d.ok());
    json::object obj = *d;
    obj["metadata"].as_object()["annotations"] = std::move(annotations);
    json::object& spec = obj["spec"].as_object();
    spec["replicas"] = replicas;
    spec["template"]
        .as_object()["spec"]
        .as_object()["containers"]
        .as_array()[0]
        .as_object()["image"] = image;
    if (!strategy.empty()) spec["strategy"] = json::object{{"type", strategy}};
    auto made = fed_client_->Create(kDeployments, kNs, obj);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
  }
  json::object Fed() {
    auto d = fed_client_->Get(kDeployments, kNs, "web");
    return d.ok() ? *d : json::object{};
  }
  // Read, modify, write on the federated Deployment.
  void Edit(const std::function<void(json::object&)>& change) {
    ASSERT_TRUE(Eventually([&] {
      json::object d = Fed();
      change(d);
      return fed_client_->Update(kDeployments, kNs, d).ok();
    }));
  }
  void SetImage(const std::string& image) {
    Edit([&](json::object& d) {
      d["spec"]
          .as_object()["template"]
          .as_object()["spec"]
          .as_object()["containers"]
          .as_array()[0]
          .as_object()["image"] = image;
    });
  }
  json::object Local(int i) {
    auto d = member_clients_[i]->Get(kDeployments, kNs, "web");
    return d.ok() ? *d : json::object{};
  }
  std::vector<std::string> Images() {
    std::vector<std::string> out;
    for (int i = 0; i < 3; ++i) out.push_back(ImageOf(Local(i)));
    return out;
  }
  std::vector<int64_t> Replicas() {
    std::vector<int64_t> out;
    for (int i = 0; i < 3; ++i) {
      json::value r = At(Local(i), "spec.replicas");
      out.push_back(r.is_null() ? -1 : r.to_number<int64_t>());
    }
    return out;
  }
  std::vector<json::object> Shadows() {
    auto list = fed_client_->List(kReplicaSets, kNs, {});
    std::vector<json::object> out;
    if (list.ok()) out = list->items;
    return out;
  }
  json::object Shadow(const std::string& name) {
    auto rs = fed_client_->Get(kReplicaSets, kNs, name);
    return rs.ok() ? *rs : json::object{};
  }
  // Plays member i's Deployment controller: the local ReplicaSet of the
  // local Deployment's template holds every replica, ready; older ones none.
  void Finish(int i, const std::string& rs_name = "") {
    json::object d = Local(i);
    ASSERT_FALSE(d.empty());
    int64_t replicas = IntAt(d, "spec.replicas");
    std::string current = rs_name.empty() ? LocalReplicaSetName(d) : rs_name;
    for (const json::object& rs : LocalReplicaSets(i)) {
      if (StringAt(rs, "metadata.name") != current) SizeLocalReplicaSet(i, d, rs, 0);
    }
    SizeLocalReplicaSet(i, d, EnsureLocalReplicaSet(i, d, current), replicas);
    WriteLocalStatus(i, [&](json::object& status, const json::object& local) {
      status = json::object{{"observedGeneration", *Find(local, "metadata.generation")},
                            {"replicas", replicas},
                            {"updatedReplicas", replicas},
                            {"readyReplicas", replicas},
                            {"availableReplicas", replicas},
                            {"unavailableReplicas", 0}};
    });
  }
  // The local ReplicaSet `current` of member i's Deployment `d`, created
  // (with d's template) when there is none.
  json::object EnsureLocalReplicaSet(int i, const json::object& d, const std::string& current) {
    json::object rs = LocalReplicaSet(i, current);
    if (rs.empty()) {
      rs = json::object{
          {"apiVersion", "apps/v1"},
          {"kind", "ReplicaSet"},
          {"metadata", json::object{{"name", current}, {"ownerReferences", OwnerRef(d)}}},
          {"spec", json::object{{"replicas", 0},
                                {"selector", *Find(d, "spec.selector")},
                                {"template", *Find(d, "spec.template")}}}};
      json::object& labels = rs["spec"]
                                 .as_object()["template"]
                                 .as_object()["metadata"]
                                 .as_object()["labels"]
                                 .as_object();
      labels["pod-template-hash"] = current.substr(4);
      auto made = member_clients_[i]->Create(kReplicaSets, kNs, rs);
      EXPECT_TRUE(made.ok()) << made.status().ToString();
      if (made.ok()) rs = *made;
    }
    return rs;
  }
  // Member i's rollout has begun: one new replica, one unavailable.
  void Begin(int i, bool timed_out = false) {
    WriteLocalStatus(i, [&](json::object& status, const json::object& local) {
      int64_t replicas = IntAt(local, "spec.replicas");
      status = json::object{{"observedGeneration", *Find(local, "metadata.generation")},
                            {"replicas", replicas + 1},
                            {"updatedReplicas", 1},
                            {"readyReplicas", replicas - 1},
                            {"availableReplicas", replicas - 1},
                            {"unavailableReplicas", 1}};
      if (timed_out) {
        status["conditions"] = json::array{json::object{{"type", "Progressing"},
                                                        {"status", "False"},
                                                        {"reason", "ProgressDeadlineExceeded"},
                                                        {"message", "timed out"}}};
      }
    });
  }
  void WriteLocalStatus(int i, const std::function<void(json::object&, const json::object&)>& set) {
    ASSERT_TRUE(Eventually([&] {
      json::object d = Local(i);
      json::object status;
      set(status, d);
      d["status"] = status;
      return member_clients_[i]->UpdateStatus(kDeployments, kNs, d).ok();
    }));
  }
  static std::string LocalReplicaSetName(const json::object& d) {
    return "web-" +
           api::deployment::ComputeHash(Find(d, "spec.template")->as_object(), std::nullopt);
  }
  static json::array OwnerRef(const json::object& d) {
    return json::array{json::object{{"apiVersion", "apps/v1"},
                                    {"kind", "Deployment"},
                                    {"name", "web"},
                                    {"uid", *Find(d, "metadata.uid")},
                                    {"controller", true}}};
  }
  std::vector<json::object> LocalReplicaSets(int i) {
    auto list = member_clients_[i]->List(kReplicaSets, kNs, {});
    return list.ok() ? list->items : std::vector<json::object>{};
  }
  json::object LocalReplicaSet(int i, const std::string& name) {
    auto rs = member_clients_[i]->Get(kReplicaSets, kNs, name);
    return rs.ok() ? *rs : json::object{};
  }
  void SizeLocalReplicaSet(int i, const json::object& d, json::object rs, int64_t n) {
    rs["spec"].as_object()["replicas"] = n;
    auto updated = member_clients_[i]->Update(kReplicaSets, kNs, rs);
    ASSERT_TRUE(updated.ok()) << updated.status().ToString();
    json::object with = *updated;
    with["status"] = json::object{{"replicas", n},
                                  {"fullyLabeledReplicas", n},
                                  {"readyReplicas", n},
                                  {"availableReplicas", n},
                                  {"observedGeneration", *Find(with, "metadata.generation")}};
    ASSERT_TRUE(member_clients_[i]->UpdateStatus(kReplicaSets, kNs, with).ok());
  }
  // Plays member i's scheduler and kubelet: `running` pods of its local
  // Deployment's current ReplicaSet on a node, `pending` that no node takes
  // (named `prefix` and a number).
  void AddPods(int i, int running, int pending, const std::string& prefix = "web-") {
    json::object rs = LocalReplicaSet(i, LocalReplicaSetName(Local(i)));
    ASSERT_FALSE(rs.empty());
    json::array owner{json::object{{"apiVersion", "apps/v1"},
                                   {"kind", "ReplicaSet"},
                                   {"name", *Find(rs, "metadata.name")},
                                   {"uid", *Find(rs, "metadata.uid")},
                                   {"controller", true}}};
    for (int p = 0; p < running + pending; ++p) {
      json::object spec{
          {"containers", json::array{json::object{{"name", "c"}, {"image", "nginx:1"}}}}};
      if (p < running) spec["nodeName"] = "n1";
      json::object pod{{"apiVersion", "v1"},
                       {"kind", "Pod"},
                       {"metadata", json::object{{"name", prefix + std::to_string(p)},
                                                 {"labels", json::object{{"app", "web"}}},
                                                 {"ownerReferences", owner}}},
                       {"spec", std::move(spec)}};
      if (p >= running) {
        CreateUnschedulablePod(i, pod);
        continue;
      }
      auto made = member_clients_[i]->Create(kPods, kNs, pod);
      ASSERT_TRUE(made.ok()) << made.status().ToString();
    }
  }
  void FinishAll() {
    for (int i = 0; i < 3; ++i) Finish(i);
  }
  // Creates 6 replicas of nginx:1 and finishes their first rollout.
  void Running(json::object annotations = {}, const std::string& strategy = "") {
    Start();
    Create(6, "nginx:1", std::move(annotations), strategy);
    ASSERT_TRUE(Settle([&] { return Replicas() == std::vector<int64_t>{2, 2, 2}; }));
    FinishAll();
    ASSERT_TRUE(Settle([&] { return Complete(); }));
  }
  // The federated Deployment says what `kubectl rollout status` waits for.
  bool Complete() {
    json::object d = Fed();
    int64_t want = IntAt(d, "spec.replicas");
    return IntAt(d, "status.observedGeneration") == IntAt(d, "metadata.generation") &&
           IntAt(d, "status.updatedReplicas") == want && IntAt(d, "status.replicas") == want &&
           IntAt(d, "status.availableReplicas") == want &&
           StringAt(Condition("Progressing"), "reason") == "NewReplicaSetAvailable";
  }
  json::object Condition(const std::string& type) {
    json::object d = Fed();
    const json::value* conds = Find(d, "status.conditions");
    if (conds == nullptr || !conds->is_array()) return {};
    for (const json::value& c : conds->as_array()) {
      if (StringAt(c.as_object(), "type") == type) return c.as_object();
    }
    return {};
  }
  // Enqueues the Deployment, as any event of it would.
  void controller_kick() { Controller().queue().Add("default/web"); }

  std::atomic<bool> reject_[kMembers] = {false, false, false};
};

using Strings = std::vector<std::string>;

TEST_F(DeploymentControllerTest, PlacesReplicasAndKeepsAShadowOfTheTemplate) {
  Running();
  json::object local = Local(0);
  EXPECT_TRUE(IsManaged(local));
  EXPECT_EQ(ImageOf(local), "nginx:1");
  std::string shadow_name = LocalReplicaSetName(local);
  json::object shadow = Shadow(shadow_name);
  ASSERT_FALSE(shadow.empty()) << "the shadow is named as the members name their ReplicaSets";
  EXPECT_EQ(api::AnnotationAt(shadow, api::kShadowReplicaSetAnnotation), "true");
  EXPECT_EQ(api::AnnotationAt(shadow, "deployment.kubernetes.io/revision"), "1");
  // The shadow counts the members' local ReplicaSets, which their informers
  // may see after the local Deployments' status that completes the rollout.
  ASSERT_TRUE(Settle([&] {
    shadow = Shadow(shadow_name);
    return At(shadow, "spec.replicas") == json::value(6) &&
           At(shadow, "status.readyReplicas") == json::value(6);
  })) << json::serialize(shadow);
  EXPECT_EQ(StringAt(Find(shadow, "metadata.ownerReferences")->as_array()[0].as_object(), "uid"),
            StringAt(Fed(), "metadata.uid"));
  EXPECT_EQ(api::AnnotationAt(Fed(), "deployment.kubernetes.io/revision"), "1");
  // The local Deployments carry none of the federation's bookkeeping.
  EXPECT_EQ(api::FindAnnotation(local, api::kDeploymentStatusAnnotation), nullptr);
  EXPECT_EQ(api::FindAnnotation(local, "deployment.kubernetes.io/revision"), nullptr);
  EXPECT_EQ(Condition("Available").at("reason"), "MinimumReplicasAvailable");
}

TEST_F(DeploymentControllerTest, RollsOutOneClusterAtATimeInTheAnnotationsOrder) {
  Running({{api::kClusterUpdateOrderAnnotation, "c,a"}});
  SetImage("nginx:2");
  Holds([&] { return Images() == Strings{"nginx:1", "nginx:1", "nginx:2"}; });
  EXPECT_EQ(IntAt(Fed(), "status.updatedReplicas"), 0);
  Begin(2);
  Holds([&] { return Images() == Strings{"nginx:1", "nginx:1", "nginx:2"}; });
  Finish(2);
  ASSERT_TRUE(Settle([&] { return Images() == Strings{"nginx:2", "nginx:1", "nginx:2"}; }));
  ASSERT_TRUE(Settle([&] { return IntAt(Fed(), "status.updatedReplicas") == 2; }));
  EXPECT_FALSE(Complete());
  Finish(0);
  ASSERT_TRUE(Settle([&] { return Images() == Strings{"nginx:2", "nginx:2", "nginx:2"}; }));
  Finish(1);
  ASSERT_TRUE(Settle([&] { return Complete(); }));
  EXPECT_EQ(api::AnnotationAt(Fed(), "deployment.kubernetes.io/revision"), "2");
  Strings want{"Rolling out revision 2 to cluster a", "Rolling out revision 2 to cluster b",
               "Rolling out revision 2 to cluster c"};
  // Events are written in the background.
  EXPECT_TRUE(Eventually([&] {
    Strings started = EventMessages("RolloutStarted");
    std::sort(started.begin(), started.end());
    return started == want;
  })) << json::serialize(json::value_from(EventMessages("RolloutStarted")));
  EXPECT_TRUE(Eventually([&] { return !EventMessages("RolloutCompleted").empty(); }));
}

// Seed 001, Tests: "If a failure in update stops the whole update".
TEST_F(DeploymentControllerTest, AFailureInAnUpdateStopsTheWholeUpdate) {
  Running();
  SetImage("nginx:broken");
  ASSERT_TRUE(Settle([&] { return Images()[0] == "nginx:broken"; }));
  Begin(0, /*timed_out=*/true);
  ASSERT_TRUE(Settle(
      [&] { return StringAt(Condition("Progressing"), "reason") == "ProgressDeadlineExceeded"; }));
  EXPECT_EQ(StringAt(Condition("Progressing"), "status"), "False");
  EXPECT_NE(StringAt(Condition("Progressing"), "message").find("cluster a"), std::string::npos);
  Holds([&] { return Images() == Strings{"nginx:broken", "nginx:1", "nginx:1"}; });
  EXPECT_TRUE(Eventually([&] { return !EventMessages("RolloutFailed").empty(); }));
  // Undo: the failed cluster goes back at once; the others never changed.
  SetImage("nginx:1");
  ASSERT_TRUE(Settle([&] { return Images() == Strings{"nginx:1", "nginx:1", "nginx:1"}; }));
  FinishAll();
  ASSERT_TRUE(Settle([&] { return Complete(); }));
}

// Seed 001, Tests: "If a new update is requested before the previous one
// was completed".
TEST_F(DeploymentControllerTest, ANewUpdateBeforeThePreviousOneCompleted) {
  Running();
  SetImage("nginx:2");
  ASSERT_TRUE(Settle([&] { return Images()[0] == "nginx:2"; }));
  Finish(0);
  ASSERT_TRUE(Settle([&] { return Images()[1] == "nginx:2"; }));
  Begin(1);
  SetImage("nginx:3");
  // b, in progress, moves to the newest at once; a (done with 2) and c wait.
  Holds([&] { return Images() == Strings{"nginx:2", "nginx:3", "nginx:1"}; });
  Finish(1);
  ASSERT_TRUE(Settle([&] { return Images() == Strings{"nginx:3", "nginx:3", "nginx:1"}; }));
  Finish(0);
  ASSERT_TRUE(Settle([&] { return Images() == Strings{"nginx:3", "nginx:3", "nginx:3"}; }));
  Finish(2);
  ASSERT_TRUE(Settle([&] { return Complete(); }));
  EXPECT_EQ(api::AnnotationAt(Fed(), "deployment.kubernetes.io/revision"), "3");
}

TEST_F(DeploymentControllerTest, RecreateUpdatesEveryClusterAtOnce) {
  Running({}, "Recreate");
  SetImage("nginx:2");
  ASSERT_TRUE(Settle([&] { return Images() == Strings{"nginx:2", "nginx:2", "nginx:2"}; }));
}

TEST_F(DeploymentControllerTest, PauseHoldsTheRolloutAndResumeContinuesIt) {
  Running();
  SetImage("nginx:2");
  ASSERT_TRUE(Settle([&] { return Images()[0] == "nginx:2"; }));
  Edit([](json::object& d) { d["spec"].as_object()["paused"] = true; });
  ASSERT_TRUE(Settle([&] {
    for (int i = 0; i < 3; ++i) {
      if (At(Local(i), "spec.paused") != json::value(true)) return false;
    }
    return StringAt(Condition("Progressing"), "reason") == "DeploymentPaused";
  }));
  FinishAll();  // a finished; every member observed the pause
  Holds([&] { return Images() == Strings{"nginx:2", "nginx:1", "nginx:1"}; });
  Edit([](json::object& d) { d["spec"].as_object()["paused"] = false; });
  ASSERT_TRUE(Settle([&] {
    for (int i = 0; i < 3; ++i) {
      if (At(Local(i), "spec.paused") != json::value(false)) return false;
    }
    return true;
  }));
  // b, next in order, gets the template (with the resume itself, or once a
  // and c observed the resume); c waits until b has finished.
  Finish(0);
  Finish(2);
  ASSERT_TRUE(Settle([&] { return Images()[1] == "nginx:2"; }));
  EXPECT_EQ(Images()[2], "nginx:1");
  Finish(1);
  ASSERT_TRUE(Settle([&] { return Images()[2] == "nginx:2"; }));
  Finish(2);
  ASSERT_TRUE(Settle([&] { return Complete(); }));
}

TEST_F(DeploymentControllerTest, ScalingDuringARolloutReachesEveryClusterAtOnce) {
  Running();
  SetImage("nginx:2");
  ASSERT_TRUE(Settle([&] { return Images()[0] == "nginx:2"; }));
  Begin(0);
  Edit([](json::object& d) { d["spec"].as_object()["replicas"] = 9; });
  ASSERT_TRUE(Settle([&] { return Replicas() == std::vector<int64_t>{3, 3, 3}; }));
  EXPECT_EQ(Images(), (Strings{"nginx:2", "nginx:1", "nginx:1"}));
}

// Seed 001, Tests: "If Federated ReplicaSets have the correct statuses and
// replica counts".
TEST_F(DeploymentControllerTest, ShadowCountsAreTheMembersSums) {
  Running();
  std::string v1 = LocalReplicaSetName(Local(0));
  SetImage("nginx:2");
  ASSERT_TRUE(Settle([&] { return Images()[0] == "nginx:2"; }));
  Finish(0);
  std::string v2 = LocalReplicaSetName(Local(0));
  ASSERT_TRUE(Settle([&] {
    return At(Shadow(v2), "spec.replicas") == json::value(2) &&
           At(Shadow(v1), "spec.replicas") == json::value(4) &&
           At(Shadow(v2), "status.availableReplicas") == json::value(2);
  }));
  EXPECT_EQ(api::AnnotationAt(Shadow(v2), "deployment.kubernetes.io/revision"), "2");
  EXPECT_EQ(api::AnnotationAt(Shadow(v1), "deployment.kubernetes.io/revision"), "1");
  ASSERT_TRUE(Settle([&] {
    return IntAt(Fed(), "status.updatedReplicas") == 2 && IntAt(Fed(), "status.replicas") == 6;
  }));
}

// A member whose Deployment controller names its ReplicaSets otherwise
// (another hash) still counts for the shadow of the same template.
TEST_F(DeploymentControllerTest, ShadowCountsFollowTheTemplateWhereNamesDiffer) {
  Start();
  Create(6, "nginx:1");
  ASSERT_TRUE(Settle([&] { return Replicas() == std::vector<int64_t>{2, 2, 2}; }));
  Finish(0);
  Finish(1);
  Finish(2, "web-elsewhere");
  std::string name = LocalReplicaSetName(Local(0));
  ASSERT_TRUE(Settle([&] { return At(Shadow(name), "status.readyReplicas") == json::value(6); }));
  EXPECT_EQ(At(Shadow(name), "spec.replicas"), json::value(6));
  EXPECT_TRUE(Shadow("web-elsewhere").empty());
}

// Seed 001, Tests: "Federated deployment controller overrites any direct
// updates to SFRS by users"; a deleted shadow comes back.
TEST_F(DeploymentControllerTest, DirectUpdatesToAShadowAreOverwritten) {
  Running();
  std::string name = LocalReplicaSetName(Local(0));
  json::value uid = At(Shadow(name), "metadata.uid");
  ASSERT_TRUE(Eventually([&] {
    json::object s = Shadow(name);
    s["spec"].as_object()["replicas"] = 50;
    s["spec"]
        .as_object()["template"]
        .as_object()["spec"]
        .as_object()["containers"]
        .as_array()[0]
        .as_object()["image"] = "evil";
    s["metadata"].as_object()["labels"].as_object().erase(api::kShadowOfLabel);
    return fed_client_->Update(kReplicaSets, kNs, s).ok();
  }));
  ASSERT_TRUE(Settle([&] {
    json::object s = Shadow(name);
    return At(s, "spec.replicas") == json::value(6) && ImageOf(s) == "nginx:1" &&
           StringAt(s, "metadata.labels.app") == "web";
  }));
  ASSERT_TRUE(fed_client_->Delete(kReplicaSets, kNs, name, {}).ok());
  ASSERT_TRUE(Settle([&] {
    json::object s = Shadow(name);
    return !s.empty() && At(s, "metadata.uid") != uid && At(s, "spec.replicas") == json::value(6);
  }));
  // Nothing reached a member.
  EXPECT_EQ(Replicas(), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(At(LocalReplicaSet(0, name), "spec.replicas"), json::value(2));
}

// Seed 001, Tests: "If FRS is not deleted unless FD is deleted and is
// deleted when FD is deleted".
TEST_F(DeploymentControllerTest, ShadowsGoOnlyWithTheirDeployment) {
  Running();
  SetImage("nginx:2");
  ASSERT_TRUE(Settle([&] { return Images()[0] == "nginx:2"; }));
  FinishAll();
  ASSERT_TRUE(Settle([&] { return Shadows().size() == 2; }));
  Holds([&] { return Shadows().size() == 2; });
  // Without a policy: the local Deployments stay.
  ASSERT_TRUE(fed_client_->Delete(kDeployments, kNs, "web", {}).ok());
  ASSERT_TRUE(Settle([&] { return Shadows().empty() && Fed().empty(); }));
  EXPECT_EQ(Replicas(), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(LocalReplicaSets(0).size(), 2u);  // the members' own, untouched
}

TEST_F(DeploymentControllerTest, CascadingDeletionTakesTheLocalDeployments) {
  Running();
  client::DeleteOptions background{.propagation_policy = "Background"};
  ASSERT_TRUE(fed_client_->Delete(kDeployments, kNs, "web", background).ok());
  ASSERT_TRUE(Settle([&] { return Shadows().empty() && Fed().empty(); }));
  EXPECT_EQ(Replicas(), (std::vector<int64_t>{-1, -1, -1}));
}

TEST_F(DeploymentControllerTest, OldShadowsBeyondTheHistoryLimitGo) {
  Running();
  Edit([](json::object& d) { d["spec"].as_object()["revisionHistoryLimit"] = 1; });
  ASSERT_TRUE(Settle([&] {
    for (int i = 0; i < 3; ++i) {
      if (At(Local(i), "spec.revisionHistoryLimit") != json::value(1)) return false;
    }
    return true;
  }));
  FinishAll();  // the members observe the change
  for (const char* image : {"nginx:2", "nginx:3"}) {
    SetImage(image);
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(Settle([&] { return Images()[i] == image; }));
      Finish(i);
    }
    ASSERT_TRUE(Settle([&] { return Complete(); }));
  }
  // Revisions 2 and 3 stay; 1 went.
  ASSERT_TRUE(Settle([&] { return Shadows().size() == 2; }));
  for (const json::object& s : Shadows()) {
    EXPECT_NE(api::AnnotationAt(s, "deployment.kubernetes.io/revision"), "1");
  }
}

TEST_F(DeploymentControllerTest, ARestartedControllerResumesTheRolloutWithoutRecreating) {
  Running();
  std::vector<json::value> uids;
  for (int i = 0; i < 3; ++i) uids.push_back(At(Local(i), "metadata.uid"));
  SetImage("nginx:2");
  ASSERT_TRUE(Settle([&] { return Images()[0] == "nginx:2"; }));
  Stop();
  Finish(0);
  Start();
  ASSERT_TRUE(Settle([&] { return Images() == Strings{"nginx:2", "nginx:2", "nginx:1"}; }));
  Finish(1);
  ASSERT_TRUE(Settle([&] {
    return Images() == Strings{"nginx:2", "nginx:2", "nginx:2"};
  })) << json::serialize(Fed())
      << "\n"
      << json::serialize(Local(0)) << "\n"
      << json::serialize(Local(1));
  Finish(2);
  ASSERT_TRUE(Settle([&] { return Complete(); }));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(At(Local(i), "metadata.uid"), uids[i]);
  EXPECT_EQ(Shadows().size(), 2u);
}

TEST_F(DeploymentControllerTest, AnOfflineClustersReplicasGoToTheOthers) {
  Running();
  ctx_->clusters().SetNotReady("c");
  ASSERT_TRUE(Settle([&] { return Replicas() == std::vector<int64_t>{3, 3, 2}; }));
  SetReady(2);
  ASSERT_TRUE(Settle([&] { return Replicas() == std::vector<int64_t>{2, 2, 2}; }));
}

// [I4] for Deployments: the pods of a local Deployment's ReplicaSets that
// no node takes make the cluster full; its share goes to the others.
TEST_F(DeploymentControllerTest, PodsThatCannotBeScheduledMoveReplicasElsewhere) {
  Start(std::chrono::seconds(60));
  Create(30, "nginx:1",
         {{api::kDeploymentPreferencesAnnotation,
           R"({"rebalance": true, "clusters": {"*": {"weight": 1}}})"}});
  ASSERT_TRUE(Settle([&] { return Replicas() == std::vector<int64_t>{10, 10, 10}; }));
  FinishAll();
  AddPods(0, 10, 0);
  AddPods(1, 10, 0);
  AddPods(2, 4, 6);
  // c's Deployment says what runs: 4 available.
  WriteLocalStatus(2, [](json::object& status, const json::object&) {
    status["readyReplicas"] = 4;
    status["availableReplicas"] = 4;
    status["unavailableReplicas"] = 6;
  });
  // The controller has seen the waiting pods before the clock moves.
  ASSERT_TRUE(Settle([&] {
    auto b = ParseJsonObject(api::AnnotationAt(Fed(), api::kDeploymentStatusAnnotation));
    return b.ok() && At(*b, "clusters.c.unschedulable") == json::value(6);
  }));
  clock_.Advance(std::chrono::seconds(61));
  controller_kick();
  // c keeps the 4 it runs; a and b take the 26 it cannot run: 30 in all.
  ASSERT_TRUE(Settle([&] {
    return Replicas() == std::vector<int64_t>{13, 13, 4};
  })) << json::serialize(json::value_from(Replicas()));
}

// Issue 36: a new template whose pods no node in a cluster takes (it asks
// for more than the cluster has free) is capacity information like any
// other: after the threshold that cluster's share moves to the others,
// make-before-break, and the rollout goes on instead of stalling there.
TEST_F(DeploymentControllerTest, ARolloutGoesOnWhenAClusterCannotRunTheNewTemplate) {
  Start(std::chrono::seconds(60));
  Create(6, "nginx:1");
  ASSERT_TRUE(Settle([&] { return Replicas() == std::vector<int64_t>{2, 2, 2}; }));
  FinishAll();
  for (int i = 0; i < 3; ++i) AddPods(i, 2, 0, "v1-");
  ASSERT_TRUE(Settle([&] { return Complete(); }));

  SetImage("nginx:2");
  ASSERT_TRUE(Settle([&] { return Images()[0] == "nginx:2"; }));
  Finish(0);
  AddPods(0, 2, 0, "v2-");
  ASSERT_TRUE(Settle([&] { return Images() == Strings{"nginx:2", "nginx:2", "nginx:1"}; }));
  // b's Deployment controller surges one pod of the new template; no node
  // takes it. Its two old pods keep running.
  json::object b = Local(1);
  SizeLocalReplicaSet(1, b, EnsureLocalReplicaSet(1, b, LocalReplicaSetName(b)), 1);
  AddPods(1, 0, 1, "v2-");
  WriteLocalStatus(1, [](json::object& status, const json::object& local) {
    status = json::object{{"observedGeneration", *Find(local, "metadata.generation")},
                          {"replicas", 3},
                          {"updatedReplicas", 1},
                          {"readyReplicas", 2},
                          {"availableReplicas", 2},
                          {"unavailableReplicas", 1}};
  });
  ASSERT_TRUE(Settle([&] {
    auto s = ParseJsonObject(api::AnnotationAt(Fed(), api::kDeploymentStatusAnnotation));
    return s.ok() && At(*s, "clusters.b.unschedulable") == json::value(1);
  }));
  // Within the threshold nothing moves, and c waits its turn.
  Holds([&] { return Replicas() == std::vector<int64_t>{2, 2, 2} && Images()[2] == "nginx:1"; });
  clock_.Advance(std::chrono::seconds(61));
  controller_kick();
  // b can run none of the new template: a and c take its share, b keeps
  // its two available old pods until theirs are available.
  ASSERT_TRUE(Settle([&] {
    return Replicas() == std::vector<int64_t>{3, 2, 3};
  })) << json::serialize(json::value_from(Replicas()));
  Finish(0);
  Finish(2);
  ASSERT_TRUE(Settle([&] {
    return Replicas() == std::vector<int64_t>{3, 0, 3};
  })) << json::serialize(json::value_from(Replicas()));
  // b's controller scales it down; with nothing left to roll out there,
  // the rollout moves on to c and completes.
  Finish(1);
  ASSERT_TRUE(Settle([&] { return Images()[2] == "nginx:2"; }))
      << json::serialize(json::value_from(Images()));
  Finish(2);
  ASSERT_TRUE(Settle([&] { return Complete(); }));
  EXPECT_EQ(IntAt(Fed(), "status.replicas"), 6);
}

// [E1]: a member that refuses the create gets nothing until the retry; its
// replicas run elsewhere meanwhile.
TEST_F(DeploymentControllerTest, ARefusedCreateIsRetriedAndItsReplicasGoElsewhere) {
  reject_[1] = true;
  Start();
  Create(6, "nginx:1",
         {{api::kDeploymentPreferencesAnnotation,
           R"({"rebalance": true, "clusters": {"*": {"weight": 1}}})"}});
  ASSERT_TRUE(Settle([&] { return Replicas() == std::vector<int64_t>{3, -1, 3}; }));
  EXPECT_TRUE(Eventually([&] { return !EventMessages("FailedCreateInCluster").empty(); }));
  reject_[1] = false;
  clock_.Advance(std::chrono::seconds(30));
  ASSERT_TRUE(Settle([&] {
    return Replicas() == std::vector<int64_t>{2, 2, 2};
  })) << json::serialize(json::value_from(Replicas()));
}

// [E2] and [E4]: a same-named local Deployment is taken over; one deleted
// by hand comes back.
TEST_F(DeploymentControllerTest, LocalDeploymentsAreTakenOverAndRestored) {
  auto theirs = ParseJsonObject(R"({"apiVersion": "apps/v1", "kind": "Deployment",
      "metadata": {"name": "web"},
      "spec": {"replicas": 5, "selector": {"matchLabels": {"app": "web"}},
               "template": {"metadata": {"labels": {"app": "web"}},
                            "spec": {"containers": [{"name": "c", "image": "old"}]}}}})");
  ASSERT_TRUE(theirs.ok());
  ASSERT_TRUE(member_clients_[0]->Create(kDeployments, kNs, *theirs).ok());
  json::value uid = At(Local(0), "metadata.uid");
  Running();
  EXPECT_EQ(At(Local(0), "metadata.uid"), uid);  // taken over, not replaced
  EXPECT_TRUE(IsManaged(Local(0)));
  EXPECT_TRUE(Eventually([&] { return !EventMessages("OverwriteInCluster").empty(); }));
  json::value b_uid = At(Local(1), "metadata.uid");
  ASSERT_TRUE(member_clients_[1]->Delete(kDeployments, kNs, "web", {}).ok());
  ASSERT_TRUE(Settle([&] {
    json::value now = At(Local(1), "metadata.uid");
    return !now.is_null() && now != b_uid;
  }));
  EXPECT_EQ(Replicas(), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(Images(), (Strings{"nginx:1", "nginx:1", "nginx:1"}));
}

TEST_F(DeploymentControllerTest, PreferencesPlaceTheReplicas) {
  Start();
  Create(6, "nginx:1",
         {{api::kDeploymentPreferencesAnnotation,
           R"({"rebalance": true, "clusters": {"a": {"weight": 2}, "b": {"weight": 1}}})"}});
  ASSERT_TRUE(Settle([&] { return Replicas() == std::vector<int64_t>{4, 2, -1}; }));
}

}  // namespace
}  // namespace flotilla::federation::deployment
