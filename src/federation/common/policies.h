// PropagationPolicies: the federation's view of the propagation policies
// (policy.karmada.io PropagationPolicy and ClusterPropagationPolicy), and
// where they place a federated object (docs/policies.md).
//
// An object's own placement annotations come first: an object with the
// cluster selector, the placement cluster or its kind's preferences
// annotation is placed by them alone. Otherwise the policy SelectPolicy
// chooses places it; an object no policy selects goes to every ready
// cluster, as before policies existed.
//
// The policies are read from two informers on the federation; every change
// of one re-parses them all (a policy change is rare, a lookup is on every
// check) and tells the OnChange callbacks, which re-check what they place.
//
// Thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/policy/policy.h"
#include "base/mutex.h"
#include "base/status.h"
#include "client/client.h"
#include "federation/common/cluster_selector.h"
#include "planner/preferences.h"
#include "runtime/informer.h"

namespace flotilla::federation {

inline const client::ResourceRef kPropagationPolicies{api::policy::kGroup, api::policy::kVersion,
                                                      "propagationpolicies", true};
inline const client::ResourceRef kClusterPropagationPolicies{
    api::policy::kGroup, api::policy::kVersion, "clusterpropagationpolicies", false};

using PolicyPtr = std::shared_ptr<const api::policy::PropagationPolicy>;

// Where one object goes: the clusters its selector admits and, when a
// policy placed it, that policy.
struct ObjectPlacement {
  ClusterSelector selector;
  PolicyPtr policy;  // null: its annotations, or no policy, placed it
};

class PropagationPolicies {
 public:
  // Both informers must outlive this; handlers are added here.
  PropagationPolicies(runtime::Informer& namespaced, runtime::Informer& cluster_scoped);
  PropagationPolicies(const PropagationPolicies&) = delete;
  PropagationPolicies& operator=(const PropagationPolicies&) = delete;

  // Calls `fn` after any policy was added, changed or deleted. `fn` only
  // enqueues. REQUIRES: before the informers start.
  void OnChange(std::function<void()> fn);

  // The policy that places `obj` of `api_version`/`kind` now, or null.
  PolicyPtr For(const json::object& obj, std::string_view api_version, std::string_view kind) const;

  // Where `obj` goes (see the file comment). `preferences_annotation` is
  // its kind's (empty for kinds without replicas). Errors: the object's
  // annotations are invalid (ClusterSelector::Of's errors).
  StatusOr<ObjectPlacement> PlacementOf(const json::object& obj, std::string_view api_version,
                                        std::string_view kind,
                                        std::string_view preferences_annotation = "") const;

  // Every policy, in no particular order (for status and explanations).
  std::vector<PolicyPtr> All() const;

 private:
  void Rebuild();

  runtime::Informer& namespaced_;
  runtime::Informer& cluster_scoped_;
  std::vector<std::function<void()>> on_change_;  // set before start
  mutable Mutex mu_;
  std::vector<PolicyPtr> policies_ GUARDED_BY(mu_);
};

// True when `obj` carries one of the annotations that place it without
// policies: the cluster selector, the placement cluster or
// `preferences_annotation` (when not empty).
bool PlacedByAnnotations(const json::object& obj, std::string_view preferences_annotation);

// The annotations that record the policy that placed an object, as Karmada
// writes them; an empty object for no policy. Every key of
// PolicyAnnotationKeys() not set here is to be removed.
json::object PolicyAnnotations(const api::policy::PropagationPolicy* policy);
const std::vector<std::string>& PolicyAnnotationKeys();

// One admitted cluster as a policy's replica division sees it.
struct DivisionCluster {
  std::string name;
  const json::object* cluster = nullptr;  // the Cluster object
  int64_t current = 0;                    // the workload's replicas there now
  // What the cluster has room for, in pods of the workload's template (from
  // its resource summary); none when unknown.
  std::optional<int64_t> available;
};

// The planner preferences of a policy that divides replicas, over the
// admitted `clusters`:
//  - Weighted with a staticWeightList: each cluster its weight (the highest
//    entry that selects it); when none selects any, all weigh 1.
//    Rebalanced: the counts follow the weights.
//  - Weighted with dynamicWeight AvailableReplicas: each cluster weighs what
//    it has room for plus what it runs of the workload.
//  - Aggregated: the clusters with the most room, as few as hold
//    `replicas`, weighted by their room.
// Without room figures, a cluster weighs 1. nullopt for a Duplicated
// policy (every cluster runs all the replicas).
std::optional<planner::Preferences> DivisionPreferences(
    const api::policy::PropagationPolicy& p, int64_t replicas,
    const std::vector<DivisionCluster>& clusters);

// The pods of `pod_template` (a pod template's JSON) that `cluster` (a
// Cluster object) has room for, from status.resourceSummary; none without
// a summary.
std::optional<int64_t> AvailableReplicas(const json::object& cluster,
                                         const json::object* pod_template);

}  // namespace flotilla::federation
