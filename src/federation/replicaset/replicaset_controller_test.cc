// The federated ReplicaSet controller against real API servers
// (cluster::testing::ControllerTest): the tests play the members'
// ReplicaSet controller, scheduler and kubelet. Time moves on a FakeClock.
#include "federation/replicaset/replicaset_controller.h"

#include <gtest/gtest.h>

#include "api/federated.h"
#include "api/views.h"
#include "federation/cluster/controller_fixture.h"
#include "federation/common/cluster_selector.h"
#include "federation/common/customizations.h"
#include "federation/common/member_copy.h"
#include "federation/common/names.h"
#include "federation/common/policies.h"
#include "federation/common/quotas.h"
#include "federation/common/test_util.h"
#include "federation/sync/sync_controller.h"

namespace flotilla::federation::replicaset {
namespace {

using cluster::testing::At;
using runtime::testing::Eventually;

constexpr Duration kThreshold = std::chrono::seconds(60);
constexpr Duration kRecheck = std::chrono::seconds(30);
constexpr Duration kProbeInterval = std::chrono::minutes(5);

class ReplicaSetControllerTest : public cluster::testing::ControllerTest {
 protected:
  ReplicaSetControllerTest() : ControllerTest({ReplicaSetController::kName}, "default/web") {}

  std::map<std::string, std::string> Labels(int i) const override {
    return {{"location", i == 0 ? "on-prem" : "cloud"}};
  }
  // Creates of ReplicaSets fail while reject_[i] is set.
  std::shared_ptr<client::Client> ReadyClient(int i) override {
    return std::make_shared<cluster::testing::RejectingClient>(members_[i].InProcess(),
                                                               "replicasets", reject_[i]);
  }
  // Starts with the first `ready` clusters probed ready.
  void Start(WorkloadOptions options = {}, int ready = kMembers) {
    options.unschedulable_threshold = kThreshold;
    options.recheck_delay = kRecheck;
    options.capacity_probe_interval = kProbeInterval;
    options.member_change_delay = Duration::zero();
    StartWith([&] { Make<ReplicaSetController>(options); }, ready);
  }

  void CreateFrs(int64_t replicas, const std::string& prefs = "", const std::string& selector = "",
                 const std::string& name = "web") {
    json::object annotations;
    if (!prefs.empty()) annotations["federation.kubernetes.io/replica-set-preferences"] = prefs;
    if (!selector.empty()) annotations[api::kClusterSelectorAnnotation] = selector;
    ASSERT_TRUE(fed_client_->Create(kReplicaSets, kNs, Rs(name, replicas, annotations)).ok());
  }
  static json::object Rs(const std::string& name, int64_t replicas, json::object annotations) {
    auto rs = ParseJsonObject(R"({"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "spec": {"selector": {"matchLabels": {"app": "APP"}},
                 "template": {"metadata": {"labels": {"app": "APP"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})");
    EXPECT_TRUE(rs.ok());
    json::object out = *rs;
    out["metadata"] = json::object{{"name", name}, {"annotations", std::move(annotations)}};
    json::object& spec = out["spec"].as_object();
    spec["replicas"] = replicas;
    spec["selector"].as_object()["matchLabels"].as_object()["app"] = name;
    spec["template"].as_object()["metadata"].as_object()["labels"].as_object()["app"] = name;
    return out;
  }
  json::object Frs(const std::string& name = "web") {
    auto frs = fed_client_->Get(kReplicaSets, kNs, name);
    return frs.ok() ? *frs : json::object{};
  }
  // The local ReplicaSet in member i; {} when there is none.
  json::object Local(int i, const std::string& name = "web") {
    auto lrs = member_clients_[i]->Get(kReplicaSets, kNs, name);
    return lrs.ok() ? *lrs : json::object{};
  }
  // spec.replicas of the local ReplicaSets, -1 where there is none.
  std::vector<int64_t> Placement(const std::string& name = "web") {
    std::vector<int64_t> out;
    for (int i = 0; i < 3; ++i) {
      json::value r = At(Local(i, name), "spec.replicas");
      out.push_back(r.is_null() ? -1 : r.to_number<int64_t>());
    }
    return out;
  }
  static int64_t Sum(const std::vector<int64_t>& v) {
    int64_t s = 0;
    for (int64_t n : v) s += std::max<int64_t>(n, 0);
    return s;
  }
  // Plays member i's ReplicaSet controller: status as if every replica ran.
  void RunAll(int i, const std::string& name = "web") {
    json::object lrs = Local(i, name);
    ASSERT_FALSE(lrs.empty());
    json::value replicas = *Find(lrs, "spec.replicas");
    lrs["status"] = json::object{{"replicas", replicas},
                                 {"fullyLabeledReplicas", replicas},
                                 {"readyReplicas", replicas},
                                 {"availableReplicas", replicas},
                                 {"observedGeneration", *Find(lrs, "metadata.generation")}};
    ASSERT_TRUE(member_clients_[i]->UpdateStatus(kReplicaSets, kNs, lrs).ok());
  }
  // A pod of member i's local ReplicaSet, bound to a node when `node` is
  // not empty.
  json::object Pod(int i, const std::string& name, const std::string& pod_name,
                   const std::string& node) {
    json::object lrs = Local(i, name);
    EXPECT_FALSE(lrs.empty());
    json::object owner{{"apiVersion", "apps/v1"},
                       {"kind", "ReplicaSet"},
                       {"name", name},
                       {"uid", *Find(lrs, "metadata.uid")},
                       {"controller", true}};
    json::object container{{"name", "c"}, {"image", "nginx"}};
    json::object spec{{"containers", json::array{container}}};
    if (!node.empty()) spec["nodeName"] = node;
    return json::object{{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata", json::object{{"name", pod_name},
                                                  {"labels", json::object{{"app", name}}},
                                                  {"ownerReferences", json::array{owner}}}},
                        {"spec", std::move(spec)}};
  }
  // Plays member i's scheduler: `n` pods of the local ReplicaSet that no
  // node can take.
  void AddUnschedulablePods(int i, int n, const std::string& name = "web") {
    for (int p = 0; p < n; ++p) {
      CreateUnschedulablePod(i, Pod(i, name, name + "-pending-" + std::to_string(p), ""));
    }
  }
  // Plays member i's ReplicaSet controller scaling down: deletes the pods
  // that wait, `n` of them (0: all).
  void DeleteUnschedulablePods(int i, int n = 0, const std::string& name = "web") {
    for (int p = 0; n == 0 || p < n; ++p) {
      Status s = member_clients_[i]->Delete(kPods, kNs, name + "-pending-" + std::to_string(p),
                                            {.grace_period_seconds = 0});
      if (s.Is(Reason::kNotFound)) break;
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
  }
  // Plays member i's scheduler for `n` pods that run (numbered from
  // `first`).
  void AddRunningPods(int i, int n, const std::string& name = "web", int first = 0) {
    for (int p = first; p < first + n; ++p) {
      auto made = member_clients_[i]->Create(
          kPods, kNs, Pod(i, name, name + "-running-" + std::to_string(p), "n1"));
      ASSERT_TRUE(made.ok()) << made.status().ToString();
    }
  }
  // The federated ReplicaSet's per-cluster breakdown annotation, {} when
  // it has none.
  json::object Breakdown() {
    json::value a = At(Frs(), "metadata.annotations");
    if (!a.is_object()) return {};
    const json::value* v = a.as_object().if_contains(api::kReplicaSetStatusAnnotation);
    if (v == nullptr || !v->is_string()) return {};
    auto parsed = ParseJsonObject(v->as_string());
    return parsed.ok() ? *parsed : json::object{};
  }
  // 30 replicas spread over a, b and c (rebalance); a and b run all
  // theirs, c runs 4 of its 10.
  void SpreadThirtyWithFourRunningInC() {
    Start();
    CreateFrs(30, R"({"rebalance": true, "clusters": {"*": {"weight": 1}}})");
    ASSERT_TRUE(Settle([&] { return Placement() == std::vector<int64_t>{10, 10, 10}; }));
    AddRunningPods(0, 10);
    AddRunningPods(1, 10);
    AddRunningPods(2, 4);
  }
  // Moves the clock to `early` before the unschedulable threshold (nothing
  // moves), then past it: c keeps the 4 it runs, a and b take the other 26.
  void CrossTheThreshold(Duration early) {
    clock_.Advance(kThreshold - early);
    // The check the threshold needs is waiting on the clock.
    ASSERT_TRUE(Settle([&] {
      runtime::WorkQueueStats q = Controller().Metrics().queue;
      return q.depth == 0 && q.processing == 0 && q.waiting == 1;
    }));
    EXPECT_EQ(Placement(), (std::vector<int64_t>{10, 10, 10}));
    clock_.Advance(early);
    ASSERT_TRUE(Settle([&] {
      return Placement() == std::vector<int64_t>{13, 13, 4};
    })) << json::serialize(json::value_from(Placement()));
  }
  // Writes the Ready condition a cluster controller would have written.
  void StoreReady(int i) {
    ASSERT_TRUE(Eventually([&] {
      auto cluster = fed_client_->Get(kClusters, "", Name(i));
      if (!cluster.ok()) return false;
      json::object c = *cluster;
      c["status"] = json::object{
          {"conditions", json::array{json::object{{"type", "Ready"}, {"status", "True"}}}}};
      return fed_client_->UpdateStatus(kClusters, "", c).ok();
    }));
  }
  bool HasEvent(const std::string& reason) {
    auto r = EventReasons();
    return std::find(r.begin(), r.end(), reason) != r.end();
  }

  std::atomic<bool> reject_[kMembers] = {false, false, false};
};

TEST_F(ReplicaSetControllerTest, SpreadsReplicasEvenlyAndManagesTheLocalCopies) {
  Start();
  CreateFrs(50, R"({"rebalance": true, "clusters": {"*": {"weight": 1}}})");
  ASSERT_TRUE(Settle([&] { return Sum(Placement()) == 50; }));
  for (int64_t n : Placement()) EXPECT_TRUE(n == 16 || n == 17) << n;
  json::object local = Local(0);
  EXPECT_TRUE(IsManaged(local));
  EXPECT_EQ(Find(local, "metadata.annotations")->as_object().at(api::kFederatedObjectAnnotation),
            json::value("default/web"));
  json::object frs = Frs();
  EXPECT_EQ(*Find(frs, "metadata.finalizers"),
            json::value(json::array{api::kDeleteFromUnderlyingClustersFinalizer}));
  ASSERT_TRUE(Settle([&] { return HasEvent("PlacementChanged") && HasEvent("CreateInCluster"); }));
}

TEST_F(ReplicaSetControllerTest, StatusSumsTheMembersAndObservesOnceAllDid) {
  Start();
  CreateFrs(9);
  ASSERT_TRUE(Settle([&] { return Sum(Placement()) == 9; }));
  RunAll(0);
  RunAll(1);
  // One member has not reported yet: the generation is not observed.
  ASSERT_TRUE(Settle([&] { return At(Frs(), "status.readyReplicas") == json::value(6); }));
  EXPECT_TRUE(At(Frs(), "status.observedGeneration").is_null());
  RunAll(2);
  ASSERT_TRUE(Settle([&] {
    json::object frs = Frs();
    json::value observed = At(frs, "status.observedGeneration");
    return !observed.is_null() && observed == At(frs, "metadata.generation");
  }));
  json::object frs = Frs();
  EXPECT_EQ(*Find(frs, "status.replicas"), json::value(9));
  EXPECT_EQ(*Find(frs, "status.availableReplicas"), json::value(9));
  ASSERT_TRUE(Settle([&] { return At(Breakdown(), "clusters.b.ready") == json::value(3); }))
      << json::serialize(Breakdown());
  EXPECT_EQ(At(Breakdown(), "clusters.a.planned"), json::value(3));
}

TEST_F(ReplicaSetControllerTest, LocalCopiesDeletedOrEditedByHandAreRestored) {
  Start();
  CreateFrs(6);
  ASSERT_TRUE(Settle([&] { return Placement() == std::vector<int64_t>{2, 2, 2}; }));
  json::value uid = At(Local(1), "metadata.uid");
  ASSERT_TRUE(member_clients_[1]->Delete(kReplicaSets, kNs, "web", {}).ok());
  ASSERT_TRUE(Eventually([&] {
    json::object edited = Local(2);
    edited["spec"].as_object()["replicas"] = 7;
    return member_clients_[2]->Update(kReplicaSets, kNs, edited).ok();
  }));
  ASSERT_TRUE(Settle([&] {
    json::value recreated = At(Local(1), "metadata.uid");
    return Placement() == std::vector<int64_t>{2, 2, 2} && !recreated.is_null() && recreated != uid;
  })) << json::serialize(json::value_from(Placement()));
}

// A ResourceInterpreterCustomization of ReplicaSets with `operation` (a
// customizations entry) running `script`.
json::object ReplicaSetCustomization(const std::string& operation, const std::string& script) {
  json::object c{{"apiVersion", "config.karmada.io/v1alpha1"},
                 {"kind", "ResourceInterpreterCustomization"},
                 {"metadata", json::object{{"name", "replicasets"}}}};
  c["spec"] = json::object{
      {"target", json::object{{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}}},
      {"customizations", json::object{{operation, json::object{{"luaScript", script}}}}}};
  return c;
}

// A customization of a built-in workload kind overrides the operations it
// defines: what its Retain keeps of a member's copy stays through the
// federation's updates, and the copy is up to date with it; what it does
// not keep is restored.
TEST_F(ReplicaSetControllerTest, WhatARetentionKeepsOfAMembersCopyStays) {
  Start();
  ASSERT_TRUE(
      fed_client_
          ->Create(kResourceInterpreterCustomizations, "", ReplicaSetCustomization("retention", R"(
function Retain(desired, observed)
  if observed.metadata.labels ~= nil and observed.metadata.labels.team ~= nil then
    if desired.metadata.labels == nil then desired.metadata.labels = {} end
    desired.metadata.labels.team = observed.metadata.labels.team
  end
  return desired
end)"))
          .ok());
  ASSERT_TRUE(
      Eventually([&] { return ctx_->customizations().For("apps/v1", "ReplicaSet") != nullptr; }));
  CreateFrs(6);
  ASSERT_TRUE(Settle([&] { return Placement() == std::vector<int64_t>{2, 2, 2}; }));
  ASSERT_TRUE(Eventually([&] {
    json::object edited = Local(1);
    json::object& meta = edited["metadata"].as_object();
    if (!meta.contains("labels") || !meta["labels"].is_object()) meta["labels"] = json::object{};
    meta["labels"].as_object()["team"] = "ops";
    meta["labels"].as_object()["other"] = "x";
    return member_clients_[1]->Update(kReplicaSets, kNs, edited).ok();
  }));
  // The federation scales: b's copy is rewritten with its label kept.
  ASSERT_TRUE(Eventually([&] {
    json::object frs = Frs();
    frs["spec"].as_object()["replicas"] = 9;
    return fed_client_->Update(kReplicaSets, kNs, frs).ok();
  }));
  Holds([&] {
    json::object b = Local(1);
    return Placement() == std::vector<int64_t>{3, 3, 3} &&
           At(b, "metadata.labels.team") == json::value("ops") &&
           At(b, "metadata.labels.other").is_null();
  });
}

// GetDependencies of a workload kind's customization: the objects its pods
// need go where its local objects are, whatever their own placement says,
// and leave with them.
TEST_F(ReplicaSetControllerTest, WhatAReplicaSetDependsOnGoesWhereItIs) {
  StartWith([&] {
    WorkloadOptions options;
    options.unschedulable_threshold = kThreshold;
    options.recheck_delay = kRecheck;
    options.capacity_probe_interval = kProbeInterval;
    Make<ReplicaSetController>(options);
    Make<sync::SyncController>();
  });
  ASSERT_TRUE(fed_client_
                  ->Create(kResourceInterpreterCustomizations, "",
                           ReplicaSetCustomization("dependencyInterpretation", R"(
local kube = require('kube')
function GetDependencies(desired)
  return kube.getPodDependencies(desired.spec.template, desired.metadata.namespace)
end)"))
                  .ok());
  ASSERT_TRUE(
      Eventually([&] { return ctx_->customizations().For("apps/v1", "ReplicaSet") != nullptr; }));
  // Its own selector admits no cluster.
  json::object cm{
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", json::object{{"name", "cfg"},
                                {"annotations", json::object{{api::kClusterSelectorAnnotation,
                                                              R"([{"key": "location", "operator":
                                                              "In", "values": ["nowhere"]}])"}}}}},
      {"data", json::object{{"k", "v"}}}};
  ASSERT_TRUE(fed_client_->Create(runtime::testing::kConfigMaps, kNs, cm).ok());
  json::object rs = Rs("web", 2,
                       json::object{{api::kClusterSelectorAnnotation,
                                     R"([{"key": "location", "operator": "In",
                                          "values": ["on-prem"]}])"}});
  json::object& pod = rs["spec"].as_object()["template"].as_object()["spec"].as_object();
  pod["volumes"] =
      json::array{json::object{{"name", "cfg"}, {"configMap", json::object{{"name", "cfg"}}}}};
  ASSERT_TRUE(fed_client_->Create(kReplicaSets, kNs, rs).ok());
  auto has_cfg = [&](int i) {
    return member_clients_[i]->Get(runtime::testing::kConfigMaps, kNs, "cfg").ok();
  };
  ASSERT_TRUE(Eventually([&] { return Placement() == std::vector<int64_t>{2, -1, -1}; }));
  ASSERT_TRUE(Eventually([&] { return has_cfg(0); }));
  EXPECT_FALSE(has_cfg(1));
  EXPECT_FALSE(has_cfg(2));
  // The ReplicaSet goes with its copies: so does what it needed.
  client::DeleteOptions background{.propagation_policy = "Background"};
  ASSERT_TRUE(fed_client_->Delete(kReplicaSets, kNs, "web", background).ok());
  // A write that loses a race (the ReplicaSet's status, its finalizer)
  // backs off: time may have to move on by more than a retry's.
  ASSERT_TRUE(Settle(
      [&] {
        return Placement() == std::vector<int64_t>{-1, -1, -1} &&
               fed_client_->Get(kReplicaSets, kNs, "web").status().Is(Reason::kNotFound);
      },
      std::chrono::seconds(60)));
  // The ConfigMap's own controller may wait for its member cache to show
  // its create (Settle watches only the ReplicaSets' queue): time moves on
  // for it; nothing of the ReplicaSet is left to move.
  ASSERT_TRUE(Eventually([&] {
    if (!has_cfg(0)) return true;
    clock_.Advance(std::chrono::milliseconds(100));
    return false;
  }));
}

// A policy with propagateDeps takes what the template uses where the
// ReplicaSet goes (Karmada's built-in dependencies), with no customization.
TEST_F(ReplicaSetControllerTest, APolicyWithPropagateDepsTakesWhatTheTemplateUsesAlong) {
  StartWith([&] {
    WorkloadOptions options;
    options.member_change_delay = Duration::zero();
    Make<ReplicaSetController>(options);
    Make<sync::SyncController>();
  });
  auto policy = [](const std::string& clusters) {
    return Cpp("deps", R"(,"name":"web")",
               R"(,"propagateDeps":true,"placement":{"clusterAffinity":{"clusterNames":)" +
                   clusters + "}}");
  };
  PutPolicy(policy(R"(["a"])"));
  WaitForPolicies(1);
  // Their own selector admits no cluster.
  for (const char* name : {"cfg", "unused"}) {
    json::object cm{
        {"apiVersion", "v1"},
        {"kind", "ConfigMap"},
        {"metadata", json::object{{"name", name},
                                  {"annotations", json::object{{api::kClusterSelectorAnnotation,
                                                                R"([{"key": "location", "operator":
                                                                "In", "values": ["nowhere"]}])"}}}}},
        {"data", json::object{{"k", "v"}}}};
    ASSERT_TRUE(fed_client_->Create(runtime::testing::kConfigMaps, kNs, cm).ok());
  }
  json::object rs = Rs("web", 2, json::object{});
  json::object& pod = rs["spec"].as_object()["template"].as_object()["spec"].as_object();
  pod["containers"].as_array()[0].as_object()["envFrom"] =
      json::array{json::object{{"configMapRef", json::object{{"name", "cfg"}}}}};
  ASSERT_TRUE(fed_client_->Create(kReplicaSets, kNs, rs).ok());
  auto has = [&](int i, const char* name) {
    return member_clients_[i]->Get(runtime::testing::kConfigMaps, kNs, name).ok();
  };
  ASSERT_TRUE(Eventually([&] { return Placement() == std::vector<int64_t>{2, -1, -1}; }));
  ASSERT_TRUE(Eventually([&] { return has(0, "cfg"); }));
  EXPECT_FALSE(has(1, "cfg"));
  EXPECT_FALSE(has(2, "cfg"));
  // The policy takes the ReplicaSet to b as well: what it uses follows.
  PutPolicy(policy(R"(["a", "b"])"));
  ASSERT_TRUE(Eventually([&] { return Placement() == std::vector<int64_t>{2, 2, -1}; }));
  ASSERT_TRUE(Eventually([&] { return has(1, "cfg"); }));
  EXPECT_FALSE(has(2, "cfg"));
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(has(i, "unused")) << i;
}

// Without a policy too, what the template uses goes where the ReplicaSet
// is: a ConfigMap whose own selector admits no cluster, and a claim, which
// nothing else places; both follow it when it moves.
TEST_F(ReplicaSetControllerTest, WhatTheTemplateUsesFollowsItWithoutAPolicy) {
  StartWith([&] {
    WorkloadOptions options;
    options.member_change_delay = Duration::zero();
    Make<ReplicaSetController>(options);
    Make<sync::SyncController>();
  });
  json::object cm{{"apiVersion", "v1"},
                  {"kind", "ConfigMap"},
                  {"metadata", json::object{{"name", "cfg"},
                                            {"annotations",
                                             json::object{{api::kClusterSelectorAnnotation,
                                                           R"([{"key": "location", "operator": "In",
                                                  "values": ["nowhere"]}])"}}}}},
                  {"data", json::object{{"k", "v"}}}};
  ASSERT_TRUE(fed_client_->Create(runtime::testing::kConfigMaps, kNs, cm).ok());
  ASSERT_TRUE(fed_client_
                  ->Create(kPersistentVolumeClaims, kNs,
                           *ParseJsonObject(R"({"metadata":{"name":"data"},"spec":{
                               "accessModes":["ReadWriteOnce"],
                               "resources":{"requests":{"storage":"1Gi"}}}})"))
                  .ok());
  json::object rs =
      Rs("web", 2,
         json::object{{api::kClusterSelectorAnnotation,
                       R"([{"key":"location","operator":"In","values":["on-prem"]}])"}});
  json::object& pod = rs["spec"].as_object()["template"].as_object()["spec"].as_object();
  pod["containers"].as_array()[0].as_object()["envFrom"] =
      json::array{json::object{{"configMapRef", json::object{{"name", "cfg"}}}}};
  pod["volumes"] = json::array{
      json::object{{"name", "d"}, {"persistentVolumeClaim", json::object{{"claimName", "data"}}}}};
  ASSERT_TRUE(fed_client_->Create(kReplicaSets, kNs, rs).ok());
  auto has = [&](int i, const client::ResourceRef& r, const char* name) {
    return member_clients_[i]->Get(r, kNs, name).ok();
  };
  ASSERT_TRUE(Eventually([&] { return Placement() == std::vector<int64_t>{2, -1, -1}; }));
  ASSERT_TRUE(Eventually([&] {
    return has(0, runtime::testing::kConfigMaps, "cfg") && has(0, kPersistentVolumeClaims, "data");
  }));
  for (int i : {1, 2}) {
    EXPECT_FALSE(has(i, runtime::testing::kConfigMaps, "cfg")) << i;
    EXPECT_FALSE(has(i, kPersistentVolumeClaims, "data")) << i;
  }
  // It moves to the cloud: they follow, and leave on-prem (no pod uses the
  // claim there).
  ASSERT_TRUE(federation::testing::PatchAnnotation(
      *fed_client_, kReplicaSets, kNs, "web", api::kClusterSelectorAnnotation,
      R"([{"key":"location","operator":"In","values":["cloud"]}])"));
  // (The member's API server protects the claim: it is being deleted, and
  // its pvc-protection controller, not run here, would let it go.)
  auto deleted = [&](int i, const client::ResourceRef& r, const char* name) {
    StatusOr<json::object> o = member_clients_[i]->Get(r, kNs, name);
    return !o.ok() || !StringAt(*o, "metadata.deletionTimestamp").empty();
  };
  ASSERT_TRUE(Eventually([&] {
    return has(1, runtime::testing::kConfigMaps, "cfg") &&
           has(2, kPersistentVolumeClaims, "data") &&
           deleted(0, runtime::testing::kConfigMaps, "cfg") &&
           deleted(0, kPersistentVolumeClaims, "data");
  }));
}

// A policy counts what it places in its status, and hears in Events when
// an object starts or stops being placed by it.
TEST_F(ReplicaSetControllerTest, APolicyCountsAndHearsWhatItPlaces) {
  Start();
  PutPolicy(Cpp("all", "", R"(,"placement":{"clusterAffinity":{"clusterNames":["a"]}})"));
  WaitForPolicies(1);
  auto placed = [&](const client::ResourceRef& resource, const std::string& ns,
                    const std::string& name) -> int64_t {
    auto p = fed_client_->Get(resource, ns, name);
    const json::value* n = p.ok() ? Find(*p, "status.placedObjects") : nullptr;
    return n != nullptr && n->is_int64() ? n->get_int64() : -1;
  };
  ASSERT_TRUE(Eventually([&] { return placed(kClusterPropagationPolicies, "", "all") == 0; }));
  ASSERT_TRUE(fed_client_->Create(kReplicaSets, kNs, Rs("web", 1, {})).ok());
  ASSERT_TRUE(fed_client_->Create(kReplicaSets, kNs, Rs("api", 1, {})).ok());
  ASSERT_TRUE(Eventually([&] { return placed(kClusterPropagationPolicies, "", "all") == 2; }));
  ASSERT_TRUE(Eventually([&] { return EventMessages("Matched").size() == 2; }));
  std::vector<std::string> matched = EventMessages("Matched");
  std::sort(matched.begin(), matched.end());
  EXPECT_EQ(matched, (std::vector<std::string>{"places ReplicaSet default/api",
                                               "places ReplicaSet default/web"}));
  // A namespaced policy that preempts comes before a cluster one: web
  // moves to it.
  auto pp = ParseJsonObject(R"({"apiVersion":"policy.karmada.io/v1alpha1",
      "kind":"PropagationPolicy","metadata":{"name":"web"},
      "spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web"}],
              "preemption":"Always",
              "placement":{"clusterAffinity":{"clusterNames":["b"]}}}})");
  ASSERT_TRUE(pp.ok());
  ASSERT_TRUE(fed_client_->Create(kPropagationPolicies, kNs, *pp).ok());
  ASSERT_TRUE(Eventually([&] {
    return placed(kClusterPropagationPolicies, "", "all") == 1 &&
           placed(kPropagationPolicies, kNs, "web") == 1;
  }));
  ASSERT_TRUE(Eventually([&] { return !EventMessages("Unmatched").empty(); }));
  EXPECT_EQ(EventMessages("Unmatched"),
            (std::vector<std::string>{"no longer places ReplicaSet default/web"}));
  // An object that goes is no longer counted.
  ASSERT_TRUE(fed_client_->Delete(kReplicaSets, kNs, "api", {}).ok());
  ASSERT_TRUE(Eventually([&] { return placed(kClusterPropagationPolicies, "", "all") == 0; }));
}

// An override that cannot apply leaves the copy as it was and is listed in
// its policy's status until the object goes.
TEST_F(ReplicaSetControllerTest, AnOverrideThatCannotApplyIsInItsPolicysStatus) {
  Start();
  CreateOverridePolicy("bad", "ReplicaSet", "a",
                       R"({"plaintext":[{"path":"/spec/absent","operator":"remove"}]})");
  auto failures = [&] {
    auto p = fed_client_->Get(kClusterOverridePolicies, "", "bad");
    const json::value* f = p.ok() ? Find(*p, "status.failures") : nullptr;
    return f != nullptr && f->is_array() ? f->get_array() : json::array{json::value("none")};
  };
  ASSERT_TRUE(fed_client_->Create(kReplicaSets, kNs, Rs("web", 3, {})).ok());
  // One read of the status per try: each read is a GET of its own, and the
  // status may change between two of them.
  json::object f;
  ASSERT_TRUE(Eventually([&] {
    json::array now = failures();
    if (now.size() != 1 || !now[0].is_object()) return false;
    f = now[0].as_object();
    return true;
  }));
  EXPECT_EQ(StringAt(f, "object"), "ReplicaSet default/web");
  EXPECT_EQ(StringAt(f, "cluster"), "a");
  EXPECT_NE(StringAt(f, "message").find("/spec/absent"), std::string::npos)
      << StringAt(f, "message");
  EXPECT_TRUE(Local(0).empty());  // nothing created there
  ASSERT_TRUE(Eventually([&] { return !EventMessages("ApplyOverridePolicyFailed").empty(); }));
  ASSERT_TRUE(fed_client_->Delete(kReplicaSets, kNs, "web", {}).ok());
  ASSERT_TRUE(Eventually([&] { return failures().empty(); }));
}

// A taint keeps away what its policy does not tolerate: NoSchedule gets it
// nothing new there, NoExecute takes it off; a toleration lets it in.
TEST_F(ReplicaSetControllerTest, TaintsKeepAwayWhatThePolicyDoesNotTolerate) {
  Start();
  auto policy = [](const std::string& tolerations) {
    return Cpp("all", "", R"(,"placement":{"clusterTolerations":)" + tolerations + "}");
  };
  auto taint = [&](const std::string& cluster, std::string_view taints) {
    return fed_client_
        ->Patch(kClusters, "", cluster, client::PatchType::kMerge,
                R"({"spec":{"taints":)" + std::string(taints) + "}}")
        .ok();
  };
  ASSERT_TRUE(taint("b", R"([{"key":"gpu","value":"a100","effect":"NoSchedule"}])"));
  PutPolicy(policy("[]"));
  // The ReplicaSet comes once the federation sees the taint and the policy
  // (a taint seen later keeps what a cluster has, as a cordon does).
  ASSERT_TRUE(Eventually([&] {
    runtime::ObjectPtr b = ctx_->cluster_objects().cache().Get("b");
    return b != nullptr && !api::policy::TaintsOf(*b).empty();
  }));
  WaitForPolicies(1);
  CreateFrs(2);
  ASSERT_TRUE(Eventually([&] { return Placement() == std::vector<int64_t>{2, -1, 2}; }));

  PutPolicy(policy(R"([{"key":"gpu","operator":"Exists"}])"));
  ASSERT_TRUE(Eventually([&] { return Placement() == std::vector<int64_t>{2, 2, 2}; }));

  // NoExecute on c: its replicas leave (the others run all of them).
  ASSERT_TRUE(taint("c", R"([{"key":"maintenance","effect":"NoExecute"}])"));
  ASSERT_TRUE(Eventually([&] {
    std::vector<int64_t> p = Placement();
    return p[0] == 2 && p[1] == 2 && p[2] <= 0;
  }));
}

// Spread constraints choose among the admitted clusters; when they cannot
// be met, nothing new is placed.
TEST_F(ReplicaSetControllerTest, SpreadConstraintsChooseAmongTheClusters) {
  Start();
  auto policy = [](const std::string& constraints) {
    return Cpp("spread", "", R"(,"placement":{"spreadConstraints":)" + constraints + "}");
  };
  PutPolicy(policy(R"([{"spreadByField":"cluster","minGroups":4,"maxGroups":4}])"));
  WaitForPolicies(1);
  CreateFrs(2, "", "", "wide");
  CreateFrs(2);
  // Four clusters there are not: "wide" and "web" are placed nowhere.
  ASSERT_TRUE(Eventually([&] {
    auto events = fed_client_->List(client::kEvents, kNs, {});
    if (!events.ok()) return false;
    for (const json::object& e : events->items) {
      if (StringAt(e, "reason") == "SpreadConstraintsUnsatisfied") return true;
    }
    return false;
  }));
  EXPECT_EQ(Placement(), (std::vector<int64_t>{-1, -1, -1}));

  PutPolicy(policy(R"([{"spreadByField":"cluster","minGroups":1,"maxGroups":2}])"));
  // Two clusters each (without room figures, by name), every one running
  // all the replicas (Duplicated: no replicaScheduling).
  ASSERT_TRUE(Eventually([&] { return Placement() == std::vector<int64_t>{2, 2, -1}; }));
  ASSERT_TRUE(Eventually([&] { return Placement("wide") == std::vector<int64_t>{2, 2, -1}; }));
}

// Without rebalance, a local ReplicaSet deleted by hand (its pods orphaned,
// still running) comes back with the share it had; nothing moves.
TEST_F(ReplicaSetControllerTest, ALocalReplicaSetDeletedByHandGetsItsShareBack) {
  Start();
  CreateFrs(40, R"({"rebalance": false, "clusters": {"a": {"weight": 2}, "b": {"weight": 1},
                                                     "c": {"weight": 1}}})");
  ASSERT_TRUE(Settle([&] { return Placement() == std::vector<int64_t>{20, 10, 10}; }));
  for (int i = 0; i < 3; ++i) RunAll(i);
  ASSERT_TRUE(Settle([&] { return At(Breakdown(), "clusters.a.planned") == json::value(20); }));
  json::value uid = At(Local(0), "metadata.uid");
  client::DeleteOptions orphan{.propagation_policy = "Orphan"};
  ASSERT_TRUE(member_clients_[0]->Delete(kReplicaSets, kNs, "web", orphan).ok());
  ASSERT_TRUE(Settle([&] {
    json::value recreated = At(Local(0), "metadata.uid");
    return !recreated.is_null() && recreated != uid;
  }));
  EXPECT_EQ(Placement(), (std::vector<int64_t>{20, 10, 10}));
  // Only the first placement was a change (events are written in the
  // background).
  ASSERT_TRUE(Eventually([&] { return !EventMessages("PlacementChanged").empty(); }));
  std::vector<std::string> changes = EventMessages("PlacementChanged");
  EXPECT_EQ(changes,
            std::vector<std::string>{"Replicas per cluster: a=20, b=10, c=10 (were none)"});
}

// A restarted control plane plans without a cluster whose stored status
// says Ready only once it has probed it, or after the sync grace: the
// clusters probed first do not take everyone's replicas at each restart.
TEST_F(ReplicaSetControllerTest, ARestartWaitsForTheClustersLastSeenReady) {
  Start();
  CreateFrs(30, R"({"rebalance": true, "clusters": {"*": {"weight": 1}}})");
  ASSERT_TRUE(Settle([&] { return Placement() == std::vector<int64_t>{10, 10, 10}; }));
  for (int i = 0; i < 3; ++i) StoreReady(i);
  Stop();
  Start({}, /*ready=*/1);  // only a probed so far
  Holds([&] { return Placement() == std::vector<int64_t>{10, 10, 10}; });
  SetReady(1);
  SetReady(2);
  Holds([&] { return Placement() == std::vector<int64_t>{10, 10, 10}; });
  // b and c are never probed again: after the grace, a takes their share.
  Stop();
  Start({}, /*ready=*/1);
  Holds([&] { return Placement() == std::vector<int64_t>{10, 10, 10}; });
  clock_.Advance(WorkloadOptions{}.sync_grace);
  ASSERT_TRUE(Settle([&] {
    return Placement() == std::vector<int64_t>{30, 10, 10};
  })) << json::serialize(json::value_from(Placement()));
}

// [I4] and the README's overflow (issue 36): the placement sums to the
// replicas asked for once the move is done, and stays so while nothing
// changes; probes for room are bounded and end.
TEST_F(ReplicaSetControllerTest, PodsUnschedulableTooLongMoveElsewhereAndThePlacementSumsExactly) {
  // c runs 4 of its 10; 6 cannot be scheduled.
  SpreadThirtyWithFourRunningInC();
  AddUnschedulablePods(2, 6);
  ASSERT_TRUE(
      Settle([&] { return At(Breakdown(), "clusters.c.unschedulable") == json::value(6); }));
  // c keeps the 4 it runs; a and b take the other 26 between them.
  CrossTheThreshold(std::chrono::seconds(5));
  // The breakdown follows the placement.
  ASSERT_TRUE(Settle([&] {
    return At(Breakdown(), "clusters.c.estimatedCapacity") == json::value(4);
  })) << json::serialize(Breakdown());
  EXPECT_EQ(At(Breakdown(), "clusters.c.planned"), json::value(4));

  // The member scales c down to 4: nothing waits, the capacity is
  // remembered, and the placement holds at 30.
  DeleteUnschedulablePods(2);
  Holds([&] {
    return Placement() == std::vector<int64_t>{13, 13, 4} &&
           At(Breakdown(), "clusters.c.unschedulable") == json::value(0);
  });
  // A restarted control plane goes on with the capacity it had learned
  // (the breakdown's estimate): nothing moves.
  for (int i = 0; i < 3; ++i) StoreReady(i);
  Stop();
  Start();
  Holds([&] { return Placement() == std::vector<int64_t>{13, 13, 4}; });

  // A probe after the interval: c gets two more, a and b keep theirs.
  clock_.Advance(kProbeInterval);
  ASSERT_TRUE(Settle([&] {
    return Placement() == std::vector<int64_t>{13, 13, 6};
  })) << json::serialize(json::value_from(Placement()))
      << " " << json::serialize(Breakdown()) << " reconciles " << Controller().Metrics().reconciles
      << " waiting " << Controller().Metrics().queue.waiting;

  // No node takes them: past the threshold the probe ends, 30 again.
  AddUnschedulablePods(2, 2);
  clock_.Advance(kThreshold);
  ASSERT_TRUE(Settle([&] {
    return Placement() == std::vector<int64_t>{13, 13, 4};
  })) << json::serialize(json::value_from(Placement()));
  DeleteUnschedulablePods(2);
  // The controller saw them go before the clock moves on.
  ASSERT_TRUE(
      Settle([&] { return At(Breakdown(), "clusters.c.unschedulable") == json::value(0); }));
  // The next probe waits twice as long.
  clock_.Advance(kProbeInterval);
  Holds([&] { return Placement() == std::vector<int64_t>{13, 13, 4}; });
  clock_.Advance(kProbeInterval);
  ASSERT_TRUE(Settle([&] {
    return Placement() == std::vector<int64_t>{13, 13, 6};
  })) << json::serialize(json::value_from(Placement()));
  // This time a node takes them: room appeared, c is unbounded again and
  // gets its share back (rebalance), 30 in all.
  AddRunningPods(2, 2, "web", /*first=*/4);
  ASSERT_TRUE(Settle([&] {
    return Placement() == std::vector<int64_t>{10, 10, 10};
  })) << json::serialize(json::value_from(Placement()));
  ASSERT_TRUE(Settle([&] {
    return At(Breakdown(), "clusters.c.planned") == json::value(10) &&
           Find(Breakdown(), "clusters.c.estimatedCapacity") == nullptr;
  })) << json::serialize(Breakdown());
}

TEST_F(ReplicaSetControllerTest, PodsTheMemberCannotCreateCountAsWaitingToo) {
  // [E5]: c's ReplicaSet controller creates only 4 of its 10 pods (a quota,
  // an admission webhook): after the threshold that is c's capacity.
  SpreadThirtyWithFourRunningInC();
  // The controller has seen the 6 missing pods (the wait starts then).
  ASSERT_TRUE(
      Settle([&] { return At(Breakdown(), "clusters.c.unschedulable") == json::value(6); }));
  CrossTheThreshold(std::chrono::seconds(1));
}

TEST_F(ReplicaSetControllerTest, ARejectedCreateIsRetriedAndItsReplicasGoElsewhereMeanwhile) {
  reject_[1] = true;
  Start();
  CreateFrs(10, R"({"rebalance": true, "clusters": {"*": {"weight": 1}}})");
  ASSERT_TRUE(Settle([&] { return Placement() == std::vector<int64_t>{5, -1, 5}; }));
  ASSERT_TRUE(Settle([&] { return HasEvent("FailedCreateInCluster"); }));
  reject_[1] = false;
  clock_.Advance(kRecheck);
  // 10 over three clusters is 4, 4 and 2 in the planner's order.
  ASSERT_TRUE(Settle([&] { return Sum(Placement()) == 10 && Placement()[1] > 0; }))
      << json::serialize(json::value_from(Placement())) << json::serialize(Breakdown())
      << json::serialize(json::value_from(EventReasons()));
}

TEST_F(ReplicaSetControllerTest, AnOfflineClustersReplicasGoToTheOthers) {
  Start();
  CreateFrs(30, R"({"rebalance": true, "clusters": {"*": {"weight": 1}}})");
  ASSERT_TRUE(Settle([&] { return Placement() == std::vector<int64_t>{10, 10, 10}; }));
  ctx_->clusters().SetNotReady("c");
  // c is out of reach: its local ReplicaSet stays as it was.
  ASSERT_TRUE(Settle([&] { return Placement() == std::vector<int64_t>{15, 15, 10}; }));
  SetReady(2);
  ASSERT_TRUE(Settle([&] { return Placement() == std::vector<int64_t>{10, 10, 10}; }));
}

TEST_F(ReplicaSetControllerTest, WithoutRebalanceAReturningClusterDoesNotTakeReplicasBack) {
  Start();
  CreateFrs(30);
  ASSERT_TRUE(Settle([&] { return Placement() == std::vector<int64_t>{10, 10, 10}; }));
  for (int i = 0; i < 3; ++i) RunAll(i);
  ctx_->clusters().SetNotReady("c");
  ASSERT_TRUE(Settle([&] { return Placement() == std::vector<int64_t>{15, 15, 10}; }));
  RunAll(0);
  RunAll(1);
  SetReady(2);
  // c still runs its 10: 40 running for 30 wanted; the scale-down takes
  // from the clusters furthest above their share, and c keeps what runs.
  ASSERT_TRUE(Settle([&] { return Sum(Placement()) == 30; }));
  EXPECT_EQ(Placement()[2], 10) << json::serialize(json::value_from(Placement()));
}

TEST_F(ReplicaSetControllerTest, ASameNamedLocalReplicaSetIsTakenOverWithAnEvent) {
  json::object existing = Rs("web", 1, {});
  ASSERT_TRUE(member_clients_[0]->Create(kReplicaSets, kNs, existing).ok());
  Start();
  CreateFrs(3);
  ASSERT_TRUE(Settle([&] { return Placement() == std::vector<int64_t>{1, 1, 1}; }));
  ASSERT_TRUE(Settle([&] { return IsManaged(Local(0)); }));
  ASSERT_TRUE(Settle([&] { return HasEvent("OverwriteInCluster"); }));
}

TEST_F(ReplicaSetControllerTest, ASameNamedLocalReplicaSetWithAnotherSelectorIsReplaced) {
  json::object existing = Rs("legacy", 1, {});
  existing["metadata"].as_object()["name"] = "web";
  ASSERT_TRUE(member_clients_[0]->Create(kReplicaSets, kNs, existing).ok());
  Start();
  CreateFrs(3);
  ASSERT_TRUE(Settle([&] {
    json::object local = Local(0);
    const json::value* app = Find(local, "spec.selector.matchLabels.app");
    return IsManaged(local) && app != nullptr && *app == json::value("web");
  }));
  ASSERT_TRUE(Settle([&] { return Placement() == std::vector<int64_t>{1, 1, 1}; }));
}

TEST_F(ReplicaSetControllerTest, TheClusterSelectorChoosesTheClusters) {
  Start();
  CreateFrs(4, "", R"([{"key": "location", "operator": "In", "values": ["cloud"]}])");
  ASSERT_TRUE(Settle([&] { return Placement() == std::vector<int64_t>{-1, 2, 2}; }));
  // Read, modify, write: the controller writes the object's status too.
  ASSERT_TRUE(Eventually([&] {
    json::object frs = Frs();
    frs["metadata"].as_object()["annotations"].as_object()[api::kClusterSelectorAnnotation] =
        R"([{"key": "location", "operator": "NotIn", "values": ["cloud"]}])";
    return fed_client_->Update(kReplicaSets, kNs, frs).ok();
  }));
  // The clusters no longer admitted lose their local copies.
  ASSERT_TRUE(Settle([&] {
    return Placement() == std::vector<int64_t>{4, -1, -1};
  })) << json::serialize(json::value_from(Placement()));
}

TEST_F(ReplicaSetControllerTest, ACordonedClusterGetsNothingNewUntilUncordoned) {
  Start();
  const std::string rebalance = R"({"rebalance": true, "clusters": {"*": {"weight": 1}}})";
  CreateFrs(6, rebalance, "", "old");
  ASSERT_TRUE(Settle([&] { return Placement("old") == std::vector<int64_t>{2, 2, 2}; }));
  ASSERT_TRUE(cluster::SetUnschedulable(*fed_client_, "b", true).ok());
  // Once the controller's cache has the cordon (as the cluster
  // controller's Schedulable condition tells a user), a new workload stays
  // out of b; one already there keeps its replicas there and grows
  // elsewhere.
  ASSERT_TRUE(Eventually([&] {
    runtime::ObjectPtr b = ctx_->cluster_objects().cache().Get("b");
    return b != nullptr && api::ClusterView(*b).cordoned();
  }));
  CreateFrs(6, rebalance, "", "new");
  ASSERT_TRUE(Eventually([&] {
    json::object frs = Frs("old");
    frs["spec"].as_object()["replicas"] = 12;
    return fed_client_->Update(kReplicaSets, kNs, frs).ok();
  }));
  ASSERT_TRUE(Settle([&] {
    return Placement("new") == std::vector<int64_t>{3, -1, 3} &&
           Placement("old") == std::vector<int64_t>{5, 2, 5};
  })) << json::serialize(json::value_from(Placement("new")))
      << json::serialize(json::value_from(Placement("old")));
  // Uncordoned, b takes its share back (these rebalance).
  ASSERT_TRUE(cluster::SetUnschedulable(*fed_client_, "b", false).ok());
  ASSERT_TRUE(Settle([&] {
    return Placement("new") == std::vector<int64_t>{2, 2, 2} &&
           Placement("old") == std::vector<int64_t>{4, 4, 4};
  })) << json::serialize(json::value_from(Placement("new")))
      << json::serialize(json::value_from(Placement("old")));
}

TEST_F(ReplicaSetControllerTest, ADrainedClusterGivesItsReplicasUpOnceTheOthersRunThem) {
  Start();
  CreateFrs(6);
  ASSERT_TRUE(Settle([&] { return Placement() == std::vector<int64_t>{2, 2, 2}; }));
  for (int i = 0; i < 3; ++i) RunAll(i);
  // The controller's caches show them available (its status sums them).
  ASSERT_TRUE(Settle([&] { return IntAt(Frs(), "status.availableReplicas") == 6; }));
  ASSERT_TRUE(cluster::SetDraining(*fed_client_, "b").ok());
  // a and c get b's share; b keeps its 2 available replicas meanwhile.
  ASSERT_TRUE(Settle([&] {
    return Placement() == std::vector<int64_t>{3, 2, 3};
  })) << json::serialize(json::value_from(Placement()));
  // a runs its 3: b gives up one (c still lacks one).
  RunAll(0);
  ASSERT_TRUE(Settle([&] {
    return Placement() == std::vector<int64_t>{3, 1, 3};
  })) << json::serialize(json::value_from(Placement()));
  RunAll(2);
  ASSERT_TRUE(Settle([&] {
    return Placement() == std::vector<int64_t>{3, 0, 3};
  })) << json::serialize(json::value_from(Placement()));
  // Uncordoned: nothing comes back without rebalance.
  ASSERT_TRUE(cluster::SetUnschedulable(*fed_client_, "b", false).ok());
  EXPECT_FALSE(api::ClusterView(*fed_client_->Get(kClusters, "", "b")).draining());
  Holds([&] { return Placement() == std::vector<int64_t>{3, 0, 3}; });
}

TEST_F(ReplicaSetControllerTest, AChangedSelectorMovesReplicasMakeBeforeBreak) {
  Start();
  CreateFrs(4, "", R"([{"key": "location", "operator": "In", "values": ["cloud"]}])");
  ASSERT_TRUE(Settle([&] { return Placement() == std::vector<int64_t>{-1, 2, 2}; }));
  RunAll(1);
  RunAll(2);
  // The controller's caches show them available (its status sums them).
  ASSERT_TRUE(Settle([&] { return IntAt(Frs(), "status.availableReplicas") == 4; }));
  ASSERT_TRUE(Eventually([&] {
    json::object frs = Frs();
    frs["metadata"].as_object()["annotations"].as_object()[api::kClusterSelectorAnnotation] =
        R"([{"key": "location", "operator": "NotIn", "values": ["cloud"]}])";
    return fed_client_->Update(kReplicaSets, kNs, frs).ok();
  }));
  // b and c keep their copies until a runs all 4.
  Holds([&] { return Placement() == std::vector<int64_t>{4, 2, 2}; });
  RunAll(0);
  ASSERT_TRUE(Settle([&] {
    return Placement() == std::vector<int64_t>{4, -1, -1};
  })) << json::serialize(json::value_from(Placement()));
}

TEST_F(ReplicaSetControllerTest, DeletionFollowsThePolicyTheServerRecorded) {
  Start();
  CreateFrs(3, "", "", "kept");
  CreateFrs(3, "", "", "gone");
  ASSERT_TRUE(Settle([&] { return Sum(Placement("kept")) == 3 && Sum(Placement("gone")) == 3; }));
  // Without a policy: orphaned.
  ASSERT_TRUE(fed_client_->Delete(kReplicaSets, kNs, "kept", {}).ok());
  client::DeleteOptions background{.propagation_policy = "Background"};
  ASSERT_TRUE(fed_client_->Delete(kReplicaSets, kNs, "gone", background).ok());
  ASSERT_TRUE(Settle([&] {
    return fed_client_->Get(kReplicaSets, kNs, "kept").status().Is(Reason::kNotFound) &&
           fed_client_->Get(kReplicaSets, kNs, "gone").status().Is(Reason::kNotFound);
  }));
  EXPECT_EQ(Placement("gone"), (std::vector<int64_t>{-1, -1, -1}));
  EXPECT_EQ(Placement("kept"), (std::vector<int64_t>{1, 1, 1}));
}

TEST_F(ReplicaSetControllerTest, MetricsNameEveryClusterAndTheReplicasMoved) {
  Start();
  CreateFrs(30, R"({"rebalance": true, "clusters": {"*": {"weight": 1}}})");
  ASSERT_TRUE(Settle([&] { return Placement() == std::vector<int64_t>{10, 10, 10}; }));
  ctx_->clusters().SetNotReady("c");
  ASSERT_TRUE(Settle([&] { return Placement() == std::vector<int64_t>{15, 15, 10}; }));
  // The check that wrote the placement counts the moves as it finishes.
  std::string metrics;
  EXPECT_TRUE(Eventually([&] {
    metrics = ctx_->metrics().Render();
    return metrics.find("flotilla_federation_replicas_moved_total{kind=\"ReplicaSet\"} 10") !=
           std::string::npos;
  })) << metrics;
  EXPECT_NE(metrics.find("flotilla_federation_member_request_duration_seconds_count{cluster=\"a\","
                         "resource=\"replicasets\",operation=\"create\"} 1"),
            std::string::npos)
      << metrics;
}

}  // namespace
// FederatedResourceQuota spec.staticAssignments: a ResourceQuota in each
// assigned cluster, its status in status.aggregatedStatus; one of that name
// the federation did not make is left alone; an assignment removed takes
// its quota away, and so does the FederatedResourceQuota's deletion.
TEST_F(ReplicaSetControllerTest, StaticAssignmentsBecomeMemberQuotas) {
  Start();
  // Cluster c already has a quota "team" of its own.
  auto own = ParseJsonObject(R"({"metadata":{"name":"team"},"spec":{"hard":{"pods":"99"}}})");
  ASSERT_TRUE(member_clients_[2]->Create(client::kResourceQuotas, kNs, *own).ok());
  auto frq = ParseJsonObject(R"({"apiVersion":"policy.karmada.io/v1alpha1",
      "kind":"FederatedResourceQuota","metadata":{"name":"team"},
      "spec":{"overall":{"pods":"10"},"staticAssignments":[
        {"clusterName":"a","hard":{"pods":"2"}},{"clusterName":"b","hard":{"pods":"3"}},
        {"clusterName":"c","hard":{"pods":"4"}}]}})");
  ASSERT_TRUE(fed_client_->Create(kFederatedResourceQuotas, kNs, *frq).ok());
  auto hard = [&](int i) {
    auto rq = member_clients_[i]->Get(client::kResourceQuotas, kNs, "team");
    return rq.ok() ? ToJson(At(*rq, "spec.hard")) : "";
  };
  ASSERT_TRUE(
      Eventually([&] { return hard(0) == R"({"pods":"2"})" && hard(1) == R"({"pods":"3"})"; }));
  EXPECT_EQ(hard(2), R"({"pods":"99"})");
  // What a member's quota controller would write, in a; the federation lists it.
  auto rq = member_clients_[0]->Get(client::kResourceQuotas, kNs, "team");
  ASSERT_TRUE(rq.ok());
  (*rq)["status"] = *ParseJsonObject(R"({"hard":{"pods":"2"},"used":{"pods":"1"}})");
  ASSERT_TRUE(member_clients_[0]->UpdateStatus(client::kResourceQuotas, kNs, *rq).ok());
  auto aggregated = [&] {
    auto q = fed_client_->Get(kFederatedResourceQuotas, kNs, "team");
    return q.ok() ? ToJson(At(*q, "status.aggregatedStatus")) : "";
  };
  ASSERT_TRUE(Eventually([&] {
    return aggregated() == R"([{"clusterName":"a","hard":{"pods":"2"},"used":{"pods":"1"}}])";
  })) << aggregated();
  // The assignment of b goes; then the quota.
  auto current = fed_client_->Get(kFederatedResourceQuotas, kNs, "team");
  ASSERT_TRUE(current.ok());
  (*current)["spec"].as_object()["staticAssignments"].as_array().erase(
      (*current)["spec"].as_object()["staticAssignments"].as_array().begin() + 1);
  ASSERT_TRUE(fed_client_->Update(kFederatedResourceQuotas, kNs, *current).ok());
  ASSERT_TRUE(Eventually([&] { return hard(1).empty(); }));
  EXPECT_EQ(hard(0), R"({"pods":"2"})");
  ASSERT_TRUE(fed_client_->Delete(kFederatedResourceQuotas, kNs, "team", {}).ok());
  ASSERT_TRUE(Eventually([&] { return hard(0).empty(); }));
  EXPECT_EQ(hard(2), R"({"pods":"99"})");  // never the federation's
}

// A policy change moves objects out of a ready cluster at the pace
// --placement-move-qps gives: the burst at once, then one per token, each
// left as it is until its turn.
TEST_F(ReplicaSetControllerTest, APolicyChangeMovesObjectsAtThePlacementMovePace) {
  context_options_.move_qps = 0.1;  // a token every 10 s
  context_options_.move_burst = 1;
  Start();
  auto only = [](const std::string& cluster) {
    return Cpp("all", "",
               R"(,"placement":{"clusterAffinity":{"clusterNames":[")" + cluster + R"("]}})");
  };
  PutPolicy(only("a"));
  WaitForPolicies(1);
  const std::vector<std::string> names = {"web", "web2", "web3"};
  for (const std::string& name : names) CreateFrs(2, "", "", name);
  auto in_b = [&] {
    int n = 0;
    for (const std::string& name : names) n += Placement(name)[1] == 2 ? 1 : 0;
    return n;
  };
  ASSERT_TRUE(Settle([&] {
    for (const std::string& name : names) {
      if (Placement(name) != std::vector<int64_t>{2, -1, -1}) return false;
    }
    return true;
  }));
  PutPolicy(only("b"));
  ASSERT_TRUE(Settle([&] { return in_b() == 1; }));
  Holds([&] { return in_b() == 1; });  // the others wait for their turn
  clock_.Advance(std::chrono::seconds(10));
  ASSERT_TRUE(Settle([&] { return in_b() == 2; })) << in_b();
  clock_.Advance(std::chrono::seconds(10));
  ASSERT_TRUE(Settle([&] { return in_b() == 3; })) << in_b();
}

}  // namespace flotilla::federation::replicaset
