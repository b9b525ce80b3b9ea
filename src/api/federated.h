// Names that mark federated objects and their member copies (DESIGN §3),
// shared by the API server (deletion), the federation controllers and the
// CLI. docs/federation.md describes what each means to a user.
#pragma once

#include <cstddef>

namespace flotilla::api {

// The federation's annotation domains. An annotation in them on a federated
// object steers the federation and is never copied to a member
// (federation/common/member_copy.h); the federation itself writes a few on
// member copies (federated-object, desired-hash).
inline constexpr char kFederationAnnotationDomain[] = "federation.kubernetes.io/";
inline constexpr char kFederationAlphaAnnotationDomain[] = "federation.alpha.kubernetes.io/";

// The label on every object the federation creates in a member. The
// federation never updates or deletes a member object without it.
inline constexpr char kManagedByLabel[] = "federation.kubernetes.io/managed-by";
inline constexpr char kManagedByValue[] = "flotilla";
// The field manager (and User-Agent) of the federation's controllers: what
// they write, on the federation and in the members, is theirs under this
// name in metadata.managedFields.
inline constexpr char kFederationFieldManager[] = "flotilla-federation";
// On a member copy: the federated object it was made from, as
// "<namespace>/<name>" ("<name>" for cluster-scoped kinds).
inline constexpr char kFederatedObjectAnnotation[] = "federation.kubernetes.io/federated-object";

// On a member copy: a hash of what the federation wanted the copy to be
// when it last wrote it (its labels, its annotations that the federation
// sets, and the kind's content: spec, data, ...). A copy whose hash is the
// one the federation wants now was written for exactly that; the
// federation then only looks for edits made in the member
// (federation/common/copy_versions.h).
inline constexpr char kDesiredHashAnnotation[] = "federation.kubernetes.io/desired-hash";

// Which member clusters receive a federated object: a JSON list of
// {key, operator, values} over Cluster labels (federation/cluster_selector.h).
inline constexpr char kClusterSelectorAnnotation[] =
    "federation.alpha.kubernetes.io/cluster-selector";

// Placement preferences (a planner::Preferences document, seed 000) of a
// federated ReplicaSet and of a federated Deployment.
inline constexpr char kReplicaSetPreferencesAnnotation[] =
    "federation.kubernetes.io/replica-set-preferences";
inline constexpr char kDeploymentPreferencesAnnotation[] =
    "federation.kubernetes.io/deployment-preferences";

// Placement preferences of a federated StatefulSet (the same document; seed
// 002 leaves them for later, Flotilla takes them).
inline constexpr char kStatefulSetPreferencesAnnotation[] =
    "federation.kubernetes.io/statefulset-preferences";
// On a federated StatefulSet: "true" gives every stateful pod a Service of
// type LoadBalancer of its own name in its cluster (seed 002); synchronized
// onto its governing headless Service.
inline constexpr char kStatefulSetLbNeededAnnotation[] =
    "federation.kubernetes.io/statefulset-lb-needed";
// On a federated StatefulSet's governing headless Service: every stateful
// pod's name, comma-separated (seed 002), for the federation's DNS.
inline constexpr char kStatefulReplicaListAnnotation[] =
    "federation.kubernetes.io/stateful-replica-list";
// On a federated StatefulSet: the per-cluster breakdown of its replicas.
inline constexpr char kStatefulSetStatusAnnotation[] =
    "federation.kubernetes.io/statefulset-status";
// On a federated Job: per cluster, the completions it runs and has run.
inline constexpr char kJobStatusAnnotation[] = "federation.kubernetes.io/job-status";
// On a federated DaemonSet: its per-cluster counts and rollout.
inline constexpr char kDaemonSetStatusAnnotation[] = "federation.kubernetes.io/daemonset-status";
// The per-cluster breakdowns of the kinds listed beside the workloads
// (federation/overview): a PodDisruptionBudget's desired ("planned") and
// current ("ready") healthy pods in each cluster; an Ingress's copies,
// ready once given an address; a claim's copies, ready once Bound.
inline constexpr char kDisruptionStatusAnnotation[] = "federation.kubernetes.io/pdb-status";
inline constexpr char kIngressStatusAnnotation[] = "federation.kubernetes.io/ingress-status";
inline constexpr char kClaimStatusAnnotation[] = "federation.kubernetes.io/pvc-status";
// A StatefulSet's name may have at most this many characters (its pods'
// controller-revision-hash label appends a hash to it); a federated
// StatefulSet's local ones are named <name>-<cluster>.
inline constexpr size_t kMaxStatefulSetNameLength = 52;

// On a federated object whose member copies override policies change: the
// policies that apply in each cluster, {"east": ["ClusterOverridePolicy
// mirror", "OverridePolicy shop/east-settings"], ...} in the order they
// apply (kubectl describe shows it). Absent when none applies.
inline constexpr char kOverridesAnnotation[] = "federation.kubernetes.io/overrides";

// Placement preferences of a federated HorizontalPodAutoscaler (the same
// document; per seed 004 only minReplicas and maxReplicas bound a cluster's
// share, and weights order the choice of clusters).
inline constexpr char kHpaPreferencesAnnotation[] = "federation.kubernetes.io/hpa-preferences";
// On a federated HPA: the per-cluster breakdown of its shares and its local
// HPAs' state (federation/hpa/status.h).
inline constexpr char kHpaStatusAnnotation[] = "federation.kubernetes.io/hpa-status";
// On a federated Deployment or ReplicaSet while a federated HPA scales it:
// the HPA and the clusters it chose, {"hpa": "<name>", "clusters": [...]}.
// The target then runs in exactly those clusters, with the replicas their
// local HPAs set (seed 004); its own preferences are overridden.
inline constexpr char kHpaTargetClusterListAnnotation[] =
    "federation.kubernetes.io/hpa-target-cluster-list";

// On any federated object: the one cluster it goes to (by the Cluster's
// name), besides what the cluster selector says.
inline constexpr char kPlacementClusterAnnotation[] = "federation.kubernetes.io/cluster";

// On a pod of the federation's view of its members' pods: the member it
// runs in (docs/federation.md, "The members' pods").
inline constexpr char kMemberClusterLabel[] = "federation.kubernetes.io/cluster";

// On a federated ReplicaSet: the per-cluster breakdown of its replicas
// (federation/replicaset/status.h).
inline constexpr char kReplicaSetStatusAnnotation[] = "federation.kubernetes.io/replica-set-status";

// On a federated object of a custom kind whose interpreter customization
// gives it replicas: its placement preferences (planner/preferences.h),
// as replica-set-preferences are a ReplicaSet's (docs/interpreter.md).
inline constexpr char kReplicaPreferencesAnnotation[] =
    "federation.kubernetes.io/replica-preferences";
// On a federated object of a kind federated whole (a custom kind): the
// status of each managed copy, as JSON {"<cluster>": <status>, ...} in
// cluster order (federation/sync/kinds.h).
inline constexpr char kStatusByClusterAnnotation[] = "federation.kubernetes.io/status-by-cluster";

// On a federated Deployment: the clusters to update first, in order, as a
// comma-separated list of names (seed 001); the rest follow alphabetically.
inline constexpr char kClusterUpdateOrderAnnotation[] =
    "federation.kubernetes.io/cluster-update-order";
// On a federated Deployment: the per-cluster breakdown of its rollout
// (federation/deployment/status.h).
inline constexpr char kDeploymentStatusAnnotation[] = "federation.kubernetes.io/deployment-status";
// On a federated ReplicaSet: "true" makes it a shadow of a federated
// Deployment's pod template (seed 001). A shadow never writes to a member;
// its Deployment's controller keeps its counts as the members' sums.
inline constexpr char kShadowReplicaSetAnnotation[] = "federation.kubernetes.io/shadow-replicaset";
// On a shadow: the name of its federated Deployment (found even when the
// garbage collector has stripped the owner reference of an orphaning
// delete).
inline constexpr char kShadowOfLabel[] = "federation.kubernetes.io/shadow-of";

// Federated Deployments and ReplicaSets of one namespace with the same
// value of this label form an application (seed 003, location affinity).
inline constexpr char kApplicationLabel[] = "federation.kubernetes.io/application";
// An application's class: kStrictlyDecoupled (the default: any replica
// anywhere), kPreferentiallyCoupled or kStrictlyCoupled (all of it in one
// cluster). The workloads of one application must agree.
inline constexpr char kLocationAffinityAnnotation[] = "federation.kubernetes.io/location-affinity";
inline constexpr char kStrictlyDecoupled[] = "strictly-decoupled";
inline constexpr char kPreferentiallyCoupled[] = "preferentially-coupled";
inline constexpr char kStrictlyCoupled[] = "strictly-coupled";
// On a workload of a coupled application: a daily window "HH:MM-HH:MM"
// (UTC) outside which the federation does not start a move that is not a
// failover.
inline constexpr char kMigrationWindowAnnotation[] = "federation.kubernetes.io/migration-window";
// On a workload of a coupled application: the name of another application
// of the namespace whose clusters, and their zones, it stays out of.
inline constexpr char kAntiAffinityAnnotation[] = "federation.kubernetes.io/anti-affinity";
// On a workload of a coupled application: the cluster a person asked it to
// move to (`kubectl flotilla migrate`).
inline constexpr char kMigrateToAnnotation[] = "federation.kubernetes.io/migrate-to";

// Held by a federated object until its member copies are dealt with as its
// deletion asked.
inline constexpr char kDeleteFromUnderlyingClustersFinalizer[] =
    "federation.kubernetes.io/delete-from-underlying-clusters";
// Written by the API server when it marks an object that holds
// kDeleteFromUnderlyingClustersFinalizer for deletion: the DELETE's
// propagation policy, "Orphan" when it named none (the seeds' safe
// default), "Background" or "Foreground". Orphan keeps the member copies;
// the others delete them.
inline constexpr char kDeletionPropagationAnnotation[] =
    "federation.kubernetes.io/deletion-propagation";

}  // namespace flotilla::api
