#include "api/views.h"

#include <gtest/gtest.h>

namespace flotilla::api {
namespace {

json::object Parse(std::string_view text) { return ParseJsonObject(text).value(); }

TEST(ObjectViewTest, ReadsMetadata) {
  json::object obj = Parse(R"({"kind":"ReplicaSet","metadata":{
      "name":"web","namespace":"shop","uid":"u-1","resourceVersion":"42","generation":3,
      "creationTimestamp":"2026-01-02T03:04:05Z",
      "labels":{"app":"web"},"annotations":{"note":"x"},
      "finalizers":["a","b"],"ownerReferences":[{"kind":"Deployment"}],
      "deletionTimestamp":"2026-01-02T03:04:06Z"}})");
  ObjectView v(obj);
  EXPECT_EQ(v.kind(), "ReplicaSet");
  EXPECT_EQ(v.name(), "web");
  EXPECT_EQ(v.ns(), "shop");
  EXPECT_EQ(v.uid(), "u-1");
  EXPECT_EQ(v.resource_version(), "42");
  EXPECT_EQ(v.creation_timestamp(), "2026-01-02T03:04:05Z");
  EXPECT_EQ(v.generation(), 3);
  EXPECT_EQ(v.label("app"), "web");
  EXPECT_EQ(v.label("tier"), "");
  EXPECT_EQ(v.annotation("note"), "x");
  ASSERT_NE(v.finalizers(), nullptr);
  EXPECT_TRUE(v.HasFinalizer("b"));
  EXPECT_FALSE(v.HasFinalizer("c"));
  ASSERT_NE(v.owner_references(), nullptr);
  EXPECT_EQ(v.owner_references()->size(), 1u);
  EXPECT_TRUE(v.deleting());
  EXPECT_EQ(&v.object(), &obj);
}

TEST(ObjectViewTest, AbsentAndMistypedFieldsReadAsZero) {
  for (std::string_view text :
       {R"({})", R"({"metadata":null,"spec":[],"status":"x"})",
        R"({"metadata":{"name":7,"generation":"3","labels":[],"annotations":{"a":1},
            "finalizers":{},"deletionTimestamp":null}})"}) {
    SCOPED_TRACE(text);
    json::object obj = Parse(text);
    WorkloadView v(obj);
    EXPECT_EQ(v.name(), "");
    EXPECT_EQ(v.ns(), "");
    EXPECT_EQ(v.generation(), 0);
    EXPECT_EQ(v.labels(), nullptr);
    EXPECT_EQ(v.annotation("a"), "");
    EXPECT_EQ(v.finalizers(), nullptr);
    EXPECT_FALSE(v.HasFinalizer("a"));
    EXPECT_FALSE(v.deleting());
    EXPECT_EQ(v.replicas(), 1);  // the API's default
    EXPECT_EQ(v.ready_replicas(), 0);
    EXPECT_EQ(v.pod_template(), nullptr);
    EXPECT_TRUE(v.Observed());
  }
}

TEST(WorkloadViewTest, ReadsSpecAndStatus) {
  json::object obj = Parse(R"({"metadata":{"generation":4},
      "spec":{"replicas":0,"serviceName":"db","selector":{"matchLabels":{}},"template":{}},
      "status":{"replicas":5,"readyReplicas":4,"availableReplicas":3,"updatedReplicas":2,
                "unavailableReplicas":1,"fullyLabeledReplicas":6,"currentReplicas":7,
                "observedGeneration":3,"currentRevision":"r1","updateRevision":"r2"}})");
  WorkloadView v(obj);
  EXPECT_EQ(v.replicas(), 0);
  EXPECT_EQ(v.service_name(), "db");
  EXPECT_NE(v.selector(), nullptr);
  EXPECT_NE(v.pod_template(), nullptr);
  EXPECT_EQ(v.status_replicas(), 5);
  EXPECT_EQ(v.ready_replicas(), 4);
  EXPECT_EQ(v.available_replicas(), 3);
  EXPECT_EQ(v.updated_replicas(), 2);
  EXPECT_EQ(v.unavailable_replicas(), 1);
  EXPECT_EQ(v.fully_labeled_replicas(), 6);
  EXPECT_EQ(v.current_replicas(), 7);
  EXPECT_EQ(v.observed_generation(), 3);
  EXPECT_EQ(v.current_revision(), "r1");
  EXPECT_EQ(v.update_revision(), "r2");
  EXPECT_FALSE(v.Observed());
}

TEST(HpaViewTest, ReadsTargetBoundsAndStatus) {
  json::object obj = Parse(R"({"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web"},
      "maxReplicas":10},"status":{"currentReplicas":3,"desiredReplicas":4}})");
  HpaView v(obj);
  EXPECT_EQ(v.target_api_version(), "");
  EXPECT_EQ(v.target_kind(), "Deployment");

  EXPECT_EQ(v.target_name(), "web");
  EXPECT_EQ(v.min_replicas(), 1);  // the API's default
  EXPECT_EQ(v.max_replicas(), 10);
  EXPECT_EQ(v.current_replicas(), 3);
  EXPECT_EQ(v.desired_replicas(), 4);
}

TEST(ServiceViewTest, ReadsSpecAndLoadBalancer) {
  json::object obj = Parse(R"({"spec":{"type":"LoadBalancer","clusterIP":"10.0.0.1",
      "ports":[{"port":80}]},"status":{"loadBalancer":{"ingress":[{"ip":"1.2.3.4"}]}}})");
  ServiceView v(obj);
  EXPECT_EQ(v.type(), "LoadBalancer");
  EXPECT_EQ(v.cluster_ip(), "10.0.0.1");
  ASSERT_NE(v.ports(), nullptr);
  EXPECT_EQ(v.ports()->size(), 1u);
  ASSERT_NE(v.load_balancer_ingress(), nullptr);
  EXPECT_EQ(v.load_balancer_ingress()->size(), 1u);
  json::object bare = Parse(R"({"status":{"loadBalancer":{}}})");
  EXPECT_EQ(ServiceView(bare).load_balancer_ingress(), nullptr);
}

TEST(ClusterViewTest, ReadsSpecAndStatus) {
  json::object obj = Parse(R"({"spec":{"secretRef":{"name":"c1-secret"},"unschedulable":true},
      "status":{"region":"eu","zones":["a","b"],"kubernetesVersion":"v1.30.0",
                "conditions":[{"type":"Offline","status":"False"},{"type":"Ready","status":"True"}]}})");
  ClusterView v(obj);
  EXPECT_EQ(v.secret_name(), "c1-secret");
  EXPECT_EQ(v.secret_namespace(), "");
  EXPECT_TRUE(v.unschedulable());
  EXPECT_FALSE(v.draining());
  EXPECT_TRUE(v.cordoned());
  EXPECT_TRUE(v.ready());
  EXPECT_EQ(v.condition_status("Offline"), "False");
  EXPECT_EQ(v.condition_status("Other"), "");
  EXPECT_EQ(v.region(), "eu");
  ASSERT_NE(v.zones(), nullptr);
  EXPECT_EQ(v.zones()->size(), 2u);
  EXPECT_EQ(v.kubernetes_version(), "v1.30.0");

  json::object draining = Parse(R"({"spec":{"draining":true,"unschedulable":"yes"},
      "status":{"conditions":[{"type":"Ready","status":"False"}]}})");
  ClusterView d(draining);
  EXPECT_FALSE(d.unschedulable());  // not a bool
  EXPECT_TRUE(d.cordoned());
  EXPECT_FALSE(d.ready());
}

}  // namespace
}  // namespace flotilla::api
