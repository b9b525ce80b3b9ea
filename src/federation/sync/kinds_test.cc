#include "federation/sync/kinds.h"

#include <gtest/gtest.h>

#include "federation/sync/custom_kinds.h"

namespace flotilla::federation::sync {
namespace {

json::object Obj(std::string_view text) { return json::parse(text).as_object(); }

const SyncKind& KindNamed(std::string_view kind) {
  for (const SyncKind& k : SyncKinds()) {
    if (k.kind == kind) return k;
  }
  ADD_FAILURE() << kind;
  return SyncKinds().front();
}

TEST(SyncKindsTest, TheFederationsOwnObjectsStay) {
  EXPECT_TRUE(Propagates(KindNamed("Namespace"), Obj(R"({"metadata":{"name":"shop"}})")));
  EXPECT_FALSE(Propagates(KindNamed("Namespace"), Obj(R"({"metadata":{"name":"default"}})")));
  EXPECT_FALSE(Propagates(KindNamed("Namespace"), Obj(R"({"metadata":{"name":"kube-system"}})")));
  EXPECT_TRUE(Propagates(KindNamed("ConfigMap"),
                         Obj(R"({"metadata":{"name":"c","namespace":"default"}})")));
  for (const char* ns : {"flotilla-system", "kube-system", "kube-public", "kube-node-lease"}) {
    json::object cm = Obj(R"({"metadata":{"name":"c"}})");
    cm["metadata"].as_object()["namespace"] = ns;
    EXPECT_FALSE(Propagates(KindNamed("ConfigMap"), cm)) << ns;
  }
  EXPECT_FALSE(
      Propagates(KindNamed("Secret"), Obj(R"({"metadata":{"name":"t","namespace":"default"},
                                  "type":"kubernetes.io/service-account-token"})")));
  EXPECT_TRUE(
      Propagates(KindNamed("Secret"),
                 Obj(R"({"metadata":{"name":"t","namespace":"default"},"type":"Opaque"})")));
  EXPECT_FALSE(Propagates(KindNamed("Service"),
                          Obj(R"({"metadata":{"name":"kubernetes","namespace":"default"}})")));
  EXPECT_TRUE(Propagates(KindNamed("Service"),
                         Obj(R"({"metadata":{"name":"kubernetes","namespace":"shop"}})")));
  EXPECT_FALSE(Propagates(KindNamed("ServiceAccount"),
                          Obj(R"({"metadata":{"name":"default","namespace":"shop"}})")));
  EXPECT_TRUE(Propagates(KindNamed("ServiceAccount"),
                         Obj(R"({"metadata":{"name":"builder","namespace":"shop"}})")));
}

// A member binds its copy (volumeName, a class by default, status): the
// copy is up to date, and an expansion keeps what the member set.
TEST(SyncKindsTest, AClaimsCopyKeepsWhatTheMemberBoundItTo) {
  const SyncKind& claims = KindNamed("PersistentVolumeClaim");
  EXPECT_TRUE(claims.follows_dependents);
  json::object fed = Obj(R"({"metadata":{"name":"data","namespace":"shop"},
      "spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}},
              "volumeMode":"Filesystem"},"status":{"phase":"Pending"}})");
  json::object desired = DesiredCopy(claims, fed);
  EXPECT_FALSE(desired.contains("status"));
  json::object member = desired;
  json::object& spec = member["spec"].as_object();
  spec["volumeName"] = "pvc-1";
  spec["storageClassName"] = "standard";
  member["status"] = Obj(R"({"phase":"Bound","capacity":{"storage":"1Gi"}})");
  EXPECT_TRUE(CopyUpToDate(claims, desired, member));

  fed["spec"].as_object()["resources"] = Obj(R"({"requests":{"storage":"2Gi"}})");
  json::object grown = DesiredCopy(claims, fed);
  EXPECT_FALSE(CopyUpToDate(claims, grown, member));
  json::object updated = UpdatedCopy(claims, grown, member);
  EXPECT_EQ(StringAt(updated, "spec.volumeName"), "pvc-1");
  EXPECT_EQ(StringAt(updated, "spec.storageClassName"), "standard");
  EXPECT_EQ(StringAt(updated, "spec.resources.requests.storage"), "2Gi");
  EXPECT_FALSE(MustReplaceCopy(claims, grown, member));
}

// Bound when every copy is, with the least capacity; Pending while one is
// not, or while there is none (no workload uses it yet).
TEST(SyncKindsTest, AClaimIsBoundWhenEveryCopyIs) {
  json::object fed = Obj(R"({"metadata":{"name":"data"},"status":{"phase":"Pending"}})");
  json::object a = Obj(R"({"status":{"phase":"Bound","accessModes":["ReadWriteOnce"],
                                      "capacity":{"storage":"2Gi"}}})");
  json::object b = Obj(R"({"status":{"phase":"Bound","accessModes":["ReadWriteOnce"],
                                      "capacity":{"storage":"1536Mi"}}})");
  json::object pending = Obj(R"({"status":{"phase":"Pending"}})");
  EXPECT_EQ(PersistentVolumeClaimStatus(fed, {&a, &b}),
            Obj(R"({"phase":"Bound","accessModes":["ReadWriteOnce"],
                    "capacity":{"storage":"1536Mi"}})"));
  EXPECT_EQ(PersistentVolumeClaimStatus(fed, {&a, &pending}), Obj(R"({"phase":"Pending"})"));
  EXPECT_EQ(PersistentVolumeClaimStatus(fed, {}), Obj(R"({"phase":"Pending"})"));
}

// A RoleBinding's roleRef cannot change: a copy that names another role is
// replaced; the subjects' defaults keep it up to date.
TEST(SyncKindsTest, ARoleBindingNamingAnotherRoleIsReplaced) {
  const SyncKind& bindings = KindNamed("RoleBinding");
  json::object fed = Obj(R"({"metadata":{"name":"read","namespace":"shop"},
      "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"reader"},
      "subjects":[{"kind":"User","name":"ann"}]})");
  json::object desired = DesiredCopy(bindings, fed);
  json::object member = desired;
  member["subjects"].as_array()[0].as_object()["apiGroup"] = "rbac.authorization.k8s.io";
  EXPECT_TRUE(CopyUpToDate(bindings, desired, member));
  EXPECT_FALSE(MustReplaceCopy(bindings, desired, member));
  fed["roleRef"].as_object()["name"] = "writer";
  json::object other = DesiredCopy(bindings, fed);
  EXPECT_FALSE(CopyUpToDate(bindings, other, member));
  EXPECT_TRUE(MustReplaceCopy(bindings, other, member));
  EXPECT_FALSE(MustReplaceCopy(KindNamed("Role"), DesiredCopy(KindNamed("Role"), fed), member));
}

TEST(SyncKindsTest, ConfigMapCopyHoldsContentAndMarks) {
  json::object fed = Obj(R"({"apiVersion":"v1","kind":"ConfigMap",
      "metadata":{"name":"c","namespace":"shop","uid":"u","resourceVersion":"3",
                  "labels":{"app":"web"},
                  "annotations":{"federation.alpha.kubernetes.io/cluster-selector":"[]"}},
      "data":{"k":"v"},"immutable":false})");
  json::object want = Obj(R"({"apiVersion":"v1","kind":"ConfigMap",
      "metadata":{"name":"c","namespace":"shop",
                  "labels":{"app":"web","federation.kubernetes.io/managed-by":"flotilla"},
                  "annotations":{"federation.kubernetes.io/federated-object":"shop/c"}},
      "data":{"k":"v"},"immutable":false})");
  EXPECT_EQ(DesiredCopy(KindNamed("ConfigMap"), fed), want);
}

TEST(SyncKindsTest, NamespaceCopyHasOnlyMetadata) {
  json::object fed = Obj(R"({"metadata":{"name":"shop","labels":{"team":"a"}},
      "spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}})");
  json::object copy = DesiredCopy(KindNamed("Namespace"), fed);
  EXPECT_FALSE(copy.contains("spec"));
  EXPECT_FALSE(copy.contains("status"));
  EXPECT_EQ(Find(copy, "metadata.labels.team")->as_string(), "a");
  EXPECT_EQ(Find(copy, "metadata.annotations")
                ->as_object()
                .at("federation.kubernetes.io/federated-object"),
            "shop");
}

TEST(SyncKindsTest, UpToDateComparesPropagatedFieldsOnly) {
  const SyncKind& cm = KindNamed("ConfigMap");
  json::object desired = DesiredCopy(cm, Obj(R"({"metadata":{"name":"c","namespace":"s"},
                                                  "data":{"k":"v"}})"));
  json::object existing = desired;
  existing["metadata"].as_object()["resourceVersion"] = "9";
  existing["metadata"].as_object()["uid"] = "x";
  EXPECT_TRUE(CopyUpToDate(cm, desired, existing));
  json::object edited = existing;
  edited["data"].as_object()["k"] = "changed";
  EXPECT_FALSE(CopyUpToDate(cm, desired, edited));
  json::object relabelled = existing;
  relabelled["metadata"].as_object()["labels"].as_object()["extra"] = "1";
  EXPECT_FALSE(CopyUpToDate(cm, desired, relabelled));
  json::object extra_data = existing;
  extra_data["binaryData"] = json::object{{"b", "AA=="}};
  EXPECT_FALSE(CopyUpToDate(cm, desired, extra_data));

  json::object updated = UpdatedCopy(cm, desired, edited);
  EXPECT_TRUE(CopyUpToDate(cm, desired, updated));
  EXPECT_EQ(Find(updated, "metadata.resourceVersion")->as_string(), "9");
}

TEST(SyncKindsTest, ServiceCopyLeavesAllocationToTheMember) {
  const SyncKind& svc = KindNamed("Service");
  json::object fed = Obj(R"({"metadata":{"name":"web","namespace":"s"},
      "spec":{"type":"NodePort","clusterIP":"10.96.0.5","clusterIPs":["10.96.0.5"],
              "ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack","selector":{"app":"web"},
              "ports":[{"port":80,"protocol":"TCP","nodePort":30001}]},
      "status":{"loadBalancer":{}}})");
  json::object desired = DesiredCopy(svc, fed);
  json::object want_spec = Obj(R"({"type":"NodePort","selector":{"app":"web"},
                                   "ports":[{"port":80,"protocol":"TCP"}]})");
  EXPECT_EQ(desired.at("spec").as_object(), want_spec);
  EXPECT_FALSE(desired.contains("status"));

  json::object member = desired;
  member["metadata"].as_object()["resourceVersion"] = "4";
  member["spec"] = Obj(R"({"type":"NodePort","clusterIP":"10.96.7.7","clusterIPs":["10.96.7.7"],
      "ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack","selector":{"app":"web"},
      "ports":[{"port":80,"protocol":"TCP","nodePort":31000}]})");
  EXPECT_TRUE(CopyUpToDate(svc, desired, member));

  json::object changed = DesiredCopy(svc, fed);
  changed["spec"].as_object()["selector"] = json::object{{"app", "api"}};
  EXPECT_FALSE(CopyUpToDate(svc, changed, member));
  json::object updated = UpdatedCopy(svc, changed, member);
  EXPECT_EQ(Find(updated, "spec.clusterIP")->as_string(), "10.96.7.7");
  EXPECT_EQ(Find(updated, "spec.ports")->as_array()[0].as_object().at("nodePort"), 31000);
  EXPECT_EQ(Find(updated, "spec.selector.app")->as_string(), "api");
  EXPECT_TRUE(CopyUpToDate(svc, changed, updated));
}

TEST(SyncKindsTest, HeadlessServiceKeepsClusterIPNone) {
  json::object fed = Obj(R"({"metadata":{"name":"h","namespace":"s"},
      "spec":{"clusterIP":"None","clusterIPs":["None"],"ports":[{"port":80}]}})");
  EXPECT_EQ(Find(DesiredCopy(KindNamed("Service"), fed), "spec.clusterIP")->as_string(), "None");
}

}  // namespace
TEST(SyncKindsTest, AWholeKindsCopyIsEverythingButStatusAndUpToDateOverMemberDefaults) {
  SyncKind kind = WholeKind({"stable.example.com", "v1", "crontabs", true}, "CronTab");
  json::object fed = Obj(R"({"apiVersion":"stable.example.com/v1","kind":"CronTab",
      "metadata":{"name":"c","namespace":"shop","uid":"u","finalizers":["x"]},
      "spec":{"cronSpec":"* * * * *"},"extra":[1,2],"status":{"phase":"Running"}})");
  json::object copy = DesiredCopy(kind, fed);
  EXPECT_EQ(copy.at("spec"), fed.at("spec"));
  EXPECT_EQ(copy.at("extra"), fed.at("extra"));
  EXPECT_FALSE(copy.contains("status"));
  EXPECT_EQ(copy.at("kind"), "CronTab");
  EXPECT_EQ(copy.at("apiVersion"), "stable.example.com/v1");

  // What the member defaults, and its status, leave the copy up to date.
  json::object member = copy;
  member["spec"].as_object()["replicas"] = 1;
  member["status"] = json::object{{"phase", "Waiting"}};
  member["metadata"].as_object()["resourceVersion"] = "9";
  EXPECT_TRUE(CopyUpToDate(kind, copy, member));

  // A changed field, a field the federation dropped, one it added: not.
  json::object changed = member;
  changed["spec"].as_object()["cronSpec"] = "0 3 * * *";
  EXPECT_FALSE(CopyUpToDate(kind, copy, changed));
  json::object more = member;
  more["leftover"] = true;
  EXPECT_FALSE(CopyUpToDate(kind, copy, more));
  json::object less = member;
  less.erase("extra");
  EXPECT_FALSE(CopyUpToDate(kind, copy, less));

  // The update takes the federation's content, drops the leftover, and
  // keeps the member's status and resourceVersion.
  json::object updated = UpdatedCopy(kind, copy, more);
  EXPECT_FALSE(updated.contains("leftover"));
  EXPECT_EQ(updated.at("spec"), copy.at("spec"));
  EXPECT_EQ(updated.at("status"), member.at("status"));
  EXPECT_EQ(StringAt(updated, "metadata.resourceVersion"), "9");
}

TEST(SyncKindsTest, ACrdCopyIsItsSpecAndTheMembersDefaultsKeepItUpToDate) {
  const SyncKind& kind = KindNamed("CustomResourceDefinition");
  json::object fed = Obj(R"({"apiVersion":"apiextensions.k8s.io/v1",
      "kind":"CustomResourceDefinition","metadata":{"name":"crontabs.stable.example.com"},
      "spec":{"group":"stable.example.com","names":{"plural":"crontabs","kind":"CronTab"},
              "scope":"Namespaced","versions":[{"name":"v1","served":true,"storage":true}]},
      "status":{"conditions":[]}})");
  json::object copy = DesiredCopy(kind, fed);
  EXPECT_EQ(copy.at("spec"), fed.at("spec"));
  EXPECT_FALSE(copy.contains("status"));
  json::object member = copy;
  member["spec"].as_object()["conversion"] = json::object{{"strategy", "None"}};
  EXPECT_TRUE(CopyUpToDate(kind, copy, member));
  member["spec"].as_object()["scope"] = "Cluster";
  EXPECT_FALSE(CopyUpToDate(kind, copy, member));
}

TEST(SyncKindsTest, StatusByClusterIsSortedCompactJsonOrNothing) {
  EXPECT_EQ(StatusByCluster({}), "");
  EXPECT_EQ(StatusByCluster({{"b", json::object{{"x", 2}}}, {"a", json::object{{"x", 1}}}}),
            R"({"a":{"x":1},"b":{"x":2}})");
}

TEST(CustomKindsTest, KindOfReadsTheServedStorageVersionOnceEstablished) {
  json::object crd = Obj(R"({"metadata":{"name":"crontabs.stable.example.com"},
      "spec":{"group":"stable.example.com","scope":"Cluster",
              "names":{"plural":"crontabs","kind":"CronTab"},
              "versions":[{"name":"v1beta1","served":true,"storage":false},
                          {"name":"v1","served":true,"storage":true}]},
      "status":{"conditions":[{"type":"Established","status":"False"}]}})");
  EXPECT_FALSE(KindOf(crd).has_value());  // not established yet
  crd["status"] = Obj(R"({"conditions":[{"type":"Established","status":"True"}]})");
  std::optional<SyncKind> kind = KindOf(crd);
  ASSERT_TRUE(kind.has_value());
  EXPECT_EQ(kind->kind, "CronTab");
  EXPECT_EQ(kind->resource.group, "stable.example.com");
  EXPECT_EQ(kind->resource.version, "v1");
  EXPECT_EQ(kind->resource.resource, "crontabs");
  EXPECT_FALSE(kind->resource.namespaced);
  EXPECT_TRUE(kind->whole);

  // The storage version not served: the first served one.
  crd["spec"].as_object()["versions"] = json::parse(R"([
      {"name":"v1beta1","served":true,"storage":false},
      {"name":"v1","served":false,"storage":true}])");
  EXPECT_EQ(KindOf(crd)->resource.version, "v1beta1");
  crd["spec"].as_object()["versions"] = json::parse(R"([{"name":"v1","served":false}])");
  EXPECT_FALSE(KindOf(crd).has_value());
}

}  // namespace flotilla::federation::sync
