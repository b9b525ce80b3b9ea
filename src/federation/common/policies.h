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
// OverridePolicies: what override policies change in each member's copy.
//
// Thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/policy/overrides.h"
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
inline const client::ResourceRef kOverridePolicies{api::policy::kGroup, api::policy::kVersion,
                                                   "overridepolicies", true};
inline const client::ResourceRef kClusterOverridePolicies{
    api::policy::kGroup, api::policy::kVersion, "clusteroverridepolicies", false};

using PolicyPtr = std::shared_ptr<const api::policy::PropagationPolicy>;

// Where one object goes: the clusters its selector admits and, when a
// policy placed it, that policy.
struct ObjectPlacement {
  ClusterSelector selector;
  PolicyPtr policy;     // null: its annotations, or no policy, placed it
  bool placed = false;  // false: neither its annotations nor a policy did
};

// A status write (or a metadata one) changes nothing a policy says.
bool SpecChanged(const json::object& a, const json::object& b);
// Logs a stored policy that does not read.
void ReportUnreadable(const json::object& obj, const Status& s);

// The policies of one pair of kinds (a namespaced one and its cluster-scoped
// twin) as parsed values, read from two informers on the federation: every
// change re-parses them all (a policy change is rare, a lookup is on every
// check) and then calls the OnChange callbacks. `Policy` has
// `static StatusOr<Policy> FromObject(const json::object&)`. Thread-safe.
template <typename Policy>
class PolicySet {
 public:
  using Ptr = std::shared_ptr<const Policy>;

  // Both informers must outlive this; handlers are added here.
  PolicySet(runtime::Informer& namespaced, runtime::Informer& cluster_scoped)
      : namespaced_(namespaced), cluster_scoped_(cluster_scoped) {
    runtime::EventHandler handler{
        .on_add = [this](const runtime::ObjectPtr&) { Rebuild(); },
        .on_update =
            [this](const runtime::ObjectPtr& a, const runtime::ObjectPtr& b) {
              if (SpecChanged(*a, *b)) Rebuild();
            },
        .on_delete = [this](const runtime::ObjectPtr&) { Rebuild(); }};
    namespaced_.AddEventHandler(handler);
    cluster_scoped_.AddEventHandler(handler);
  }
  PolicySet(const PolicySet&) = delete;
  PolicySet& operator=(const PolicySet&) = delete;

  // Calls `fn` after any policy was added, changed or deleted. `fn` only
  // enqueues. REQUIRES: before the informers start.
  void OnChange(std::function<void()> fn) { on_change_.push_back(std::move(fn)); }

  std::vector<Ptr> All() const {
    MutexLock lock(mu_);
    return policies_;
  }

 private:
  void Rebuild() {
    // One rebuild at a time: the two informers' handlers may run at once,
    // and a rebuild that listed first must not store last.
    MutexLock rebuilding(rebuild_mu_);
    std::vector<Ptr> next;
    for (runtime::Informer* informer : {&namespaced_, &cluster_scoped_}) {
      for (const runtime::ObjectPtr& obj : informer->lister().List("")) {
        StatusOr<Policy> p = Policy::FromObject(*obj);
        // The server validated it; one stored before a rule existed
        // applies nowhere.
        if (!p.ok()) {
          ReportUnreadable(*obj, p.status());
          continue;
        }
        next.push_back(std::make_shared<const Policy>(*std::move(p)));
      }
    }
    {
      MutexLock lock(mu_);
      policies_ = std::move(next);
    }
    rebuilding.Unlock();
    for (const auto& fn : on_change_) fn();
  }

  runtime::Informer& namespaced_;
  runtime::Informer& cluster_scoped_;
  std::vector<std::function<void()>> on_change_;  // set before start
  Mutex rebuild_mu_ ACQUIRED_BEFORE(mu_);
  mutable Mutex mu_;
  std::vector<Ptr> policies_ GUARDED_BY(mu_);
};

class PropagationPolicies {
 public:
  PropagationPolicies(runtime::Informer& namespaced, runtime::Informer& cluster_scoped)
      : set_(namespaced, cluster_scoped) {}

  // See PolicySet::OnChange.
  void OnChange(std::function<void()> fn) { set_.OnChange(std::move(fn)); }

  // The policy that places `obj` of `api_version`/`kind` now, or null.
  PolicyPtr For(const json::object& obj, std::string_view api_version, std::string_view kind) const;

  // Where `obj` goes (see the file comment). `preferences_annotation` is
  // its kind's (empty for kinds without replicas). Errors: the object's
  // annotations are invalid (ClusterSelector::Of's errors).
  StatusOr<ObjectPlacement> PlacementOf(const json::object& obj, std::string_view api_version,
                                        std::string_view kind,
                                        std::string_view preferences_annotation = "") const;

  // Every policy, in no particular order.
  std::vector<PolicyPtr> All() const { return set_.All(); }

 private:
  PolicySet<api::policy::PropagationPolicy> set_;
};

// The override policies (OverridePolicy, ClusterOverridePolicy) and what
// they change in each member's copy.
class OverridePolicies {
 public:
  OverridePolicies(runtime::Informer& namespaced, runtime::Informer& cluster_scoped)
      : set_(namespaced, cluster_scoped) {}

  void OnChange(std::function<void()> fn) { set_.OnChange(std::move(fn)); }

  // True when there is no override policy.
  bool Empty() const { return set_.All().empty(); }

  // Applies to `copy` (the copy of `obj`, of `api_version`/`kind`, meant
  // for `cluster`, a Cluster object) the overriders that apply there, and
  // records them in its applied-overrides annotations. An error (an
  // overrider that cannot apply) names the policy, and sets `failed` to it
  // when given; `copy` is then partly changed. Without policies nothing is
  // done.
  Status Apply(const json::object& obj, std::string_view api_version, std::string_view kind,
               const json::object& cluster, json::object& copy,
               std::shared_ptr<const api::policy::OverridePolicy>* failed = nullptr) const;

 private:
  PolicySet<api::policy::OverridePolicy> set_;
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
