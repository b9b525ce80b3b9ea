// The federated StatefulSet controller against real API servers
// (cluster::testing::ControllerTest, with the seed's member names c1, c2
// and c3): the tests play each member's StatefulSet controller where a
// test needs its status. Time moves on a FakeClock.
#include "federation/statefulset/statefulset_controller.h"

#include <gtest/gtest.h>

#include "api/annotations.h"
#include "api/federated.h"
#include "api/policy/policy.h"
#include "federation/cluster/controller_fixture.h"
#include "federation/common/member_copy.h"
#include "federation/statefulset/identities.h"

namespace flotilla::federation::statefulset {
namespace {

using cluster::testing::At;
using runtime::testing::Eventually;
using Counts = std::vector<int64_t>;

class StatefulSetControllerTest : public cluster::testing::ControllerTest {
 protected:
  StatefulSetControllerTest() : ControllerTest({StatefulSetController::kName}, "default/store") {}

  void SetUp() override {
    ControllerTest::SetUp();
    auto svc = ParseJsonObject(R"({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "etcd"},
        "spec": {"clusterIP": "None", "selector": {"app": "etcd"},
                 "ports": [{"name": "store", "port": 80}]}})");
    ASSERT_TRUE(svc.ok());
    ASSERT_TRUE(fed_client_->Create(kServices, kNs, *svc).ok());
  }
  std::string Name(int i) const override { return "c" + std::to_string(i + 1); }

  void Start() {
    WorkloadOptions options;
    options.member_change_delay = Duration::zero();
    StartWith([&] { Make<StatefulSetController>(options); });
  }
  void Create(int64_t replicas, json::object annotations = {}, const std::string& name = "store") {
    auto sts = ParseJsonObject(R"({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "spec": {"serviceName": "etcd", "selector": {"matchLabels": {"app": "etcd"}},
                 "template": {"metadata": {"labels": {"app": "etcd"}},
                              "spec": {"containers": [{"name": "etcd", "image": "etcd:3.0"}]}},
                 "volumeClaimTemplates": [{"metadata": {"name": "data"},
                     "spec": {"accessModes": ["ReadWriteOnce"],
                              "resources": {"requests": {"storage": "1Gi"}}}}]}})");
    ASSERT_TRUE(sts.ok());
    json::object obj = *sts;
    obj["metadata"] = json::object{{"name", name}, {"annotations", std::move(annotations)}};
    obj["spec"].as_object()["replicas"] = replicas;
    auto made = fed_client_->Create(kStatefulSets, kNs, obj);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
  }
  json::object Fed(const std::string& name = "store") {
    auto s = fed_client_->Get(kStatefulSets, kNs, name);
    return s.ok() ? *s : json::object{};
  }
  void Edit(const std::function<void(json::object&)>& change) {
    ASSERT_TRUE(Eventually([&] {
      json::object d = Fed();
      change(d);
      return fed_client_->Update(kStatefulSets, kNs, d).ok();
    }));
  }
  void Scale(int64_t replicas) {
    Edit([&](json::object& d) { d["spec"].as_object()["replicas"] = replicas; });
  }
  json::object Local(int i, const std::string& name = "store") {
    auto s = member_clients_[i]->Get(kStatefulSets, kNs, LocalName(name, Name(i)));
    return s.ok() ? *s : json::object{};
  }
  // spec.replicas of the local StatefulSets, -1 where there is none.
  Counts Replicas(const std::string& name = "store") {
    Counts out;
    for (int i = 0; i < 3; ++i) {
      json::value r = At(Local(i, name), "spec.replicas");
      out.push_back(r.is_null() ? -1 : r.to_number<int64_t>());
    }
    return out;
  }
  // Plays member i's StatefulSet controller: every replica ready on the
  // local template.
  void Finish(int i) {
    ASSERT_TRUE(Eventually([&] {
      json::object s = Local(i);
      if (s.empty()) return false;
      json::value n = At(s, "spec.replicas");
      std::string revision = "r" + std::to_string(IntAt(s, "metadata.generation"));
      s["status"] = json::object{{"observedGeneration", At(s, "metadata.generation")},
                                 {"replicas", n},
                                 {"readyReplicas", n},
                                 {"availableReplicas", n},
                                 {"currentReplicas", n},
                                 {"updatedReplicas", n},
                                 {"currentRevision", revision},
                                 {"updateRevision", revision}};
      return member_clients_[i]->UpdateStatus(kStatefulSets, kNs, s).ok();
    }));
  }
  // The federated template's image.
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
  std::string Image(int i) {
    json::object local = Local(i);
    const json::value* c = Find(local, "spec.template.spec.containers");
    return c == nullptr ? "" : StringAt(c->as_array()[0].as_object(), "image");
  }
  std::vector<std::string> LoadBalancerNames() {
    auto list = fed_client_->List(kServices, kNs, {});
    std::vector<std::string> out;
    if (!list.ok()) return out;
    for (const json::object& s : list->items) {
      if (StringAt(s, "spec.type") == "LoadBalancer") out.push_back(StringAt(s, "metadata.name"));
    }
    return out;
  }
  std::string Governing(std::string_view annotation) {
    auto svc = fed_client_->Get(kServices, kNs, "etcd");
    return svc.ok() ? api::AnnotationAt(*svc, annotation) : "";
  }
  // Waits for `done`, moving the clock on (30 s at most) whenever the
  // controller has nothing to do but waits for a requeue: a deletion
  // re-checks every 100 ms until the caches show its objects gone, and a
  // busy machine may take many such rounds. Nothing here depends on how far
  // the clock moves (stateful replicas never move).
  bool Settle(const std::function<bool()>& done) {
    return ControllerTest::Settle(done, std::chrono::seconds(30));
  }
  void Holds(const std::function<bool()>& state) {
    ControllerTest::Holds(state, std::chrono::seconds(30));
  }
};

// The seed's example: 11 replicas over c1, c2, c3.
TEST_F(StatefulSetControllerTest, ElevenReplicasGiveFourFourAndThree) {
  Start();
  Create(11);
  ASSERT_TRUE(Settle([&] { return Replicas() == Counts{4, 4, 3}; }));
  json::object local = Local(0);
  EXPECT_EQ(StringAt(local, "metadata.name"), "store-c1");
  EXPECT_TRUE(IsManaged(local));
  EXPECT_EQ(api::AnnotationAt(local, api::kFederatedObjectAnnotation), "default/store");
  EXPECT_EQ(At(local, "spec.volumeClaimTemplates"), At(Fed(), "spec.volumeClaimTemplates"));
  EXPECT_EQ(At(local, "spec.serviceName"), json::value("etcd"));
  ASSERT_TRUE(Settle([&] {
    return Governing(api::kStatefulReplicaListAnnotation) ==
           "store-c1-0, store-c1-1, store-c1-2, store-c1-3, store-c2-0, store-c2-1, store-c2-2, "
           "store-c2-3, store-c3-0, store-c3-1, store-c3-2";
  })) << Governing(api::kStatefulReplicaListAnnotation);
  EXPECT_EQ(Governing(api::kStatefulSetLbNeededAnnotation), "false");
  EXPECT_TRUE(LoadBalancerNames().empty());
}

TEST_F(StatefulSetControllerTest, FewerReplicasThanClustersLeaveAClusterWithout) {
  Start();
  Create(2);
  Holds([&] { return Replicas() == Counts{1, 1, -1}; });
}

TEST_F(StatefulSetControllerTest, ScalingNeverMovesAReplica) {
  Start();
  Create(11);
  ASSERT_TRUE(Settle([&] { return Replicas() == Counts{4, 4, 3}; }));
  Scale(14);
  ASSERT_TRUE(Settle([&] { return Replicas() == Counts{5, 5, 4}; }));
  Scale(6);
  ASSERT_TRUE(Settle([&] { return Replicas() == Counts{2, 2, 2}; }));
  // A local StatefulSet scaled by hand is put back; nothing else changes.
  ASSERT_TRUE(Eventually([&] {
    json::object s = Local(1);
    s["spec"].as_object()["replicas"] = 9;
    return member_clients_[1]->Update(kStatefulSets, kNs, s).ok();
  }));
  Holds([&] { return Replicas() == Counts{2, 2, 2}; });
}

TEST_F(StatefulSetControllerTest, AnUnreachableClusterKeepsItsShare) {
  Start();
  Create(11);
  ASSERT_TRUE(Settle([&] { return Replicas() == Counts{4, 4, 3}; }));
  for (int i = 0; i < 3; ++i) Finish(i);
  ASSERT_TRUE(Settle([&] { return IntAt(Fed(), "status.readyReplicas") == 11; }));
  ctx_->clusters().SetNotReady("c2");
  // Its 4 are not recreated elsewhere; the others do not grow.
  ASSERT_TRUE(Settle([&] { return IntAt(Fed(), "status.readyReplicas") == 7; }));
  Holds([&] { return Replicas() == Counts{4, 4, 3}; });
  Scale(14);  // the new replicas go to the reachable clusters only
  ASSERT_TRUE(Settle([&] { return Replicas() == Counts{5, 4, 5}; }));
  SetReady(1);
  Holds([&] { return Replicas() == Counts{5, 4, 5}; });
}

TEST_F(StatefulSetControllerTest, AClusterThatLeavesGivesItsShareToTheOthers) {
  Start();
  Create(11);
  ASSERT_TRUE(Settle([&] { return Replicas() == Counts{4, 4, 3}; }));
  ASSERT_TRUE(cluster::Unjoin(*fed_client_, "c3", false).ok());
  ctx_->clusters().Remove("c3");
  ASSERT_TRUE(Settle([&] {
    Counts r = Replicas();
    return r[0] + r[1] == 11 && r[0] >= 4 && r[1] >= 4;
  })) << json::serialize(json::value_from(Replicas()));
}

TEST_F(StatefulSetControllerTest, EveryPodGetsALoadBalancerInItsClusterOnly) {
  Start();
  Create(3, {{api::kStatefulSetLbNeededAnnotation, "true"}});
  ASSERT_TRUE(Settle([&] { return LoadBalancerNames().size() == 3; }));
  EXPECT_EQ(LoadBalancerNames(),
            (std::vector<std::string>{"store-c1-0", "store-c2-0", "store-c3-0"}));
  auto svc = fed_client_->Get(kServices, kNs, "store-c2-0");
  ASSERT_TRUE(svc.ok());
  EXPECT_EQ(api::AnnotationAt(*svc, api::kPlacementClusterAnnotation), "c2");
  EXPECT_EQ(At(*svc, "spec.selector"), json::parse(R"({"statefulset.kubernetes.io/pod-name":
                                                       "store-c2-0"})"));
  EXPECT_EQ(At(*svc, "spec.ports").as_array()[0].as_object().at("port"), 80);
  EXPECT_EQ(StringAt(Find(*svc, "metadata.ownerReferences")->as_array()[0].as_object(), "uid"),
            StringAt(Fed(), "metadata.uid"));
  ASSERT_TRUE(Settle([&] { return Governing(api::kStatefulSetLbNeededAnnotation) == "true"; }));
  Scale(2);  // the pod that goes takes its Service along
  ASSERT_TRUE(Settle([&] { return LoadBalancerNames().size() == 2; }));
  Edit([](json::object& d) {
    d["metadata"].as_object()["annotations"].as_object()[api::kStatefulSetLbNeededAnnotation] =
        "false";
  });
  ASSERT_TRUE(Settle([&] { return LoadBalancerNames().empty(); }));
}

TEST_F(StatefulSetControllerTest, ATemplateRollsOutOneClusterAtATime) {
  Start();
  Create(6, {{api::kClusterUpdateOrderAnnotation, "c3"}});
  ASSERT_TRUE(Settle([&] { return Replicas() == Counts{2, 2, 2}; }));
  for (int i = 0; i < 3; ++i) Finish(i);
  // The first template is the current revision before the second comes
  // (a template changed before any status was written is the first one
  // the status names, as on a single cluster).
  ASSERT_TRUE(Settle([&] {
    json::object s = Fed();
    return !StringAt(s, "status.currentRevision").empty() && IntAt(s, "status.readyReplicas") == 6;
  })) << json::serialize(Fed());
  SetImage("etcd:3.5");
  Holds([&] { return Image(0) == "etcd:3.0" && Image(1) == "etcd:3.0" && Image(2) == "etcd:3.5"; });
  // What rollout status waits on: the new revision is not the current one.
  ASSERT_TRUE(Settle([&] {
    json::object s = Fed();
    return !StringAt(s, "status.updateRevision").empty() &&
           StringAt(s, "status.currentRevision") != StringAt(s, "status.updateRevision");
  })) << json::serialize(Fed());
  Finish(2);
  ASSERT_TRUE(Settle([&] { return Image(0) == "etcd:3.5"; }));
  EXPECT_EQ(Image(1), "etcd:3.0");
  Finish(0);
  ASSERT_TRUE(Settle([&] { return Image(1) == "etcd:3.5"; }));
  Finish(1);
  ASSERT_TRUE(Settle([&] {
    json::object s = Fed();
    return StringAt(s, "status.currentRevision") == StringAt(s, "status.updateRevision") &&
           IntAt(s, "status.updatedReplicas") == 6 &&
           IntAt(s, "status.observedGeneration") == IntAt(s, "metadata.generation");
  }));
  // The federation's own history: one ControllerRevision per template.
  auto revisions = fed_client_->List(runtime::kControllerRevisions, kNs, {});
  ASSERT_TRUE(revisions.ok());
  EXPECT_EQ(revisions->items.size(), 2u);
}

TEST_F(StatefulSetControllerTest, AClusterWhoseLocalNameIsTooLongGetsNothing) {
  std::string long_name(48, 'x');  // "store-" + 48 = 54 characters
  ASSERT_TRUE(Join(2, long_name).ok());
  Start();
  SetReady(2, long_name);
  Create(4);
  // c3 and the long-named cluster share member 2; only c1, c2, c3 get replicas.
  ASSERT_TRUE(Settle([&] { return Replicas() == Counts{2, 1, 1}; }));
  ASSERT_TRUE(Eventually([&] { return !EventMessages("NameTooLong").empty(); }));
  EXPECT_NE(EventMessages("NameTooLong")[0].find(long_name), std::string::npos);
  EXPECT_TRUE(member_clients_[2]
                  ->Get(kStatefulSets, kNs, LocalName("store", long_name))
                  .status()
                  .Is(Reason::kNotFound));
}

TEST_F(StatefulSetControllerTest, DeletionTakesThePodServicesAndFollowsThePolicy) {
  Start();
  Create(3, {{api::kStatefulSetLbNeededAnnotation, "true"}});
  ASSERT_TRUE(Settle([&] { return LoadBalancerNames().size() == 3; }));
  ASSERT_TRUE(fed_client_->Delete(kStatefulSets, kNs, "store", {}).ok());  // no policy: orphan
  ASSERT_TRUE(Settle([&] { return Fed().empty() && LoadBalancerNames().empty(); }));
  EXPECT_EQ(Replicas(), (Counts{1, 1, 1}));
  auto revisions = fed_client_->List(runtime::kControllerRevisions, kNs, {});
  ASSERT_TRUE(revisions.ok());
  EXPECT_TRUE(revisions->items.empty());
}

// A propagation policy places StatefulSets too: its affinity chooses the
// clusters, its static weights divide the replicas (new ones by weight;
// none ever moves), and Duplicated gives every cluster all of them.
TEST_F(StatefulSetControllerTest, APolicyPlacesAndDividesStatefulSets) {
  Start();
  PutPolicy(Cpp("stores", R"(,"name":"store")",
                R"(,"placement":{"clusterAffinity":{"clusterNames":["c1","c2"]},
                     "replicaScheduling":{"replicaSchedulingType":"Divided",
                       "replicaDivisionPreference":"Weighted",
                       "weightPreference":{"staticWeightList":[
                         {"targetCluster":{"clusterNames":["c1"]},"weight":2},
                         {"targetCluster":{"clusterNames":["c2"]},"weight":1}]}}})",
                "StatefulSet"));
  PutPolicy(Cpp("caches", R"(,"name":"cache")",
                R"(,"placement":{"clusterAffinity":{"clusterNames":["c1","c3"]},
                     "replicaScheduling":{"replicaSchedulingType":"Duplicated"}})",
                "StatefulSet"));
  WaitForPolicies(2);
  Create(6);
  ASSERT_TRUE(Settle([&] { return Replicas() == Counts{4, 2, -1}; }));
  ASSERT_TRUE(Settle([&] {
    return api::AnnotationAt(Fed(), api::policy::kClusterPropagationPolicyNameAnnotation) ==
           "stores";
  }));
  Scale(9);  // the new ones by weight
  ASSERT_TRUE(Settle([&] { return Replicas() == Counts{6, 3, -1}; }));
  Create(2, {}, "cache");
  Holds([&] { return Replicas("cache") == Counts{2, -1, 2}; });
  // An object's own preferences come before any policy.
  Create(2, {{api::kStatefulSetPreferencesAnnotation, R"({"clusters": {"c3": {"weight": 1}}})"}},
         "own");
  ASSERT_TRUE(Settle([&] { return Replicas("own") == Counts{-1, -1, 2}; }));
  EXPECT_EQ(api::AnnotationAt(Fed("own"), api::policy::kClusterPropagationPolicyNameAnnotation),
            "");
}

// An override policy varies a cluster's local StatefulSet; its rollout
// compares the local template with the federation's as overridden there,
// so a new template still goes one cluster at a time and completes.
TEST_F(StatefulSetControllerTest, OverridesVaryTheLocalTemplateAndTheRolloutCompletes) {
  Start();
  CreateOverridePolicy("mirror", "StatefulSet", "c2",
                       R"({"imageOverrider":[{"component":"Registry","operator":"replace",
                           "value":"mirror.example.com"}]})");
  Create(3);
  ASSERT_TRUE(Settle([&] { return Replicas() == Counts{1, 1, 1}; }));
  ASSERT_TRUE(Settle([&] { return Image(1) == "mirror.example.com/etcd:3.0"; }));
  EXPECT_EQ(Image(0), "etcd:3.0");
  // The federated object names the overrides per cluster (kubectl describe).
  ASSERT_TRUE(Settle([&] {
    return api::AnnotationAt(Fed(), api::kOverridesAnnotation) ==
           R"({"c2":["ClusterOverridePolicy mirror"]})";
  })) << api::AnnotationAt(Fed(), api::kOverridesAnnotation);
  EXPECT_EQ(
      StringAt(Find(Fed(), "spec.template.spec.containers")->as_array()[0].as_object(), "image"),
      "etcd:3.0");
  for (int i = 0; i < 3; ++i) Finish(i);
  ASSERT_TRUE(Settle([&] { return IntAt(Fed(), "status.updatedReplicas") == 3; }))
      << json::serialize(Fed());
  SetImage("etcd:3.5");
  ASSERT_TRUE(Settle([&] { return Image(0) == "etcd:3.5"; }));
  EXPECT_EQ(Image(1), "mirror.example.com/etcd:3.0");
  Finish(0);
  ASSERT_TRUE(Settle([&] { return Image(1) == "mirror.example.com/etcd:3.5"; }));
  Finish(1);
  ASSERT_TRUE(Settle([&] { return Image(2) == "etcd:3.5"; }));
  Finish(2);
  ASSERT_TRUE(Settle([&] {
    json::object s = Fed();
    return StringAt(s, "status.currentRevision") == StringAt(s, "status.updateRevision") &&
           IntAt(s, "status.updatedReplicas") == 3;
  })) << json::serialize(Fed());
}

}  // namespace
}  // namespace flotilla::federation::statefulset
