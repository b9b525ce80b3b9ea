#include "federation/common/local_workload.h"

#include <gtest/gtest.h>

#include "api/federated.h"
#include "federation/common/member_copy.h"

namespace flotilla::federation {
namespace {

json::object Frs() {
  auto frs = ParseJsonObject(R"({
    "apiVersion": "apps/v1", "kind": "ReplicaSet",
    "metadata": {"name": "web", "namespace": "shop", "uid": "u1", "resourceVersion": "7",
                 "generation": 3, "labels": {"app": "web"},
                 "finalizers": ["federation.kubernetes.io/delete-from-underlying-clusters"],
                 "annotations": {
                   "team": "a",
                   "federation.kubernetes.io/replica-set-preferences": "{}",
                   "federation.alpha.kubernetes.io/cluster-selector": "[]",
                   "federation.kubernetes.io/replica-set-status": "{}",
                   "kubectl.kubernetes.io/last-applied-configuration": "{}"}},
    "spec": {"replicas": 9, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
    "status": {"replicas": 9}})");
  EXPECT_TRUE(frs.ok());
  return *frs;
}

TEST(LocalWorkloadTest, CarriesTheTemplateTheReplicasAndWhoManagesIt) {
  json::object local = DesiredLocal(Frs(), 4);
  EXPECT_EQ(*Find(local, "spec.replicas"), json::value(4));
  EXPECT_EQ(*Find(local, "spec.template"), *Find(Frs(), "spec.template"));
  EXPECT_EQ(*Find(local, "metadata.namespace"), json::value("shop"));
  const json::object& labels = Find(local, "metadata.labels")->as_object();
  EXPECT_EQ(labels.at("app"), json::value("web"));
  EXPECT_EQ(labels.at(api::kManagedByLabel), json::value(api::kManagedByValue));
  const json::object& annotations = Find(local, "metadata.annotations")->as_object();
  EXPECT_EQ(annotations.at(api::kFederatedObjectAnnotation), json::value("shop/web"));
  EXPECT_EQ(annotations.at("team"), json::value("a"));
  for (const char* key : {"federation.kubernetes.io/replica-set-preferences",
                          "federation.alpha.kubernetes.io/cluster-selector",
                          "federation.kubernetes.io/replica-set-status"}) {
    EXPECT_FALSE(annotations.contains(key)) << key;
  }
  // Nothing of the federated object's identity or status travels.
  EXPECT_EQ(Find(local, "metadata.uid"), nullptr);
  EXPECT_EQ(Find(local, "metadata.finalizers"), nullptr);
  EXPECT_EQ(Find(local, "status"), nullptr);
  EXPECT_TRUE(IsManaged(local));
}

TEST(LocalWorkloadTest, UpdatesOnlyWhatTheFederationSets) {
  json::object desired = DesiredLocal(Frs(), 4);
  json::object existing = desired;
  json::object& meta = existing["metadata"].as_object();
  meta["uid"] = "member-uid";
  meta["resourceVersion"] = "100";
  meta["generation"] = 2;
  existing["status"] = json::object{{"replicas", 4}};
  EXPECT_FALSE(NeedsUpdate(existing, desired));

  json::object scaled = existing;
  scaled["spec"].as_object()["replicas"] = 5;
  EXPECT_TRUE(NeedsUpdate(scaled, desired));
  json::object relabelled = existing;
  relabelled["metadata"].as_object()["labels"].as_object()["app"] = "hand-edited";
  EXPECT_TRUE(NeedsUpdate(relabelled, desired));

  json::object updated = Updated(scaled, desired);
  EXPECT_FALSE(NeedsUpdate(updated, desired));
  EXPECT_EQ(*Find(updated, "metadata.resourceVersion"), json::value("100"));
  EXPECT_EQ(*Find(updated, "metadata.uid"), json::value("member-uid"));
  EXPECT_EQ(*Find(updated, "status.replicas"), json::value(4));
}

TEST(LocalWorkloadTest, ObjectsWithoutTheLabelAreNotManaged) {
  EXPECT_FALSE(IsManaged(Frs()));
  EXPECT_FALSE(IsManaged(json::object{}));
}

}  // namespace
}  // namespace flotilla::federation
