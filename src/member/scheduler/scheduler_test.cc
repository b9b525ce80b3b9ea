// The scheduler against a member's API on a FakeClock: binds within
// capacity, honours selectors, affinity and taints, reports Unschedulable
// with kube-scheduler's message, and retries when capacity appears.
#include "member/scheduler/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "member/object_util.h"
#include "member/test_util.h"
#include "runtime/test_util.h"

namespace flotilla::member {
namespace {

using runtime::testing::Eventually;

using testing::Parse;

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.Add<Scheduler>();
    ASSERT_TRUE(env_.Start().ok());
  }

  // A Ready node with `cpu` allocatable, labels and spec as given.
  void AddNode(const std::string& name, const std::string& cpu, std::string_view labels = "{}",
               std::string_view spec = "{}") {
    json::object node = {{"apiVersion", "v1"}, {"kind", "Node"}};
    node["metadata"] = json::object{{"name", name}, {"labels", Parse(labels)}};
    node["spec"] = Parse(spec);
    ASSERT_TRUE(env_.client().Create(kNodes, "", node).ok());
    json::object status = Parse(R"({"status":{"allocatable":{"memory":"16Gi","pods":"110"},
        "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}]}})");
    status["status"].as_object()["allocatable"].as_object()["cpu"] = cpu;
    ASSERT_TRUE(
        env_.client()
            .Patch(kNodes, "", name, client::PatchType::kMerge, json::serialize(status), "status")
            .ok());
  }

  void AddPod(const std::string& name, const std::string& cpu, std::string_view extra_spec = "{}") {
    json::object spec = Parse(extra_spec);
    spec["containers"] = json::array{
        json::object{{"name", "c"},
                     {"image", "nginx"},
                     {"resources", json::object{{"requests", json::object{{"cpu", cpu}}}}}}};
    json::object pod = {{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata", json::object{{"name", name}}},
                        {"spec", spec}};
    auto created = env_.client().Create(kPods, "default", pod);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  json::object Pod(const std::string& name) {
    auto pod = env_.client().Get(kPods, "default", name);
    return pod.ok() ? *pod : json::object{};
  }

  std::string NodeOf(const std::string& name) { return StringAt(Pod(name), "spec.nodeName"); }

  bool BoundTo(const std::string& name, const std::string& node) {
    return Eventually([&] { return NodeOf(name) == node; });
  }

  // The PodScheduled condition's message while it is Unschedulable ("" when
  // it is not).
  std::string UnschedulableMessage(const std::string& name) {
    json::object pod = Pod(name);
    const json::value* conditions = Find(pod, "status.conditions");
    if (conditions == nullptr || !conditions->is_array()) return "";
    for (const json::value& c : conditions->get_array()) {
      const json::object& o = c.as_object();
      if (StringAt(o, "type") == "PodScheduled" && StringAt(o, "reason") == "Unschedulable")
        return StringAt(o, "message");
    }
    return "";
  }

  // Waits for the pod to be Unschedulable with `want` ("" = any message).
  ::testing::AssertionResult Unschedulable(const std::string& name, const std::string& want = "") {
    if (Eventually([&] {
          std::string m = UnschedulableMessage(name);
          return want.empty() ? !m.empty() : m == want;
        })) {
      return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << "message: " << UnschedulableMessage(name);
  }

  std::vector<std::string> EventsFor(const std::string& pod, const std::string& reason) {
    std::vector<std::string> out;
    auto events = env_.client().List(runtime::kEvents, "default", {});
    if (!events.ok()) return out;
    for (const json::object& e : events->items) {
      if (StringAt(e, "involvedObject.name") == pod && StringAt(e, "reason") == reason)
        out.push_back(StringAt(e, "message") + " from " + StringAt(e, "source.component"));
    }
    return out;
  }

  testing::MemberTestEnv env_;
};

TEST_F(SchedulerTest, BindsWithinCapacityAndSpreads) {
  AddNode("n1", "2");
  AddNode("n2", "2");
  for (int i = 0; i < 4; ++i) AddPod("p" + std::to_string(i), "1");
  std::map<std::string, int> per_node;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(Eventually([&] { return !NodeOf("p" + std::to_string(i)).empty(); }));
    ++per_node[NodeOf("p" + std::to_string(i))];
  }
  EXPECT_EQ(per_node, (std::map<std::string, int>{{"n1", 2}, {"n2", 2}}));
  std::string node = NodeOf("p0");
  EXPECT_TRUE(Eventually([&] {
    return EventsFor("p0", "Scheduled") ==
           std::vector<std::string>{"Successfully assigned default/p0 to " + node +
                                    " from default-scheduler"};
  }));
}

TEST_F(SchedulerTest, OverCapacityPodIsUnschedulableWithKubeSchedulersMessage) {
  AddNode("n1", "2");
  AddNode("n2", "2");
  AddNode("n3", "2");
  AddPod("big", "3");
  const std::string want =
      "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No "
      "preemption victims found for incoming pod..";
  EXPECT_TRUE(Unschedulable("big", want));
  EXPECT_EQ(StringAt(Pod("big"), "spec.nodeName"), "");
  EXPECT_TRUE(Eventually([&] {
    std::vector<std::string> events = EventsFor("big", "FailedScheduling");
    return std::find(events.begin(), events.end(), want + " from default-scheduler") !=
           events.end();
  }));
}

// VolumeBinding's PreFilter: a pod whose claim is missing, or unbound
// under a class that binds at once, waits with kube-scheduler's message
// and is scheduled when the claim is bound; a WaitForFirstConsumer claim
// does not hold the pod back.
TEST_F(SchedulerTest, APodWaitsForItsClaims) {
  AddNode("n1", "2");
  AddNode("n2", "2");
  AddPod("db", "1", R"({"volumes":[{"name":"d","persistentVolumeClaim":{"claimName":"data"}}]})");
  auto message = [](const std::string& why) {
    return "0/2 nodes are available: " + why +
           ". preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..";
  };
  EXPECT_TRUE(Unschedulable("db", message(R"(persistentvolumeclaim "data" not found)")));
  auto claim = [&](const std::string& name, const std::string& cls) {
    auto made = env_.client().Create(
        kPersistentVolumeClaims, "default",
        Parse(R"({"metadata":{"name":")" + name + R"("},"spec":{"storageClassName":")" + cls +
              R"(","accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}})"));
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    return made.ok() ? *made : json::object();
  };
  json::object data = claim("data", "");
  EXPECT_TRUE(Unschedulable("db", message("pod has unbound immediate PersistentVolumeClaims")));
  EnsureObject(data, "spec")["volumeName"] = "pv-1";
  ASSERT_TRUE(env_.client().Update(kPersistentVolumeClaims, "default", data).ok());
  EXPECT_TRUE(Eventually([&] { return !NodeOf("db").empty(); }));

  // Under a WaitForFirstConsumer class the pod is scheduled first.
  ASSERT_TRUE(env_.client()
                  .Create(kStorageClasses, "",
                          Parse(R"({"metadata":{"name":"local"},"provisioner":"example.com/local",
                                   "volumeBindingMode":"WaitForFirstConsumer"})"))
                  .ok());
  claim("scratch", "local");
  AddPod("worker", "1",
         R"({"volumes":[{"name":"s","persistentVolumeClaim":{"claimName":"scratch"}}]})");
  EXPECT_TRUE(Eventually([&] { return !NodeOf("worker").empty(); }));
}

TEST_F(SchedulerTest, MixedReasonsAreCountedPerNode) {
  AddNode("n1", "1", R"({"disk":"ssd"})");
  AddNode("n2", "4");
  AddNode("n3", "4", R"({"disk":"ssd"})", R"({"unschedulable":true})");
  AddPod("p", "2", R"({"nodeSelector":{"disk":"ssd"}})");
  EXPECT_TRUE(Unschedulable(
      "p",
      "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node "
      "affinity/selector, 1 node(s) were unschedulable. preemption: 0/3 nodes are "
      "available: 1 No preemption victims found for incoming pod, 2 Preemption is not "
      "helpful for scheduling.."));
}

TEST_F(SchedulerTest, HonoursNodeSelectorAffinityAndTaints) {
  AddNode("plain", "4");
  AddNode("ssd", "4", R"({"disk":"ssd","zone":"b"})");
  AddNode("gpu", "4", R"({"zone":"c"})",
          R"({"taints":[{"key":"dedicated","value":"gpu","effect":"NoSchedule"}]})");
  AddPod("selector", "1", R"({"nodeSelector":{"disk":"ssd"}})");
  AddPod("affinity", "1",
         R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["c"]}]}]}}},
      "tolerations":[{"key":"dedicated","operator":"Exists","effect":"NoSchedule"}]})");
  AddPod("intolerant", "1",
         R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["c"]}]}]}}}})");
  EXPECT_TRUE(BoundTo("selector", "ssd"));
  EXPECT_TRUE(BoundTo("affinity", "gpu"));
  EXPECT_TRUE(Unschedulable(
      "intolerant",
      "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 node(s) "
      "didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 "
      "Preemption is not helpful for scheduling.."));
}

TEST_F(SchedulerTest, RetriesWhenANodeIsAdded) {
  AddNode("n1", "1");
  AddPod("waits", "2");
  ASSERT_TRUE(Unschedulable("waits"));
  AddNode("n2", "4");
  EXPECT_TRUE(BoundTo("waits", "n2"));
}

TEST_F(SchedulerTest, RetriesWhenABoundPodGoesAway) {
  AddNode("n1", "2");
  AddPod("first", "2");
  ASSERT_TRUE(BoundTo("first", "n1"));
  AddPod("second", "2");
  ASSERT_TRUE(Unschedulable("second"));
  ASSERT_TRUE(
      env_.client()
          .Delete(kPods, "default", "first", client::DeleteOptions{.grace_period_seconds = 0})
          .ok());
  EXPECT_TRUE(BoundTo("second", "n1"));
}

// The node's requests are kept from the pod events: a pod another
// scheduler bound counts, one that finished no longer does.
TEST_F(SchedulerTest, CountsPodsBoundElsewhereUntilTheyFinish) {
  AddNode("n1", "2");
  AddPod("elsewhere", "2", R"({"nodeName":"n1"})");
  AddPod("mine", "1");
  ASSERT_TRUE(Unschedulable("mine"));
  json::object done = Pod("elsewhere");
  done["status"] = json::object{{"phase", "Succeeded"}};
  ASSERT_TRUE(env_.client().UpdateStatus(kPods, "default", done).ok());
  EXPECT_TRUE(BoundTo("mine", "n1"));
}

// Pods bound one after another while the cache catches up: each node ends
// with as many as it holds, no more (a pod counted on its node and as
// assumed at once was found not to fit, and stayed unschedulable), no less.
// In a cluster of 100 nodes or more a search stops at the feasible nodes it
// wanted (100 of 150) and the next one starts where it ended, as
// kube-scheduler's does: equal empty nodes, so each pod goes to the first
// node of its search.
TEST_F(SchedulerTest, ALargeClusterIsSearchedInTurnsFromWhereTheLastSearchEnded) {
  constexpr size_t kCount = 150;
  auto name = [](int i) {
    std::string n = std::to_string(i);
    return "n" + std::string(3 - n.size(), '0') + n;
  };
  for (size_t i = 0; i < kCount; ++i) AddNode(name(static_cast<int>(i)), "4");
  runtime::Informer& nodes = env_.informers().For(kNodes);
  ASSERT_TRUE(Eventually([&] {
    std::vector<runtime::ObjectPtr> all = nodes.cache().List();
    return all.size() == kCount && std::all_of(all.begin(), all.end(), [](const auto& n) {
             return Find(*n, "status.allocatable.cpu") != nullptr;
           });
  }));
  // Starts at 0, then 100 (0 + 100 looked at), then 50 ((100 + 100) % 150).
  AddPod("p0", "1");
  ASSERT_TRUE(BoundTo("p0", "n000"));
  AddPod("p1", "1");
  ASSERT_TRUE(BoundTo("p1", "n100")) << NodeOf("p1");
  AddPod("p2", "1");
  ASSERT_TRUE(BoundTo("p2", "n050")) << NodeOf("p2");
}

TEST_F(SchedulerTest, ABurstFillsTheNodesExactly) {
  AddNode("n1", "3");
  AddNode("n2", "3");
  for (int i = 0; i < 10; ++i) AddPod("p" + std::to_string(i), "1");
  std::map<std::string, int> per_node;
  // Pods found not to fit before the nodes' allocatable arrived are tried
  // again: wait for the end state.
  ASSERT_TRUE(Eventually([&] {
    per_node.clear();
    int unschedulable = 0;
    for (int i = 0; i < 10; ++i) {
      std::string name = "p" + std::to_string(i);
      std::string node = NodeOf(name);
      if (!node.empty()) ++per_node[node];
      if (node.empty() && !UnschedulableMessage(name).empty()) ++unschedulable;
    }
    return per_node["n1"] + per_node["n2"] == 6 && unschedulable == 4;
  }));
  EXPECT_EQ(per_node, (std::map<std::string, int>{{"n1", 3}, {"n2", 3}}));
}

TEST_F(SchedulerTest, RetriesWhenAllocatableGrows) {
  AddNode("n1", "1");
  AddPod("waits", "2");
  ASSERT_TRUE(Unschedulable("waits"));
  ASSERT_TRUE(env_.client()
                  .Patch(kNodes, "", "n1", client::PatchType::kMerge,
                         R"({"status":{"allocatable":{"cpu":"4"}}})", "status")
                  .ok());
  EXPECT_TRUE(BoundTo("waits", "n1"));
}

TEST_F(SchedulerTest, LeavesPodsForOtherSchedulersAlone) {
  AddNode("n1", "4");
  AddPod("other", "1", R"({"schedulerName":"my-scheduler"})");
  AddPod("mine", "1");
  ASSERT_TRUE(BoundTo("mine", "n1"));
  EXPECT_EQ(NodeOf("other"), "");
}

}  // namespace
}  // namespace flotilla::member
