// The federation's admission rules (docs/federation.md, "Admission"): the
// federation API server refuses, at create and update, annotations its
// controllers could not act on, with 422 Invalid naming the field, so that
// a mistake shows at `kubectl apply` instead of as a silent non-placement.
//  - federation.alpha.kubernetes.io/cluster-selector on every kind the
//    federation propagates must be a valid cluster selector;
//  - federation.kubernetes.io/replica-set-preferences on ReplicaSets and
//    federation.kubernetes.io/deployment-preferences on Deployments must be
//    valid placement preferences (planner::ParsePreferences);
//  - federation.kubernetes.io/replica-preferences on custom kinds must be
//    valid placement preferences (docs/interpreter.md);
//  - federation.kubernetes.io/cluster-update-order on Deployments and
//    StatefulSets must be a comma-separated list of cluster names (DNS-1123
//    subdomains);
//  - federation.kubernetes.io/statefulset-preferences on StatefulSets must
//    be valid placement preferences;
//  - federation.kubernetes.io/cluster (the one cluster an object goes to) on
//    every propagated kind must be a cluster name;
//  - federation.kubernetes.io/location-affinity on Deployments and
//    ReplicaSets must be a class (strictly-decoupled, preferentially-coupled,
//    strictly-coupled), the same as every other Deployment and ReplicaSet
//    with the same federation.kubernetes.io/application label in the
//    namespace (as the federation's caches have them);
//  - a new StatefulSet's name must leave room for every joined cluster's
//    name: its local StatefulSets are named <name>-<cluster>, and a
//    StatefulSet's name may have at most 52 characters (its pods' revision
//    label appends a hash to it).
//  - a ResourceInterpreterCustomization's scripts must compile, run their
//    top level within the interpreter's limits and define their functions
//    (interpreter::Validate; docs/interpreter.md).
// And one mutation, at create: a new object that a running controller will
// propagate, created while a cluster is joined, gets the finalizer
// federation.kubernetes.io/delete-from-underlying-clusters in the create
// itself (as Kubernetes' StorageObjectInUseProtection puts its finalizer on
// a new PersistentVolumeClaim), so the controller does not write it before
// the first copy (docs/federation.md, "Deletion").
//
// On update an annotation whose value did not change is not checked again,
// so an object stored before a rule existed can still be updated (and its
// finalizers removed).
//
// Only the federation's server installs these; members keep plain
// Kubernetes validation. Pure functions; thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/registry.h"
#include "base/json.h"
#include "base/mutex.h"
#include "base/status.h"
#include "federation/common/federated_kind.h"

namespace flotilla::federation {

// What a rule reads of the federation's state: a source set once the
// federation's caches run, unset before they stop; without a source the
// rule sees nothing (an empty result). Thread-safe: requests call it
// concurrently; Set waits for the calls under way, so nothing calls an
// unset source after Set returns.
template <typename Signature>
class LateSource;
template <typename Result, typename... Args>
class LateSource<Result(Args...)> {
 public:
  void Set(std::function<Result(Args...)> source) {
    WriterLock lock(mu_);
    source_ = std::move(source);
  }
  Result Get(Args... args) const {
    ReaderLock lock(mu_);
    return source_ ? source_(args...) : Result{};
  }

 private:
  mutable SharedMutex mu_;
  std::function<Result(Args...)> source_ GUARDED_BY(mu_);
};

// The names of the joined clusters, for the StatefulSet name rule.
using ClusterNames = LateSource<std::vector<std::string>()>;
// The federated Deployments and ReplicaSets of a namespace labelled with an
// application (with kind set), for the application rule.
using ApplicationWorkloads =
    LateSource<std::vector<json::object>(const std::string& ns, const std::string& app)>;

// Whether a running controller holds a new object of group/plural with the
// federation's finalizer (FederationContext::FinalizesAtCreate).
using FinalizedAtCreate =
    LateSource<bool(std::string_view group, std::string_view plural, const json::object& obj)>;

// The federated resource quotas' refusal of a Deployment, ReplicaSet or
// StatefulSet (kind set) about to be stored (FederatedQuotas::Admit).
using QuotaAdmission = LateSource<Status(const json::object& obj)>;

struct AdmissionSources {
  std::shared_ptr<const ClusterNames> clusters;
  std::shared_ptr<const ApplicationWorkloads> workloads;
  std::shared_ptr<const FinalizedAtCreate> finalized;
  std::shared_ptr<const QuotaAdmission> quotas;
};

// Chains the rules (and the finalizer at create) onto the kinds of
// `registry` they apply to: the placement rules on every resource one of
// `kinds` propagates, and each kind's own rules (FederatedKind::admission,
// FederatedKind::applications) on its first. A null source skips its rule.
// REQUIRES: the API kinds are registered and the registry is not shared yet.
void AddFederationAdmission(api::Registry& registry, const KindRegistry& kinds,
                            AdmissionSources sources = {});

// The cluster-selector rule: causes for an invalid annotation on `obj`
// (nothing when absent, or unchanged from `old`, which is null on create).
std::vector<StatusCause> ValidateClusterSelectorAnnotation(const json::object& obj,
                                                           const json::object* old);
// The preferences rule for annotation `key`; same contract.
std::vector<StatusCause> ValidatePreferencesAnnotation(const json::object& obj,
                                                       const json::object* old,
                                                       std::string_view key);

// The update-order rule; same contract.
std::vector<StatusCause> ValidateUpdateOrderAnnotation(const json::object& obj,
                                                       const json::object* old);
// The placement-cluster rule; same contract.
std::vector<StatusCause> ValidatePlacementClusterAnnotation(const json::object& obj,
                                                            const json::object* old);
// The annotations of a coupled application's workload: a migration window
// "HH:MM-HH:MM", an anti-affinity that is a label value naming another
// application, a migrate-to that is a cluster's name. Checked when set or
// changed.
std::vector<StatusCause> ValidateApplicationAnnotations(const json::object& obj,
                                                        const json::object* old);
// The application rule for a Deployment or ReplicaSet (`kind`): a valid
// location-affinity class, the same as every other workload of its
// application that `others` (called only when needed) returns: the
// namespace's federated Deployments and ReplicaSets with the application
// label, kind set. Checked when the label or the class is set or changed.
std::vector<StatusCause> ValidateApplicationClass(
    const json::object& obj, const json::object* old, std::string_view kind,
    const std::function<std::vector<json::object>(const std::string& app)>& others);
// The local-name rule of a `kind` whose local objects are named
// <name>-<cluster> with at most `max` characters (KindAdmission::
// max_local_name), against `clusters`, on create only.
std::vector<StatusCause> ValidateLocalNameLength(const json::object& obj, const json::object* old,
                                                 const std::vector<std::string>& clusters,
                                                 std::string_view kind, size_t max);

}  // namespace flotilla::federation
