#include "federation/admission/admission.h"

#include <gtest/gtest.h>

#include "api/annotations.h"
#include "api/federated.h"
#include "api/kinds/kinds.h"
#include "federation/controllers.h"

namespace flotilla::federation {
namespace {

constexpr char kSelector[] = "federation.alpha.kubernetes.io/cluster-selector";
constexpr char kRsPrefs[] = "federation.kubernetes.io/replica-set-preferences";
constexpr char kDeployPrefs[] = "federation.kubernetes.io/deployment-preferences";

json::object Annotated(std::string_view kind_json, std::string_view key, std::string_view value) {
  json::object obj = json::parse(kind_json).as_object();
  json::object& meta = obj["metadata"].as_object();
  meta["annotations"] = json::object{{key, value}};
  return obj;
}

json::object ConfigMap(std::string_view key, std::string_view value) {
  return Annotated(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c",
                       "namespace":"default"}})",
                   key, value);
}

std::vector<std::string> Fields(const std::vector<StatusCause>& causes) {
  std::vector<std::string> fields;
  for (const StatusCause& c : causes) fields.push_back(c.field);
  return fields;
}

TEST(AdmissionTest, ClusterSelectorRule) {
  EXPECT_TRUE(ValidateClusterSelectorAnnotation(ConfigMap("other", "x"), nullptr).empty());
  EXPECT_TRUE(ValidateClusterSelectorAnnotation(
                  ConfigMap(kSelector, R"([{"key":"a","operator":"Exists"}])"), nullptr)
                  .empty());
  EXPECT_EQ(
      Fields(ValidateClusterSelectorAnnotation(
          ConfigMap(kSelector, R"([{"key":"a","operator":"Near"}])"), nullptr)),
      std::vector<std::string>{std::string("metadata.annotations[") + kSelector + "][0].operator"});
}

TEST(AdmissionTest, UpdateOrderIsAListOfClusterNames) {
  constexpr char kOrder[] = "federation.kubernetes.io/cluster-update-order";
  auto deployment = [&](std::string_view order) {
    return Annotated(R"({"metadata":{"name":"d"}})", kOrder, order);
  };
  EXPECT_TRUE(ValidateUpdateOrderAnnotation(deployment("on-prem, cloud-east,b"), nullptr).empty());
  std::vector<StatusCause> causes =
      ValidateUpdateOrderAnnotation(deployment("a,Bad_Name"), nullptr);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].field, std::string("metadata.annotations[") + kOrder + "]");
  EXPECT_NE(causes[0].message.find("Bad_Name"), std::string::npos) << causes[0].message;
  EXPECT_EQ(ValidateUpdateOrderAnnotation(deployment("a,,b"), nullptr).size(), 1u);
}

TEST(AdmissionTest, APlacementClusterIsAClusterName) {
  constexpr char kCluster[] = "federation.kubernetes.io/cluster";
  EXPECT_TRUE(ValidatePlacementClusterAnnotation(ConfigMap(kCluster, "c1"), nullptr).empty());
  EXPECT_EQ(Fields(ValidatePlacementClusterAnnotation(ConfigMap(kCluster, "Not_One"), nullptr)),
            std::vector<std::string>{std::string("metadata.annotations[") + kCluster + "]"});
}

TEST(AdmissionTest, AStatefulSetNameLeavesRoomForEveryCluster) {
  json::object sts = json::parse(R"({"metadata":{"name":"store"}})").as_object();
  EXPECT_TRUE(ValidateLocalNameLength(sts, nullptr, {"c1", "c2"}, "StatefulSet", 52).empty());
  std::string long_cluster(47, 'x');  // "store-" + 47 = 53 characters
  std::vector<StatusCause> causes =
      ValidateLocalNameLength(sts, nullptr, {"c1", long_cluster}, "StatefulSet", 52);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].field, "metadata.name");
  EXPECT_NE(causes[0].message.find(long_cluster), std::string::npos) << causes[0].message;
  EXPECT_TRUE(
      ValidateLocalNameLength(sts, nullptr, {std::string(46, 'x')}, "StatefulSet", 52).empty());
  EXPECT_TRUE(
      ValidateLocalNameLength(sts, &sts, {long_cluster}, "StatefulSet", 52).empty());  // update
}

TEST(AdmissionTest, UnchangedAnnotationIsNotCheckedAgainOnUpdate) {
  json::object bad = ConfigMap(kSelector, "not json");
  EXPECT_FALSE(ValidateClusterSelectorAnnotation(bad, nullptr).empty());
  EXPECT_TRUE(ValidateClusterSelectorAnnotation(bad, &bad).empty());
  json::object good = ConfigMap(kSelector, "[]");
  EXPECT_FALSE(ValidateClusterSelectorAnnotation(bad, &good).empty());
}

TEST(AdmissionTest, PreferencesRuleNamesTheFieldInsideTheAnnotation) {
  json::object rs = Annotated(R"({"metadata":{"name":"r"}})", kRsPrefs,
                              R"({"clusters":{"a":{"minReplicas":3,"maxReplicas":1}}})");
  std::vector<StatusCause> causes = ValidatePreferencesAnnotation(rs, nullptr, kRsPrefs);
  ASSERT_FALSE(causes.empty());
  EXPECT_EQ(
      causes[0].field.rfind(std::string("metadata.annotations[") + kRsPrefs + "].clusters", 0), 0u)
      << causes[0].field;
  json::object junk = Annotated(R"({"metadata":{"name":"r"}})", kRsPrefs, "{");
  EXPECT_EQ(Fields(ValidatePreferencesAnnotation(junk, nullptr, kRsPrefs)),
            std::vector<std::string>{std::string("metadata.annotations[") + kRsPrefs + "]"});
  json::object fine = Annotated(R"({"metadata":{"name":"r"}})", kRsPrefs,
                                R"({"rebalance":true,"clusters":{"*":{"weight":1}}})");
  EXPECT_TRUE(ValidatePreferencesAnnotation(fine, nullptr, kRsPrefs).empty());
}

// A workload of application `app` (none: "") with class `cls` (none: "").
json::object Workload(std::string_view kind, std::string_view name, std::string_view app,
                      std::string_view cls) {
  json::object meta{{"name", name}, {"namespace", "shop"}};
  if (!app.empty()) meta["labels"] = json::object{{"federation.kubernetes.io/application", app}};
  if (!cls.empty()) {
    meta["annotations"] = json::object{{"federation.kubernetes.io/location-affinity", cls}};
  }
  return json::object{{"apiVersion", "apps/v1"}, {"kind", kind}, {"metadata", std::move(meta)}};
}

// The application rule's source over `workloads`, as the server's answers:
// those labelled with the application asked for.
std::function<std::vector<json::object>(const std::string&)> From(
    std::vector<json::object> workloads) {
  return [workloads](const std::string& app) {
    std::vector<json::object> out;
    for (const json::object& w : workloads) {
      if (api::LabelAt(w, "federation.kubernetes.io/application") == app) out.push_back(w);
    }
    return out;
  };
}

TEST(AdmissionTest, TheWorkloadsOfAnApplicationAgreeOnItsClass) {
  const std::string field = "metadata.annotations[federation.kubernetes.io/location-affinity]";
  std::vector<json::object> others = {
      Workload("Deployment", "web", "shop", "preferentially-coupled"),
      Workload("ReplicaSet", "cache", "shop", "preferentially-coupled"),
      Workload("Deployment", "batch", "reports", ""),  // strictly-decoupled
  };
  EXPECT_TRUE(
      ValidateApplicationClass(Workload("Deployment", "db", "shop", "preferentially-coupled"),
                               nullptr, "Deployment", From(others))
          .empty());
  std::vector<StatusCause> causes =
      ValidateApplicationClass(Workload("Deployment", "db", "shop", "strictly-coupled"), nullptr,
                               "Deployment", From(others));
  ASSERT_EQ(Fields(causes), std::vector<std::string>{field});
  EXPECT_NE(
      causes[0].message.find(R"(application "shop": Deployment "web" is preferentially-coupled)"),
      std::string::npos)
      << causes[0].message;
  // No class is strictly-decoupled, which disagrees too.
  EXPECT_EQ(Fields(ValidateApplicationClass(Workload("ReplicaSet", "db", "shop", ""), nullptr,
                                            "ReplicaSet", From(others))),
            std::vector<std::string>{field});
  EXPECT_TRUE(ValidateApplicationClass(Workload("ReplicaSet", "db", "reports", ""), nullptr,
                                       "ReplicaSet", From(others))
                  .empty());
  // The workload itself (an update) and shadows do not count; another
  // kind of the same name does.
  EXPECT_TRUE(ValidateApplicationClass(Workload("Deployment", "web", "shop", "strictly-coupled"),
                                       nullptr, "Deployment", From({others[0]}))
                  .empty());
  json::object shadow = Workload("ReplicaSet", "web-7f9", "shop", "");
  shadow["metadata"].as_object()["labels"].as_object()["federation.kubernetes.io/shadow-of"] =
      "web";
  EXPECT_TRUE(ValidateApplicationClass(Workload("Deployment", "db", "shop", "strictly-coupled"),
                                       nullptr, "Deployment", From({shadow}))
                  .empty());
  EXPECT_FALSE(ValidateApplicationClass(Workload("ReplicaSet", "web", "shop", "strictly-coupled"),
                                        nullptr, "ReplicaSet", From({others[0]}))
                   .empty());
}

TEST(AdmissionTest, AnApplicationClassIsOneOfThree) {
  std::vector<StatusCause> causes = ValidateApplicationClass(
      Workload("Deployment", "db", "", "coupled"), nullptr, "Deployment", From({}));
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].type, "FieldValueNotSupported");
  EXPECT_NE(causes[0].message.find("strictly-decoupled"), std::string::npos) << causes[0].message;
}

TEST(AdmissionTest, AnUnchangedApplicationAndClassAreNotCheckedAgain) {
  json::object stored = Workload("Deployment", "db", "shop", "strictly-coupled");
  std::vector<json::object> others = {Workload("Deployment", "web", "shop", "")};
  EXPECT_TRUE(ValidateApplicationClass(stored, &stored, "Deployment", From(others)).empty());
  json::object moved = Workload("Deployment", "db", "shop", "preferentially-coupled");
  EXPECT_FALSE(ValidateApplicationClass(moved, &stored, "Deployment", From(others)).empty());
}

TEST(AdmissionTest, ACoupledApplicationsAnnotationsAreChecked) {
  auto with = [](std::string_view key, std::string_view value) {
    json::object w = Workload("Deployment", "db", "shop", "preferentially-coupled");
    w["metadata"].as_object()["annotations"].as_object()[key] = value;
    return w;
  };
  const std::string window = "metadata.annotations[federation.kubernetes.io/migration-window]";
  EXPECT_TRUE(
      ValidateApplicationAnnotations(with(api::kMigrationWindowAnnotation, "02:00-04:00"), nullptr)
          .empty());
  std::vector<StatusCause> causes =
      ValidateApplicationAnnotations(with(api::kMigrationWindowAnnotation, "2am-4am"), nullptr);
  ASSERT_EQ(Fields(causes), std::vector<std::string>{window});
  EXPECT_NE(causes[0].message.find("HH:MM-HH:MM"), std::string::npos) << causes[0].message;
  EXPECT_EQ(
      Fields(ValidateApplicationAnnotations(with(api::kAntiAffinityAnnotation, "shop"), nullptr)),
      std::vector<std::string>{"metadata.annotations[federation.kubernetes.io/anti-affinity]"});
  EXPECT_FALSE(
      ValidateApplicationAnnotations(with(api::kAntiAffinityAnnotation, "not valid!"), nullptr)
          .empty());
  EXPECT_TRUE(ValidateApplicationAnnotations(with(api::kAntiAffinityAnnotation, "reports"), nullptr)
                  .empty());
  EXPECT_EQ(
      Fields(ValidateApplicationAnnotations(with(api::kMigrateToAnnotation, "Cluster_B"), nullptr)),
      std::vector<std::string>{"metadata.annotations[federation.kubernetes.io/migrate-to]"});
  // Unchanged on update: not checked again.
  json::object stored = with(api::kMigrationWindowAnnotation, "2am-4am");
  EXPECT_TRUE(ValidateApplicationAnnotations(stored, &stored).empty());
}

// Every served version of every kind the federation propagates.
struct PropagatedVersion {
  std::string_view group, version, plural;
};
constexpr PropagatedVersion kPropagatedVersions[] = {
    {"", "v1", "namespaces"},
    {"", "v1", "configmaps"},
    {"", "v1", "secrets"},
    {"", "v1", "services"},
    {"apps", "v1", "replicasets"},
    {"apps", "v1", "deployments"},
    {"apps", "v1", "statefulsets"},
    {"autoscaling", "v2", "horizontalpodautoscalers"},
    {"autoscaling", "v1", "horizontalpodautoscalers"},
};

class RegistryAdmissionTest : public ::testing::Test {
 protected:
  RegistryAdmissionTest() {
    api::RegisterFoundationKinds(registry_);
    AddFederationAdmission(registry_, BuiltInKinds());
  }
  std::vector<StatusCause> Validate(std::string_view group, std::string_view version,
                                    std::string_view plural, const json::object& obj) {
    const api::Resource* r = registry_.Find(group, version, plural);
    EXPECT_NE(r, nullptr);
    if (r == nullptr || !r->validate_fn) return {};
    return r->validate_fn(obj, nullptr);
  }
  api::Registry registry_;
};

TEST_F(RegistryAdmissionTest, EveryPropagatedKindChecksTheSelector) {
  for (const PropagatedVersion& c : kPropagatedVersions) {
    json::object obj = Annotated(R"({"metadata":{"name":"x","namespace":"default"}})", kSelector,
                                 R"([{"key":"a","operator":"Near"}])");
    std::vector<std::string> fields = Fields(Validate(c.group, c.version, c.plural, obj));
    EXPECT_NE(std::find(fields.begin(), fields.end(),
                        std::string("metadata.annotations[") + kSelector + "][0].operator"),
              fields.end())
        << c.plural;
  }
  json::object lease =
      Annotated(R"({"metadata":{"name":"x","namespace":"default"}})", kSelector, "not json");
  std::vector<std::string> fields = Fields(Validate("coordination.k8s.io", "v1", "leases", lease));
  EXPECT_EQ(std::find(fields.begin(), fields.end(),
                      std::string("metadata.annotations[") + kSelector + "]"),
            fields.end());
}

TEST(FinalizerAtCreateTest, WhatTheRunningControllersHoldGetsTheFinalizerInItsCreate) {
  api::Registry registry;
  api::RegisterFoundationKinds(registry);
  auto finalized = std::make_shared<FinalizedAtCreate>();
  AddFederationAdmission(registry, BuiltInKinds(), {.finalized = finalized});
  auto create = [&](std::string_view group, std::string_view version, std::string_view plural,
                    std::string_view name) {
    json::object obj{{"metadata", json::object{{"name", name}, {"namespace", "default"}}}};
    const api::Resource* r = registry.Find(group, version, plural);
    EXPECT_NE(r, nullptr);
    if (r != nullptr && r->mutate_on_create) r->mutate_on_create(obj);
    const json::value* f = Find(obj, "metadata.finalizers");
    return f != nullptr ? *f : json::value();
  };
  const json::value held(json::array{api::kDeleteFromUnderlyingClustersFinalizer});
  EXPECT_TRUE(create("", "v1", "configmaps", "held").is_null());  // no controllers running

  std::vector<std::string> asked;
  finalized->Set([&](std::string_view group, std::string_view plural, const json::object& obj) {
    asked.push_back(std::string(group) + "/" + std::string(plural));
    return StringAt(obj, "metadata.name") == "held";
  });
  for (const PropagatedVersion& c : kPropagatedVersions) {
    asked.clear();
    EXPECT_EQ(create(c.group, c.version, c.plural, "held"), held) << c.plural;
    EXPECT_TRUE(create(c.group, c.version, c.plural, "other").is_null()) << c.plural;
    const std::string kind = std::string(c.group) + "/" + std::string(c.plural);
    EXPECT_EQ(asked, (std::vector<std::string>{kind, kind}));
  }
  asked.clear();
  EXPECT_TRUE(create("coordination.k8s.io", "v1", "leases", "held").is_null());
  EXPECT_TRUE(asked.empty());  // not a propagated kind: not asked
}

TEST_F(RegistryAdmissionTest, KeepsTheKindsOwnValidation) {
  // A Service without ports fails Service validation; the selector rule adds its cause.
  json::object svc = Annotated(R"({"apiVersion":"v1","kind":"Service",
      "metadata":{"name":"s","namespace":"default"},"spec":{}})",
                               kSelector, "[1]");
  std::vector<std::string> fields = Fields(Validate("", "v1", "services", svc));
  EXPECT_GE(fields.size(), 2u);
  EXPECT_NE(std::find(fields.begin(), fields.end(),
                      std::string("metadata.annotations[") + kSelector + "][0]"),
            fields.end());
}

TEST_F(RegistryAdmissionTest, PreferencesOnlyOnTheirKind) {
  json::object deploy = Annotated(R"({"metadata":{"name":"d","namespace":"default"}})",
                                  kDeployPrefs, R"({"bogus":1})");
  std::vector<std::string> fields = Fields(Validate("apps", "v1", "deployments", deploy));
  EXPECT_NE(std::find(fields.begin(), fields.end(),
                      std::string("metadata.annotations[") + kDeployPrefs + "].bogus"),
            fields.end());
  // An HPA's preferences are checked on both versions.
  for (std::string_view version : {"v1", "v2"}) {
    json::object hpa = Annotated(R"({"metadata":{"name":"h","namespace":"default"}})",
                                 "federation.kubernetes.io/hpa-preferences",
                                 R"({"clusters":{"a":{"maxReplicas":-1}}})");
    fields = Fields(Validate("autoscaling", version, "horizontalpodautoscalers", hpa));
    EXPECT_NE(std::find(fields.begin(), fields.end(),
                        "metadata.annotations[federation.kubernetes.io/hpa-preferences]"
                        ".clusters[a].maxReplicas"),
              fields.end())
        << version;
  }
  // The ReplicaSet annotation means nothing on a Deployment.
  json::object other =
      Annotated(R"({"metadata":{"name":"d","namespace":"default"}})", kRsPrefs, R"({"bogus":1})");
  fields = Fields(Validate("apps", "v1", "deployments", other));
  EXPECT_EQ(std::find(fields.begin(), fields.end(),
                      std::string("metadata.annotations[") + kRsPrefs + "].bogus"),
            fields.end());
}

// A kind is data: declared in a KindRegistry, a resource gets the placement
// rules, its preferences annotation and its local-name rule, and nothing
// else in admission names it.
TEST(KindAdmissionTest, ADeclaredKindGetsTheRulesItDeclares) {
  api::Registry registry;
  api::RegisterFoundationKinds(registry);
  KindRegistry kinds;
  kinds.Add({.controller = "lease",
             .kind = "Lease",
             .propagates = {{"coordination.k8s.io", "v1", "leases", true}},
             .admission = {.preferences_annotation = kRsPrefs, .max_local_name = 10}});
  auto clusters = std::make_shared<ClusterNames>();
  clusters->Set([] { return std::vector<std::string>{"far-away-cluster"}; });
  AddFederationAdmission(registry, kinds, {.clusters = clusters});
  const api::Resource* r = registry.Find("coordination.k8s.io", "v1", "leases");
  ASSERT_NE(r, nullptr);
  ASSERT_TRUE(r->validate_fn);
  json::object lease = Annotated(R"({"metadata":{"name":"x","namespace":"default"}})", kSelector,
                                 R"([{"key":"a","operator":"Near"}])");
  lease["metadata"].as_object()["annotations"].as_object()[kRsPrefs] = R"({"bogus":1})";
  std::vector<std::string> fields = Fields(r->validate_fn(lease, nullptr));
  EXPECT_NE(std::find(fields.begin(), fields.end(),
                      std::string("metadata.annotations[") + kSelector + "][0].operator"),
            fields.end());
  EXPECT_NE(std::find(fields.begin(), fields.end(),
                      std::string("metadata.annotations[") + kRsPrefs + "].bogus"),
            fields.end());
  EXPECT_NE(std::find(fields.begin(), fields.end(), "metadata.name"), fields.end());
  // Nothing but what it declared: a ConfigMap is not federated by `kinds`.
  const api::Resource* cm = registry.Find("", "v1", "configmaps");
  ASSERT_NE(cm, nullptr);
  EXPECT_TRUE(!cm->validate_fn || cm->validate_fn(ConfigMap(kSelector, "[1]"), nullptr).empty());
}

// Every built-in kind has a controller name, a help line and a builder, and
// every --controllers name is known.
TEST(KindAdmissionTest, TheBuiltInKindsAreComplete) {
  std::vector<std::string> names;
  for (const FederatedKind& k : BuiltInKinds().kinds()) {
    names.push_back(k.controller);
    EXPECT_FALSE(k.help.empty()) << k.controller;
    EXPECT_TRUE(k.build) << k.controller;
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"cluster", "member-events", "tokencleaner", "sync",
                                      "replicaset", "deployment", "statefulset", "hpa", "job",
                                      "cronjob", "daemonset", "disruption", "ingress"}));
  EXPECT_EQ(CheckControllers({"*", "-hpa", "sync"}), "");
  // A cascading unjoin deletes the Ingresses, disruption budgets, DaemonSets, Jobs and HPAs
  // first and the Namespaces last, and never a member's CustomResourceDefinitions.
  std::vector<std::string> member_kinds;
  for (const client::ResourceRef& r : MemberKinds()) member_kinds.push_back(r.resource);
  EXPECT_EQ(member_kinds, (std::vector<std::string>{"ingresses",
                                                    "poddisruptionbudgets",
                                                    "daemonsets",
                                                    "jobs",
                                                    "horizontalpodautoscalers",
                                                    "statefulsets",
                                                    "deployments",
                                                    "replicasets",
                                                    "rolebindings",
                                                    "roles",
                                                    "ingressclasses",
                                                    "networkpolicies",
                                                    "persistentvolumeclaims",
                                                    "resourcequotas",
                                                    "limitranges",
                                                    "services",
                                                    "serviceaccounts",
                                                    "secrets",
                                                    "configmaps",
                                                    "namespaces"}));
  EXPECT_NE(CheckControllers({"jobs"}).find("unknown controller \"jobs\""), std::string::npos);
}

// The workloads `kubectl flotilla status` lists come from the kinds'
// declarations, with the names kubectl takes for them.
TEST(BuiltInKindsTest, ListTheirWorkloadsByTheNamesKubectlTakes) {
  std::vector<ListedWorkload> listed = ListedWorkloads();
  std::vector<std::string> kinds;
  for (const ListedWorkload& w : listed) kinds.push_back(w.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"PersistentVolumeClaim", "ReplicaSet", "Deployment",
                                             "StatefulSet", "Job", "DaemonSet",
                                             "PodDisruptionBudget", "Ingress"}));
  for (const char* name : {"deploy", "Deployments", "deployment.apps", "DEPLOY.APPS"}) {
    const ListedWorkload* w = FindListedWorkload(listed, name);
    ASSERT_NE(w, nullptr) << name;
    EXPECT_EQ(w->resource.resource, "deployments");
    EXPECT_EQ(w->breakdown_annotation, api::kDeploymentStatusAnnotation);
  }
  EXPECT_EQ(FindListedWorkload(listed, "sts")->kind, "StatefulSet");
  EXPECT_EQ(FindListedWorkload(listed, "rs")->kind, "ReplicaSet");
  EXPECT_EQ(FindListedWorkload(listed, "ds")->breakdown_annotation,
            api::kDaemonSetStatusAnnotation);
  // Listed beside the workloads: a sync kind among the sync controller's many.
  const ListedWorkload* pvc = FindListedWorkload(listed, "pvc");
  ASSERT_NE(pvc, nullptr);
  EXPECT_EQ(pvc->resource.resource, "persistentvolumeclaims");
  EXPECT_EQ(pvc->breakdown_annotation, api::kClaimStatusAnnotation);
  EXPECT_EQ(FindListedWorkload(listed, "pdb")->kind, "PodDisruptionBudget");
  EXPECT_EQ(FindListedWorkload(listed, "ingresses.networking.k8s.io")->kind, "Ingress");
  EXPECT_EQ(FindListedWorkload(listed, "configmaps"), nullptr);
  EXPECT_EQ(FindListedWorkload(listed, "hpa"), nullptr);
  EXPECT_EQ(FindListedWorkload(listed, "pods"), nullptr);
  EXPECT_EQ(FindListedWorkload(listed, "deploy.batch"), nullptr);
}

}  // namespace
}  // namespace flotilla::federation
