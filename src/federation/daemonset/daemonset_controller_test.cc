// The federated DaemonSet controller against real API servers
// (cluster::testing::ControllerTest, members c1, c2 and c3): the tests play
// each member's DaemonSet controller where a test needs its status. Time
// moves on a FakeClock.
#include "federation/daemonset/daemonset_controller.h"

#include <gtest/gtest.h>

#include "api/annotations.h"
#include "api/federated.h"
#include "federation/cluster/controller_fixture.h"
#include "federation/common/member_copy.h"

namespace flotilla::federation::daemonset {
namespace {

using client::kDaemonSets;
using cluster::testing::At;
using runtime::testing::Eventually;

class DaemonSetControllerTest : public cluster::testing::ControllerTest {
 protected:
  DaemonSetControllerTest() : ControllerTest({DaemonSetController::kName}, "default/logs") {}
  std::string Name(int i) const override { return "c" + std::to_string(i + 1); }

  void Start() {
    WorkloadOptions options;
    options.member_change_delay = Duration::zero();
    StartWith([&] { Make<DaemonSetController>(options); });
  }
  void Create(json::object annotations = {}) {
    auto ds = ParseJsonObject(R"({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "spec": {"selector": {"matchLabels": {"app": "logs"}},
                 "template": {"metadata": {"labels": {"app": "logs"}},
                              "spec": {"containers": [{"name": "agent", "image": "agent:1"}]}}}})");
    ASSERT_TRUE(ds.ok());
    json::object obj = *ds;
    obj["metadata"] = json::object{{"name", "logs"}, {"annotations", std::move(annotations)}};
    auto made = fed_client_->Create(kDaemonSets, kNs, obj);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
  }
  json::object Fed() {
    auto s = fed_client_->Get(kDaemonSets, kNs, "logs");
    return s.ok() ? *s : json::object{};
  }
  json::object Local(int i) {
    auto s = member_clients_[i]->Get(kDaemonSets, kNs, "logs");
    return s.ok() ? *s : json::object{};
  }
  std::string Image(int i) {
    json::object local = Local(i);
    const json::value* c = Find(local, "spec.template.spec.containers");
    return c == nullptr ? "" : StringAt(c->as_array()[0].as_object(), "image");
  }
  std::vector<std::string> Images() { return {Image(0), Image(1), Image(2)}; }
  void SetImage(const std::string& image) {
    ASSERT_TRUE(Eventually([&] {
      json::object d = Fed();
      d["spec"]
          .as_object()["template"]
          .as_object()["spec"]
          .as_object()["containers"]
          .as_array()[0]
          .as_object()["image"] = image;
      return fed_client_->Update(kDaemonSets, kNs, d).ok();
    }));
  }
  // Plays member i's DaemonSet controller: `nodes` nodes, each with the
  // local template's pod ready and available.
  void Finish(int i, int64_t nodes) {
    ASSERT_TRUE(Eventually([&] {
      json::object s = Local(i);
      if (s.empty()) return false;
      s["status"] = json::object{{"observedGeneration", At(s, "metadata.generation")},
                                 {"desiredNumberScheduled", nodes},
                                 {"currentNumberScheduled", nodes},
                                 {"numberMisscheduled", 0},
                                 {"numberReady", nodes},
                                 {"numberAvailable", nodes},
                                 {"numberUnavailable", 0},
                                 {"updatedNumberScheduled", nodes}};
      return member_clients_[i]->UpdateStatus(kDaemonSets, kNs, s).ok();
    }));
  }
  bool Settle(const std::function<bool()>& done) {
    return ControllerTest::Settle(done, std::chrono::seconds(30));
  }
  void Holds(const std::function<bool()>& state) {
    ControllerTest::Holds(state, std::chrono::seconds(30));
  }
  // What `kubectl rollout status ds/logs` reads as done.
  bool RolledOut() {
    json::object s = Fed();
    int64_t desired = IntAt(s, "status.desiredNumberScheduled", -1);
    return IntAt(s, "status.observedGeneration", -1) == IntAt(s, "metadata.generation", 0) &&
           IntAt(s, "status.updatedNumberScheduled", -2) == desired &&
           IntAt(s, "status.numberAvailable", -2) == desired;
  }
};

TEST_F(DaemonSetControllerTest, TheWholeDaemonSetGoesToEveryClusterAndItsStatusIsSummed) {
  Start();
  Create();
  ASSERT_TRUE(Settle([&] { return Images() == std::vector<std::string>(3, "agent:1"); }));
  json::object local = Local(0);
  EXPECT_TRUE(IsManaged(local));
  EXPECT_EQ(api::AnnotationAt(local, api::kFederatedObjectAnnotation), "default/logs");
  EXPECT_EQ(Find(local, "spec.replicas"), nullptr);
  Finish(0, 3);
  Finish(1, 2);
  Finish(2, 4);
  ASSERT_TRUE(Settle([&] { return IntAt(Fed(), "status.numberReady") == 9 && RolledOut(); }))
      << json::serialize(Fed());
  json::object fed = Fed();
  EXPECT_EQ(IntAt(fed, "status.desiredNumberScheduled"), 9);
  EXPECT_EQ(IntAt(fed, "status.currentNumberScheduled"), 9);
  EXPECT_EQ(IntAt(fed, "status.updatedNumberScheduled"), 9);
  std::string breakdown = api::AnnotationAt(fed, api::kDaemonSetStatusAnnotation);
  auto parsed = ParseJsonObject(breakdown);
  ASSERT_TRUE(parsed.ok()) << breakdown;
  EXPECT_EQ(IntAt(*parsed, "clusters.c3.planned"), 4);
  EXPECT_EQ(StringAt(*parsed, "clusters.c3.rollout"), "complete");
  // A cluster lost counts nothing until it returns.
  ctx_->clusters().SetNotReady("c2");
  ASSERT_TRUE(Settle([&] { return IntAt(Fed(), "status.desiredNumberScheduled") == 7; }));
}

TEST_F(DaemonSetControllerTest, ATemplateRollsOutOneClusterAtATimeInTheUpdateOrder) {
  Start();
  Create({{api::kClusterUpdateOrderAnnotation, "c3"}});
  ASSERT_TRUE(Settle([&] { return Images() == std::vector<std::string>(3, "agent:1"); }));
  for (int i = 0; i < 3; ++i) Finish(i, 2);
  ASSERT_TRUE(Settle([&] { return RolledOut(); })) << json::serialize(Fed());
  SetImage("agent:2");
  Holds([&] { return Images() == std::vector<std::string>{"agent:1", "agent:1", "agent:2"}; });
  // kubectl rollout status waits: c3 has not updated its pods yet.
  EXPECT_FALSE(RolledOut());
  Finish(2, 2);
  ASSERT_TRUE(Settle([&] { return Image(0) == "agent:2"; }));
  EXPECT_EQ(Image(1), "agent:1");
  // c3's pods are the updated ones (the status follows the copy's update).
  ASSERT_TRUE(Settle([&] { return IntAt(Fed(), "status.updatedNumberScheduled") == 2; }))
      << json::serialize(Fed());
  EXPECT_FALSE(RolledOut());
  Finish(0, 2);
  ASSERT_TRUE(Settle([&] { return Image(1) == "agent:2"; }));
  Finish(1, 2);
  ASSERT_TRUE(Settle([&] {
    return RolledOut() && IntAt(Fed(), "status.updatedNumberScheduled") == 6;
  })) << json::serialize(Fed());
  // The federation's own history: one ControllerRevision per template,
  // owned by the federated DaemonSet.
  auto revisions = fed_client_->List(runtime::kControllerRevisions, kNs, {});
  ASSERT_TRUE(revisions.ok());
  ASSERT_EQ(revisions->items.size(), 2u);
  EXPECT_EQ(StringAt(revisions->items[0]
                         .at("metadata")
                         .as_object()["ownerReferences"]
                         .as_array()[0]
                         .as_object(),
                     "kind"),
            "DaemonSet");
  // Deleting it takes its revisions and (Background) its copies.
  client::DeleteOptions opts;
  opts.propagation_policy = "Background";
  ASSERT_TRUE(fed_client_->Delete(kDaemonSets, kNs, "logs", opts).ok());
  ASSERT_TRUE(Settle([&] {
    auto left = fed_client_->List(runtime::kControllerRevisions, kNs, {});
    return Fed().empty() && Local(0).empty() && left.ok() && left->items.empty();
  }));
}

TEST_F(DaemonSetControllerTest, OnDeleteUpdatesEveryClusterAtOnce) {
  Start();
  auto ds = ParseJsonObject(R"({"apiVersion": "apps/v1", "kind": "DaemonSet",
      "metadata": {"name": "logs"},
      "spec": {"selector": {"matchLabels": {"app": "logs"}},
               "updateStrategy": {"type": "OnDelete"},
               "template": {"metadata": {"labels": {"app": "logs"}},
                            "spec": {"containers": [{"name": "agent", "image": "agent:1"}]}}}})");
  ASSERT_TRUE(ds.ok());
  ASSERT_TRUE(fed_client_->Create(kDaemonSets, kNs, *ds).ok());
  ASSERT_TRUE(Settle([&] { return Images() == std::vector<std::string>(3, "agent:1"); }));
  SetImage("agent:2");
  ASSERT_TRUE(Settle([&] { return Images() == std::vector<std::string>(3, "agent:2"); }));
}

}  // namespace
}  // namespace flotilla::federation::daemonset
