#include "federation/common/member_views.h"

#include <gtest/gtest.h>

#include "api/resources.h"
#include "federation/common/test_util.h"

namespace flotilla::federation {
namespace {

using testing::Obj;

// A pod as a member's kubelet and scheduler leave it, with every field the
// federation reads set: requests on a container, a sidecar and an init
// container, an overhead, an owner, a deletion under way.
json::object KubeletPod() {
  return Obj(R"({"apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"web-x1","generateName":"web-","namespace":"shop","uid":"p1",
      "resourceVersion":"66","creationTimestamp":"2026-11-28T05:13:38Z",
      "deletionTimestamp":"2026-11-28T05:20:00Z","deletionGracePeriodSeconds":30,
      "labels":{"app":"web","federation.kubernetes.io/managed-by":"flotilla"},
      "annotations":{"note":"x"},
      "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web",
        "uid":"r1","controller":true,"blockOwnerDeletion":true}]},
    "spec":{"nodeName":"n1","schedulerName":"default-scheduler","priority":0,
      "containers":[{"name":"c","image":"nginx:1","imagePullPolicy":"IfNotPresent",
        "resources":{"requests":{"cpu":"250m","memory":"64Mi"},"limits":{"cpu":"1"}},
        "terminationMessagePath":"/dev/termination-log"}],
      "initContainers":[
        {"name":"proxy","image":"envoy","restartPolicy":"Always",
         "resources":{"requests":{"cpu":"100m"}}},
        {"name":"setup","image":"busybox","resources":{"requests":{"cpu":"2","memory":"1Gi"}}}],
      "overhead":{"cpu":"10m","memory":"8Mi"},
      "tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists",
        "effect":"NoExecute","tolerationSeconds":300}]},
    "status":{"phase":"Running","hostIP":"10.0.0.2","podIP":"10.244.0.2",
      "podIPs":[{"ip":"10.244.0.2"}],"qosClass":"Burstable","startTime":"2026-11-28T05:13:38Z",
      "conditions":[
        {"type":"Ready","status":"True","lastTransitionTime":"2026-11-28T05:13:39Z"},
        {"type":"PodScheduled","status":"False","reason":"Unschedulable",
         "lastTransitionTime":"2026-11-28T05:13:38Z"}],
      "containerStatuses":[{"name":"c","ready":true,"restartCount":0,
        "image":"docker.io/library/nginx:1","state":{"running":{}}}]}})");
}

TEST(MemberPodViewTest, KeepsWhatTheFederationReads) {
  json::object pod = KubeletPod();
  json::object view = MemberPodView(pod);
  EXPECT_EQ(view, Obj(R"({"apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"web-x1","namespace":"shop","uid":"p1","resourceVersion":"66",
      "labels":{"app":"web","federation.kubernetes.io/managed-by":"flotilla"},
      "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web",
        "uid":"r1","controller":true,"blockOwnerDeletion":true}],
      "deletionTimestamp":"2026-11-28T05:20:00Z"},
    "spec":{"nodeName":"n1","overhead":{"cpu":"10m","memory":"8Mi"},
      "containers":[{"name":"c",
        "resources":{"requests":{"cpu":"250m","memory":"64Mi"},"limits":{"cpu":"1"}}}],
      "initContainers":[
        {"name":"proxy","resources":{"requests":{"cpu":"100m"}},"restartPolicy":"Always"},
        {"name":"setup","resources":{"requests":{"cpu":"2","memory":"1Gi"}}}]},
    "status":{"phase":"Running","conditions":[{"type":"PodScheduled","status":"False",
      "reason":"Unschedulable","lastTransitionTime":"2026-11-28T05:13:38Z"}]}})"));
  // The readers' answers are the same on the view.
  api::Resources full = api::PodRequests(pod), kept = api::PodRequests(view);
  EXPECT_EQ(kept.milli_cpu, full.milli_cpu);
  EXPECT_EQ(kept.milli_cpu, 2110);  // the largest init step plus the sidecar, plus overhead
  EXPECT_EQ(kept.memory, full.memory);
  EXPECT_EQ(api::PodHoldsNode(view), api::PodHoldsNode(pod));
  json::object bound = pod;
  bound["metadata"].as_object().erase("deletionTimestamp");
  EXPECT_TRUE(api::PodHoldsNode(MemberPodView(bound)));
  EXPECT_LT(json::serialize(view).size(), json::serialize(pod).size() * 2 / 3);
}

TEST(MemberPodViewTest, IsIdempotentAndTakesPartialPods) {
  json::object view = MemberPodView(KubeletPod());
  EXPECT_EQ(MemberPodView(view), view);
  EXPECT_EQ(MemberPodView(Obj(R"({"metadata":{"name":"p","namespace":"n"}})")),
            Obj(R"({"metadata":{"name":"p","namespace":"n"}})"));
  json::object odd = Obj(R"({"metadata":{"name":"p"},"spec":{"containers":[1,{"name":"c"}]},
                             "status":{"conditions":"none"}})");
  EXPECT_EQ(MemberPodView(odd), Obj(R"({"metadata":{"name":"p"},
                                        "spec":{"containers":[{"name":"c"}]},"status":{}})"));
}

// A node as a member's kubelet registers it, with a taint and a cordon.
json::object KubeletNode() {
  return Obj(R"({"apiVersion":"v1","kind":"Node",
    "metadata":{"name":"n1","uid":"u1","resourceVersion":"7",
      "creationTimestamp":"2026-11-28T05:13:38Z",
      "labels":{"kubernetes.io/hostname":"n1","topology.kubernetes.io/zone":"east-a",
        "topology.kubernetes.io/region":"east"},
      "annotations":{"node.alpha.kubernetes.io/ttl":"0"}},
    "spec":{"podCIDR":"10.244.1.0/24","unschedulable":true,
      "taints":[{"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule"}]},
    "status":{"capacity":{"cpu":"4","memory":"16Gi","pods":"110"},
      "allocatable":{"cpu":"3900m","memory":"15Gi","pods":"110"},
      "conditions":[
        {"type":"MemoryPressure","status":"False","reason":"KubeletHasSufficientMemory",
         "lastHeartbeatTime":"2026-11-28T05:13:38Z","lastTransitionTime":"2026-11-28T05:13:38Z"},
        {"type":"Ready","status":"True","reason":"KubeletReady",
         "message":"kubelet is posting ready status",
         "lastHeartbeatTime":"2026-11-28T05:13:38Z","lastTransitionTime":"2026-11-28T05:13:38Z"}],
      "addresses":[{"type":"InternalIP","address":"10.0.0.2"},{"type":"Hostname","address":"n1"}],
      "daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},
      "nodeInfo":{"kubeletVersion":"v1.32.0","osImage":"Flotilla simulated node"}}})");
}

TEST(MemberNodeViewTest, KeepsWhatTheFederationReads) {
  json::object node = KubeletNode();
  json::object view = MemberNodeView(node);
  EXPECT_EQ(view, Obj(R"({"apiVersion":"v1","kind":"Node",
    "metadata":{"name":"n1","uid":"u1","resourceVersion":"7",
      "labels":{"kubernetes.io/hostname":"n1","topology.kubernetes.io/zone":"east-a",
        "topology.kubernetes.io/region":"east"}},
    "spec":{"unschedulable":true,
      "taints":[{"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule"}]},
    "status":{"allocatable":{"cpu":"3900m","memory":"15Gi","pods":"110"},
      "capacity":{"cpu":"4","memory":"16Gi","pods":"110"},
      "conditions":[{"type":"MemoryPressure","status":"False"},
                    {"type":"Ready","status":"True"}]}})"));
  // The readers' answers are the same on the view.
  EXPECT_EQ(api::NodeSchedulable(view), api::NodeSchedulable(node));
  EXPECT_EQ(api::Allocatable(view).milli_cpu, 3900);
  EXPECT_EQ(api::Allocatable(view).memory, api::Allocatable(node).memory);
  json::object uncordoned = node;
  uncordoned["spec"].as_object().erase("unschedulable");
  EXPECT_TRUE(api::NodeSchedulable(MemberNodeView(uncordoned)));
  EXPECT_LT(json::serialize(view).size(), json::serialize(node).size() / 2);
}

// A heartbeat changes only the conditions' times: the view stays the same.
TEST(MemberNodeViewTest, HeartbeatLeavesTheViewAsItWasAndIsIdempotent) {
  json::object node = KubeletNode();
  json::object beat = node;
  for (json::value& c : beat["status"].as_object()["conditions"].as_array()) {
    c.as_object()["lastHeartbeatTime"] = "2026-11-28T05:18:38Z";
  }
  EXPECT_EQ(MemberNodeView(beat), MemberNodeView(node));
  json::object view = MemberNodeView(node);
  EXPECT_EQ(MemberNodeView(view), view);
  EXPECT_EQ(MemberNodeView(Obj(R"({"metadata":{"name":"n"},"status":{"conditions":[1]}})")),
            Obj(R"({"metadata":{"name":"n"},"status":{"conditions":[]}})"));
}

}  // namespace
}  // namespace flotilla::federation
