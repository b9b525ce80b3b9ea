// Typed, read-only views over parsed objects: the fields the controllers
// read on their hot paths, named and typed once, instead of a dotted path
// spelled out at each reader ("metadata.name" in sixty places).
//
// A view finds the object's metadata, spec and status once when it is made
// and keeps pointers into the object: it is valid while the object lives
// unchanged, costs three lookups to make and is cheap to copy. Every reader
// answers for any shape of object, the way Kubernetes reads an absent
// field: "" for a string, 0 for a count, null for an object or a list; the
// few fields the API defaults otherwise say so (spec.replicas is 1).
//
// The dotted-path readers of base/json.h stay for the generic path: any
// kind, or a field named at run time.
//
// Pure; thread-safe over an object no one writes.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/json.h"

namespace flotilla::api {

// What every object has: its kind and metadata.
class ObjectView {
 public:
  explicit ObjectView(const json::object& obj);

  const json::object& object() const { return *obj_; }
  std::string_view kind() const { return String(obj_, "kind"); }

  std::string_view name() const { return String(meta_, "name"); }
  std::string_view ns() const { return String(meta_, "namespace"); }
  std::string_view uid() const { return String(meta_, "uid"); }
  std::string_view resource_version() const { return String(meta_, "resourceVersion"); }
  std::string_view creation_timestamp() const { return String(meta_, "creationTimestamp"); }
  int64_t generation() const { return Int(meta_, "generation"); }

  // Null when absent (or not an object).
  const json::object* labels() const { return Object(meta_, "labels"); }
  const json::object* annotations() const { return Object(meta_, "annotations"); }
  // "" when absent (or not a string).
  std::string_view label(std::string_view key) const { return String(labels(), key); }
  std::string_view annotation(std::string_view key) const { return String(annotations(), key); }

  // Null when absent (or not a list).
  const json::array* finalizers() const { return Array(meta_, "finalizers"); }
  const json::array* owner_references() const { return Array(meta_, "ownerReferences"); }
  bool HasFinalizer(std::string_view finalizer) const;

  // metadata.deletionTimestamp is set (not null, not "").
  bool deleting() const;

  // The status ("True", "False", "Unknown") of the condition `type` in
  // status.conditions; "" when there is none.
  std::string_view condition_status(std::string_view type) const;

 protected:
  const json::object* spec() const { return spec_; }
  const json::object* status() const { return status_; }

  // The member `key` of `o` (null: absent) as the type asked for; the
  // zero value (or `absent`) when `o` or the member is missing or of another type.
  static std::string_view String(const json::object* o, std::string_view key);
  static int64_t Int(const json::object* o, std::string_view key, int64_t absent = 0);
  static const json::object* Object(const json::object* o, std::string_view key);
  static const json::array* Array(const json::object* o, std::string_view key);
  static bool Bool(const json::object* o, std::string_view key);

 private:
  const json::object* obj_;
  const json::object* meta_;
  const json::object* spec_;
  const json::object* status_;
};

// metadata.deletionTimestamp is set: ObjectView(obj).deleting() for a
// reader of nothing else.
bool IsBeingDeleted(const json::object& obj);

// A ReplicaSet, Deployment or StatefulSet: what their specs ask and the
// counts their controllers report (each kind sets the counts it has; the
// others read 0).
class WorkloadView : public ObjectView {
 public:
  using ObjectView::ObjectView;

  // spec.replicas; 1 when absent, the API's default.
  int64_t replicas() const { return Int(spec(), "replicas", 1); }
  const json::object* pod_template() const { return Object(spec(), "template"); }
  const json::object* selector() const { return Object(spec(), "selector"); }
  std::string_view service_name() const { return String(spec(), "serviceName"); }

  int64_t status_replicas() const { return Int(status(), "replicas"); }
  int64_t ready_replicas() const { return Int(status(), "readyReplicas"); }
  int64_t available_replicas() const { return Int(status(), "availableReplicas"); }
  int64_t updated_replicas() const { return Int(status(), "updatedReplicas"); }
  int64_t unavailable_replicas() const { return Int(status(), "unavailableReplicas"); }
  int64_t fully_labeled_replicas() const { return Int(status(), "fullyLabeledReplicas"); }
  int64_t current_replicas() const { return Int(status(), "currentReplicas"); }
  int64_t observed_generation() const { return Int(status(), "observedGeneration"); }
  std::string_view current_revision() const { return String(status(), "currentRevision"); }
  std::string_view update_revision() const { return String(status(), "updateRevision"); }

  // The object's controller has seen its current spec (observedGeneration
  // reached generation), so the counts speak of it.
  bool Observed() const { return observed_generation() >= generation(); }
};

// A HorizontalPodAutoscaler (autoscaling/v2 or v1: the fields read here
// are the same in both).
class HpaView : public ObjectView {
 public:
  using ObjectView::ObjectView;

  std::string_view target_api_version() const { return String(target(), "apiVersion"); }
  std::string_view target_kind() const { return String(target(), "kind"); }

  std::string_view target_name() const { return String(target(), "name"); }
  // spec.minReplicas; 1 when absent, the API's default.
  int64_t min_replicas() const { return Int(spec(), "minReplicas", 1); }
  int64_t max_replicas() const { return Int(spec(), "maxReplicas"); }

  int64_t current_replicas() const { return Int(status(), "currentReplicas"); }
  int64_t desired_replicas() const { return Int(status(), "desiredReplicas"); }

 private:
  const json::object* target() const { return Object(spec(), "scaleTargetRef"); }
};

// A Service.
class ServiceView : public ObjectView {
 public:
  using ObjectView::ObjectView;

  std::string_view type() const { return String(spec(), "type"); }
  std::string_view cluster_ip() const { return String(spec(), "clusterIP"); }
  const json::array* ports() const { return Array(spec(), "ports"); }
  // status.loadBalancer.ingress; null when absent.
  const json::array* load_balancer_ingress() const {
    return Array(Object(status(), "loadBalancer"), "ingress");
  }
};

// A federation Cluster: how to reach the member and what its status says.
class ClusterView : public ObjectView {
 public:
  using ObjectView::ObjectView;

  // spec.secretRef: the Secret with the member's credentials. The
  // namespace is "" when unset (the federation's system namespace).
  std::string_view secret_namespace() const { return String(secret_ref(), "namespace"); }
  std::string_view secret_name() const { return String(secret_ref(), "name"); }
  // spec.connection "Agent": the member is reached through the tunnel its
  // agent opened to the federation (federation/cluster/tunnel.h), not
  // dialled; it has no Secret.
  bool via_agent() const { return String(spec(), "connection") == "Agent"; }
  // spec.serverAddressByClientCIDRs[0].serverAddress: the member's URL.
  std::string_view server_address() const {
    const json::array* addresses = Array(spec(), "serverAddressByClientCIDRs");
    if (addresses == nullptr || addresses->empty() || !addresses->front().is_object()) return {};
    return String(&addresses->front().get_object(), "serverAddress");
  }
  // A cordoned cluster (spec.unschedulable, `kubectl flotilla cordon`, or
  // draining) is given nothing new: no copy where it holds none, no
  // replica beyond what it holds. Nothing moves off it either.
  // A draining cluster (spec.draining, `kubectl flotilla drain`) is
  // cordoned, and what can move leaves it: federated ReplicaSets' and
  // Deployments' replicas (make-before-break) and coupled applications
  // (whole).
  bool cordoned() const { return unschedulable() || draining(); }
  bool unschedulable() const { return Bool(spec(), "unschedulable"); }
  bool draining() const { return Bool(spec(), "draining"); }

  // The Ready condition is True.
  bool ready() const { return condition_status("Ready") == "True"; }
  std::string_view region() const { return String(status(), "region"); }
  // status.zones; null when absent.
  const json::array* zones() const { return Array(status(), "zones"); }
  std::string_view kubernetes_version() const { return String(status(), "kubernetesVersion"); }

 private:
  const json::object* secret_ref() const { return Object(spec(), "secretRef"); }
};

}  // namespace flotilla::api
