// Karmada's policy API (policy.karmada.io/v1alpha1) as data: the propagation
// policies read into values, which policy places an object, and which member
// clusters a cluster affinity admits (docs/policies.md). The meanings are
// Karmada's, field by field; the code is ours.
//
// Everything here is pure (no I/O, no clock, no threads) and every value is
// immutable once built, so it is safe to share between threads.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/labels.h"
#include "base/clock.h"
#include "base/json.h"
#include "base/status.h"

namespace flotilla::api::policy {

inline constexpr char kGroup[] = "policy.karmada.io";
inline constexpr char kVersion[] = "v1alpha1";
inline constexpr char kApiVersion[] = "policy.karmada.io/v1alpha1";

// Where the federation records the policy that placed an object, as Karmada
// records it on a resource template; the domains stay on the federation.
inline constexpr char kPropagationPolicyAnnotationDomain[] = "propagationpolicy.karmada.io/";
inline constexpr char kClusterPropagationPolicyAnnotationDomain[] =
    "clusterpropagationpolicy.karmada.io/";
inline constexpr char kPropagationPolicyNameAnnotation[] = "propagationpolicy.karmada.io/name";
inline constexpr char kPropagationPolicyNamespaceAnnotation[] =
    "propagationpolicy.karmada.io/namespace";
inline constexpr char kClusterPropagationPolicyNameAnnotation[] =
    "clusterpropagationpolicy.karmada.io/name";

// The cluster fields a field selector and a spread constraint name.
inline constexpr char kProviderField[] = "provider";
inline constexpr char kRegionField[] = "region";
inline constexpr char kZoneField[] = "zone";

// A cluster as a cluster affinity reads it: its name and labels, and its
// provider, region and zones (spec first, then what the cluster controller
// observed). Built from a Cluster object by ClusterFacts::Of.
struct ClusterFacts {
  std::string name;
  const json::object* labels = nullptr;  // null: no labels
  std::string provider;
  std::string region;
  std::vector<std::string> zones;

  // `cluster` must outlive the facts (labels point into it).
  static ClusterFacts Of(const json::object& cluster);
};

// A Cluster's taint (spec.taints, a node taint's fields, as Karmada's
// Cluster has them): an object whose policy does not tolerate a NoSchedule
// taint gets nothing new in the cluster, one that does not tolerate a
// NoExecute taint leaves it (PreferNoSchedule is a hint: nothing).
struct ClusterTaint {
  std::string key, value, effect;
  std::optional<TimePoint> added;  // timeAdded
  friend bool operator==(const ClusterTaint&, const ClusterTaint&) = default;
};
inline constexpr char kNoSchedule[] = "NoSchedule";
inline constexpr char kNoExecute[] = "NoExecute";
// The taint a cordoned cluster carries (Karmada's key for
// spec.unschedulable).
inline constexpr char kUnschedulableTaintKey[] = "cluster.karmada.io/unschedulable";

// The taints of `cluster` (a Cluster object): spec.taints, and the
// unschedulable NoSchedule taint when spec.unschedulable is set without it.
std::vector<ClusterTaint> TaintsOf(const json::object& cluster);

// A policy's placement.clusterTolerations entry (a pod toleration's fields).
struct ClusterToleration {
  std::string key;  // empty with Exists: every key
  bool exists = false;
  std::string value;
  std::string effect;  // empty: every effect
  // For NoExecute: tolerated this long after the taint's timeAdded only.
  std::optional<int64_t> seconds;

  // Whether it tolerates `t`, the time aside.
  bool Tolerates(const ClusterTaint& t) const;
};

// What a cluster's taints mean for an object placed under `tolerations`
// at `now`.
struct TaintVerdict {
  bool no_schedule = false;  // an untolerated NoSchedule taint: nothing new
  bool no_execute = false;   // an untolerated NoExecute taint: leave
  // The unschedulable taint is tolerated: the cordon keeps nothing away.
  bool cordon_tolerated = false;
  // A NoExecute taint tolerated for a while stops being tolerated then.
  std::optional<TimePoint> changes_at;
};
TaintVerdict JudgeTaints(const std::vector<ClusterTaint>& taints,
                         std::span<const ClusterToleration> tolerations, TimePoint now);

// A placement.spreadConstraints entry by field (spreadByLabel is kept, not
// acted on).
struct SpreadConstraint {
  std::string field;  // cluster, region, zone or provider
  int64_t min_groups = 0;
  int64_t max_groups = 0;  // 0: no maximum
};

// A cluster the spread constraints choose among.
struct SpreadCandidate {
  std::string name;
  std::string group;   // its region, zone or provider, as the field constraint spreads by
  bool holds = false;  // the object is there already: kept before others
  std::optional<int64_t> available;  // room for the object's replicas; none: unknown
};

// The clusters `constraints` choose among `candidates`, as Karmada's
// scheduler chooses them: the clusters ranked (those holding the object
// first, then by room, then by name); with a region, zone or provider
// constraint, the fewest best groups (at least its minGroups, at most its
// maxGroups) that have the cluster constraint's minGroups of clusters
// between them, the best cluster of each, then the best others up to the
// cluster constraint's maxGroups; with the cluster constraint alone, its
// maxGroups best clusters, the one with the most room taking the place of
// the last when `need` replicas would not fit. Errors (Unavailable,
// with the reason): too few groups or clusters, or too little room.
StatusOr<std::vector<std::string>> SelectBySpread(std::span<const SpreadConstraint> constraints,
                                                  std::vector<SpreadCandidate> candidates,
                                                  std::optional<int64_t> need);

// placement.clusterAffinity, a staticWeightList entry's targetCluster and an
// override rule's targetCluster: every part given must admit the cluster,
// and `exclude` never does.
class ClusterAffinity {
 public:
  // Admits every cluster.
  ClusterAffinity() = default;
  // Reads a ClusterAffinity object. `path` prefixes the fields of errors
  // (Invalid with one cause per problem).
  static StatusOr<ClusterAffinity> FromJson(const json::value& affinity, std::string_view path);

  bool Matches(const ClusterFacts& cluster) const { return WhyNot(cluster) == nullptr; }
  bool Matches(const json::object& cluster) const { return Matches(ClusterFacts::Of(cluster)); }
  // Why `cluster` is not admitted ("excluded", "not in clusterNames", ...);
  // null when it is.
  const char* WhyNot(const ClusterFacts& cluster) const;

 private:
  std::optional<LabelSelector> labels_;
  std::vector<LabelRequirement> fields_;  // keys provider, region, zone
  std::vector<std::string> names_;
  std::vector<std::string> exclude_;
};

// How closely a resource selector matches an object (Karmada's implicit
// priority): by name beats by labels beats by kind alone.
enum class ImplicitPriority { kMismatch = 0, kAll = 1, kLabels = 2, kName = 3 };

// The object a policy is asked about.
struct ObjectRef {
  std::string_view api_version;  // "apps/v1"
  std::string_view kind;         // "Deployment"
  std::string_view ns;           // "" for cluster-scoped objects
  std::string_view name;
  const json::object* labels = nullptr;  // null: no labels

  // `obj`'s name, namespace and labels (the ref points into `obj`).
  static ObjectRef Of(const json::object& obj, std::string_view api_version, std::string_view kind);
};

struct ResourceSelector {
  std::string api_version;
  std::string kind;
  std::string ns;  // empty: any namespace
  std::string name;
  std::optional<LabelSelector> labels;

  ImplicitPriority Match(const ObjectRef& obj) const;
};

// A policy spec's resourceSelectors (a stored policy passed validation).
StatusOr<std::vector<ResourceSelector>> ReadResourceSelectors(const json::object& spec);

enum class ReplicaSchedulingType { kDuplicated, kDivided };
enum class DivisionPreference { kNone, kAggregated, kWeighted };

struct StaticWeight {
  ClusterAffinity target;
  int64_t weight = 1;
};

struct ReplicaScheduling {
  // Without placement.replicaScheduling every selected cluster runs all the
  // replicas, as in Karmada.
  ReplicaSchedulingType type = ReplicaSchedulingType::kDuplicated;
  DivisionPreference division = DivisionPreference::kNone;
  std::vector<StaticWeight> static_weights;
  bool dynamic_available_replicas = false;  // dynamicWeight: AvailableReplicas
};

// A PropagationPolicy or ClusterPropagationPolicy, as read from its object.
struct PropagationPolicy {
  bool cluster_scoped = false;
  std::string ns;  // the policy's namespace; empty for a cluster policy
  std::string name;
  std::string uid;
  int32_t priority = 0;
  bool preempt_always = false;
  std::vector<ResourceSelector> selectors;
  ClusterAffinity affinity;
  // placement.clusterAffinities, in order: the first group that can hold
  // the object is used instead of `affinity`.
  struct AffinityGroup {
    std::string name;
    ClusterAffinity affinity;
  };
  std::vector<AffinityGroup> affinity_groups;
  ReplicaScheduling scheduling;
  // placement.clusterTolerations.
  std::vector<ClusterToleration> tolerations;
  // placement.spreadConstraints (by field).
  std::vector<SpreadConstraint> spread;
  // The field a spread constraint other than the cluster one spreads by;
  // empty when none.
  std::string SpreadField() const;
  // Whether the spread constraints choose among the admitted clusters:
  // there are some, and the replicas are not divided by static weights
  // (Karmada ignores them then).
  bool Spreads() const;
  // conflictResolution: Overwrite takes over a member object of the same
  // name the federation did not create; Abort (the default) leaves it.
  bool overwrite_conflicts = false;
  // preserveResourcesOnDeletion: deleting the object keeps its member
  // copies.
  bool preserve_on_deletion = false;
  // propagateDeps: what the object's pod template uses (ConfigMaps,
  // Secrets, ServiceAccounts, PersistentVolumeClaims) goes where it goes.
  // Unset: Flotilla's default, which sends them; false (written so): they
  // go only where their own placement sends them, as in Karmada.
  std::optional<bool> propagate_deps;

  // The best match of its selectors for `obj`; a namespaced policy matches
  // only objects of its own namespace.
  ImplicitPriority Match(const ObjectRef& obj) const;
  // "ns/name" for a PropagationPolicy, "name" for a cluster policy.
  std::string Ref() const;
  // The static weight of `cluster` (the highest of the entries that select
  // it), 0 when none does.
  int64_t StaticWeightOf(const ClusterFacts& cluster) const;

  // Reads a validated policy object (a stored one passed ValidatePropagation).
  static StatusOr<PropagationPolicy> FromObject(const json::object& obj);
};

// Which policy places `obj`, as Karmada's detector chooses: a namespaced
// policy of the object's namespace before any cluster policy; among each,
// the highest explicit priority, then the closest selector match
// (ImplicitPriority), then the name that sorts first.
//
// `bound` is the policy that placed the object before (its Ref() and
// whether it is a cluster policy), empty when none did. While that policy
// still matches, the object stays with it unless the winner preempts it: a
// namespaced policy with preemption Always and a higher priority, or with
// preemption Always over a cluster policy; a cluster policy with preemption
// Always and a higher priority over a cluster policy.
struct Binding {
  std::string ref;
  bool cluster_scoped = false;
  bool empty() const { return ref.empty(); }
};
const PropagationPolicy* SelectPolicy(std::span<const PropagationPolicy* const> policies,
                                      const ObjectRef& obj, const Binding& bound = {});

// The binding recorded in an object's annotations (the federation writes
// them when it places an object by a policy).
Binding BindingOf(const json::object& obj);

// The validation of policy.karmada.io objects, with Karmada's rules and
// messages where it has them and the CRD schema's (enums, minimums)
// otherwise. `namespaced`: a PropagationPolicy (its resource selectors must
// name its own namespace) rather than a cluster policy.
std::vector<StatusCause> ValidatePropagation(const json::object& obj, bool namespaced);
std::vector<StatusCause> ValidateOverride(const json::object& obj, bool namespaced);
std::vector<StatusCause> ValidateFederatedResourceQuota(const json::object& obj);

// The fields of a propagation or override policy that the federation keeps
// but does not act on yet, one warning each (docs/policies.md lists them).
std::vector<std::string> PropagationWarnings(const json::object& obj);
std::vector<std::string> OverrideWarnings(const json::object& obj);
std::vector<std::string> FederatedResourceQuotaWarnings(const json::object& obj);

// The CRDs' defaults: conflictResolution Abort, preemption Never, priority
// 0, schedulerName default-scheduler, replicaSchedulingType Divided when
// replicaScheduling is given; a PropagationPolicy's resource selectors get
// its namespace (Karmada's mutating webhook) when `namespaced`.
void DefaultPropagation(json::object& obj, bool namespaced);

}  // namespace flotilla::api::policy
