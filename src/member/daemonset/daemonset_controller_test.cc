// The member's DaemonSet controller with the scheduler and kubelet on a
// FakeClock: a pod per eligible node (selector, taints, tolerations),
// status counts, rolling updates with maxUnavailable and with maxSurge,
// revisions, and pods replaced or removed as nodes change.
#include "member/daemonset/daemonset_controller.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "member/kubelet/kubelet.h"
#include "member/nodes/nodes.h"
#include "member/object_util.h"
#include "member/scheduler/scheduler.h"
#include "member/test_util.h"
#include "runtime/test_util.h"

namespace flotilla::member {
namespace {

using runtime::testing::Eventually;

using testing::Parse;

// A DaemonSet "logs" of image `image`; `spec` is merged into its spec, and
// `pod_spec` into its pod template's.
json::object NewDaemonSet(std::string_view image, std::string_view spec = "{}",
                          std::string_view pod_spec = "{}") {
  json::object ds = Parse(R"({"apiVersion":"apps/v1","kind":"DaemonSet",
    "metadata":{"name":"logs","namespace":"default"},
    "spec":{"selector":{"matchLabels":{"app":"logs"}},
      "template":{"metadata":{"labels":{"app":"logs"}},
        "spec":{"containers":[{"name":"agent","image":")" +
                          std::string(image) + R"("}]}}}})");
  for (auto& [k, v] : Parse(spec)) ds["spec"].as_object()[k] = v;
  json::object& tmpl_spec = ds["spec"].as_object()["template"].as_object()["spec"].as_object();
  for (auto& [k, v] : Parse(pod_spec)) tmpl_spec[k] = v;
  return ds;
}

class DaemonSetControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.options().nodes = 3;
    env_.Add<Nodes>();
    env_.Add<Scheduler>();
    env_.Add<Kubelet>();
    env_.Add<DaemonSetController>();
    ASSERT_TRUE(env_.Start().ok());
    ASSERT_TRUE(Eventually([&] { return NodeNames().size() == 3; }));
  }

  std::vector<std::string> NodeNames() {
    StatusOr<client::ObjectList> list = env_.client().List(kNodes, "", {});
    std::vector<std::string> out;
    if (list.ok()) {
      for (const json::object& n : list->items) out.push_back(MetaAt(n, "name"));
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  void PatchNode(const std::string& name, std::string_view patch) {
    ASSERT_TRUE(
        env_.client().Patch(kNodes, "", name, client::PatchType::kMerge, std::string(patch)).ok());
  }
  json::object Set() {
    auto ds = env_.client().Get(kDaemonSets, "default", "logs");
    return ds.ok() ? *ds : json::object{};
  }
  // The DaemonSet's pods not being deleted, by node (bound or targeted).
  std::multimap<std::string, json::object> PodsByNode() {
    StatusOr<client::ObjectList> list = env_.client().List(kPods, "default", {});
    std::multimap<std::string, json::object> out;
    if (!list.ok()) return out;
    for (const json::object& pod : list->items) {
      if (!MetaAt(pod, "deletionTimestamp").empty()) continue;
      std::string node = StringAt(pod, "spec.nodeName");
      out.emplace(node.empty() ? "<unbound>" : node, pod);
    }
    return out;
  }
  std::string Image(const json::object& pod) {
    return StringAt(Find(pod, "spec.containers")->get_array().at(0).get_object(), "image");
  }
  bool RolledOut(int64_t desired) {
    json::object ds = Set();
    return IntAt(ds, "status.observedGeneration", 0) == IntAt(ds, "metadata.generation", -1) &&
           IntAt(ds, "status.desiredNumberScheduled", -1) == desired &&
           IntAt(ds, "status.updatedNumberScheduled", -1) == desired &&
           IntAt(ds, "status.numberAvailable", -1) == desired &&
           static_cast<int64_t>(PodsByNode().size()) == desired;
  }
  // What a rollout to `image` of 3 nodes went through.
  struct Rollout {
    size_t most_pods = 0;  // pods at once
    int most_missing = 0;  // nodes without a running pod at once
  };
  // Sets the template's image and waits until every node runs it.
  Rollout RollOut(const std::string& image) {
    EXPECT_TRUE(env_.client()
                    .Patch(kDaemonSets, "default", "logs", client::PatchType::kMerge,
                           R"({"spec":{"template":{"spec":{"containers":[
                               {"name":"agent","image":")" +
                               image + R"("}]}}}})")
                    .ok());
    Rollout seen;
    EXPECT_TRUE(AdvanceUntil([&] {
      std::multimap<std::string, json::object> pods = PodsByNode();
      seen.most_pods = std::max(seen.most_pods, pods.size());
      std::set<std::string> running;
      for (const auto& [node, pod] : pods) {
        if (StringAt(pod, "status.phase") == "Running") running.insert(node);
      }
      seen.most_missing = std::max(seen.most_missing, 3 - static_cast<int>(running.size()));
      if (!RolledOut(3)) return false;
      for (const auto& [node, pod] : PodsByNode()) {
        if (Image(pod) != image) return false;
      }
      return true;
    })) << json::serialize(Set());
    return seen;
  }
  bool AdvanceUntil(const std::function<bool()>& done) {
    return env_.AdvanceUntil(done, std::chrono::seconds(120),
                             {"kubelet", "scheduler", "daemonset"});
  }

  testing::MemberTestEnv env_;
};

TEST_F(DaemonSetControllerTest, OnePodPerNodeBoundByTheScheduler) {
  ASSERT_TRUE(env_.client().Create(kDaemonSets, "default", NewDaemonSet("agent:1")).ok());
  ASSERT_TRUE(AdvanceUntil([&] { return RolledOut(3); })) << json::serialize(Set());
  std::multimap<std::string, json::object> pods = PodsByNode();
  std::set<std::string> nodes;
  for (const auto& [node, pod] : pods) {
    nodes.insert(node);
    EXPECT_FALSE(StringAt(pod, "metadata.labels.controller-revision-hash").empty());
    // The default tolerations of a daemon pod.
    bool tolerates_not_ready = false;
    for (const json::object* t : ObjectsAt(pod, "spec.tolerations")) {
      tolerates_not_ready |= StringAt(*t, "key") == "node.kubernetes.io/not-ready" &&
                             StringAt(*t, "effect") == "NoExecute";
    }
    EXPECT_TRUE(tolerates_not_ready);
  }
  std::vector<std::string> names = NodeNames();
  EXPECT_EQ(nodes, std::set<std::string>(names.begin(), names.end()));
  json::object ds = Set();
  EXPECT_EQ(IntAt(ds, "status.currentNumberScheduled"), 3);
  EXPECT_EQ(IntAt(ds, "status.numberReady"), 3);
  EXPECT_EQ(IntAt(ds, "status.numberMisscheduled"), 0);
  EXPECT_EQ(IntAt(ds, "status.numberUnavailable"), 0);
}

TEST_F(DaemonSetControllerTest, NodeSelectorTaintsAndTolerationsChooseTheNodes) {
  std::vector<std::string> nodes = NodeNames();
  PatchNode(nodes[0], R"({"metadata":{"labels":{"role":"edge"}}})");
  PatchNode(nodes[1], R"({"metadata":{"labels":{"role":"edge"}},
      "spec":{"taints":[{"key":"dedicated","value":"db","effect":"NoSchedule"}]}})");
  ASSERT_TRUE(env_.client()
                  .Create(kDaemonSets, "default",
                          NewDaemonSet("agent:1", "{}", R"({"nodeSelector":{"role":"edge"}})"))
                  .ok());
  ASSERT_TRUE(AdvanceUntil([&] { return RolledOut(1); })) << json::serialize(Set());
  EXPECT_EQ(PodsByNode().begin()->first, nodes[0]);

  // Tolerating the taint adds the second edge node.
  ASSERT_TRUE(env_.client()
                  .Patch(kDaemonSets, "default", "logs", client::PatchType::kMerge,
                         R"({"spec":{"template":{"spec":{"tolerations":[
                             {"key":"dedicated","operator":"Exists"}]}}}})")
                  .ok());
  ASSERT_TRUE(AdvanceUntil([&] { return RolledOut(2); })) << json::serialize(Set());

  // A NoExecute taint the pods do not tolerate removes the pod there.
  PatchNode(nodes[0], R"({"spec":{"taints":[{"key":"drain","effect":"NoExecute"}]}})");
  ASSERT_TRUE(AdvanceUntil([&] { return RolledOut(1); })) << json::serialize(Set());
  EXPECT_EQ(PodsByNode().begin()->first, nodes[1]);
  // A node that loses the label is no longer one of the set's.
  PatchNode(nodes[1], R"({"metadata":{"labels":{"role":null}}})");
  ASSERT_TRUE(AdvanceUntil([&] {
    return PodsByNode().empty() && IntAt(Set(), "status.desiredNumberScheduled", -1) == 0;
  })) << json::serialize(Set());
}

// The template's required node affinity chooses the nodes; each pod made
// is bound to its node by a node-name affinity alone, as kube's are.
TEST_F(DaemonSetControllerTest, RequiredNodeAffinityChoosesTheNodes) {
  std::vector<std::string> nodes = NodeNames();
  PatchNode(nodes[2], R"({"metadata":{"labels":{"disk":"ssd"}}})");
  ASSERT_TRUE(env_.client()
                  .Create(kDaemonSets, "default",
                          NewDaemonSet("agent:1", "{}", R"({"affinity":{"nodeAffinity":{
                              "requiredDuringSchedulingIgnoredDuringExecution":{
                                "nodeSelectorTerms":[{"matchExpressions":[
                                  {"key":"disk","operator":"In","values":["ssd"]}]}]}}}})"))
                  .ok());
  ASSERT_TRUE(AdvanceUntil([&] { return RolledOut(1); })) << json::serialize(Set());
  std::multimap<std::string, json::object> pods = PodsByNode();
  const auto& [node, pod] = *pods.begin();
  EXPECT_EQ(node, nodes[2]);
  const json::value* terms =
      Find(pod,
           "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
           "nodeSelectorTerms");
  ASSERT_NE(terms, nullptr);
  EXPECT_EQ(json::serialize(*terms),
            R"([{"matchFields":[{"key":"metadata.name","operator":"In","values":[")" + nodes[2] +
                R"("]}]}])");
}

TEST_F(DaemonSetControllerTest, RollingUpdateReplacesOneNodeAtATime) {
  ASSERT_TRUE(env_.client().Create(kDaemonSets, "default", NewDaemonSet("agent:1")).ok());
  ASSERT_TRUE(AdvanceUntil([&] { return RolledOut(3); }));
  Rollout seen = RollOut("agent:2");
  // maxSurge 0: a node's pod goes before its replacement, one node at a time.
  EXPECT_EQ(seen.most_missing, 1);
  EXPECT_EQ(seen.most_pods, 3u);
  // Two revisions, for `kubectl rollout history ds/logs`.
  StatusOr<client::ObjectList> revisions =
      env_.client().List(runtime::kControllerRevisions, "default", {});
  ASSERT_TRUE(revisions.ok());
  EXPECT_EQ(revisions->items.size(), 2u);
}

TEST_F(DaemonSetControllerTest, MaxSurgeStartsTheNewPodBesideTheOld) {
  ASSERT_TRUE(env_.client()
                  .Create(kDaemonSets, "default",
                          NewDaemonSet("agent:1", R"({"updateStrategy":{"type":"RollingUpdate",
                              "rollingUpdate":{"maxUnavailable":0,"maxSurge":1}}})"))
                  .ok());
  ASSERT_TRUE(AdvanceUntil([&] { return RolledOut(3); }));
  Rollout seen = RollOut("agent:2");
  EXPECT_EQ(seen.most_pods, 4u);    // one surge pod at a time
  EXPECT_EQ(seen.most_missing, 0);  // every node kept a running pod
}

TEST_F(DaemonSetControllerTest, AFailedPodIsReplaced) {
  ASSERT_TRUE(env_.client().Create(kDaemonSets, "default", NewDaemonSet("agent:1")).ok());
  ASSERT_TRUE(AdvanceUntil([&] { return RolledOut(3); }));
  json::object pod = PodsByNode().begin()->second;
  std::string uid = MetaAt(pod, "uid");
  pod["status"].as_object()["phase"] = "Failed";
  ASSERT_TRUE(env_.client().UpdateStatus(kPods, "default", pod).ok());
  ASSERT_TRUE(AdvanceUntil([&] {
    if (!RolledOut(3)) return false;
    for (const auto& [node, p] : PodsByNode()) {
      if (MetaAt(p, "uid") == uid) return false;
    }
    return true;
  })) << json::serialize(Set());
}

}  // namespace
}  // namespace flotilla::member
