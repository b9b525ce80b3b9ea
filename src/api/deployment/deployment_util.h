// The Deployment controller's pure rules, as pkg/controller/deployment/util
// states them: the pod-template hash, maxSurge and maxUnavailable,
// revisions and the annotations a Deployment's ReplicaSets carry, and the
// Progressing and Available conditions. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/json.h"

namespace flotilla::api::deployment {

inline constexpr std::string_view kHashLabel = "pod-template-hash";
inline constexpr std::string_view kRevisionAnnotation = "deployment.kubernetes.io/revision";
inline constexpr std::string_view kRevisionHistoryAnnotation =
    "deployment.kubernetes.io/revision-history";
inline constexpr std::string_view kDesiredReplicasAnnotation =
    "deployment.kubernetes.io/desired-replicas";
inline constexpr std::string_view kMaxReplicasAnnotation = "deployment.kubernetes.io/max-replicas";
// Longest revision-history annotation kept (kube's MaxRevHistoryLengthInChars).
inline constexpr size_t kMaxRevisionHistoryChars = 2000;

// Condition reasons (util.*Reason).
inline constexpr std::string_view kNewRSReason = "NewReplicaSetCreated";
inline constexpr std::string_view kFoundNewRSReason = "FoundNewReplicaSet";
inline constexpr std::string_view kReplicaSetUpdatedReason = "ReplicaSetUpdated";
inline constexpr std::string_view kNewRSAvailableReason = "NewReplicaSetAvailable";
inline constexpr std::string_view kTimedOutReason = "ProgressDeadlineExceeded";
inline constexpr std::string_view kPausedReason = "DeploymentPaused";
inline constexpr std::string_view kResumedReason = "DeploymentResumed";
inline constexpr std::string_view kFailedRSCreateReason = "ReplicaSetCreateError";
inline constexpr std::string_view kMinimumReplicasAvailable = "MinimumReplicasAvailable";
inline constexpr std::string_view kMinimumReplicasUnavailable = "MinimumReplicasUnavailable";

// A ReplicaSet being worked on: a private, mutable copy.
using Rs = std::shared_ptr<json::object>;

// The pod-template hash of a Deployment's template. Kubernetes hashes the
// template as Go's deep-hash printer writes it; we hash the template's
// canonical JSON (keys sorted) with FNV-32a, then the collision count as
// kube does (4 little-endian bytes in an 8-byte buffer), and render the
// decimal value with SafeEncodeString (each digit mapped into
// "bcdfghjklmnpqrstvwxz2456789"). Stable across restarts and processes.
std::string ComputeHash(const json::object& pod_template, std::optional<int64_t> collision_count);
// The two pod templates are equal once the pod-template-hash label is
// removed (null, empty objects and empty arrays count as absent).
bool EqualIgnoreHash(const json::object& a, const json::object& b);

// An int-or-percent scaled against `total` (percentages round up or down).
int64_t ScaledValue(const json::value* int_or_percent, int64_t total, bool round_up);
// maxSurge and maxUnavailable of a RollingUpdate Deployment (both 0 for
// Recreate); if both resolve to 0, maxUnavailable is 1.
int64_t MaxSurge(const json::object& d);
// Capped at spec.replicas.
int64_t MaxUnavailable(const json::object& d);
int64_t Replicas(const json::object& obj);  // spec.replicas
bool IsRollingUpdate(const json::object& d);

// deployment.kubernetes.io/revision (0 when absent or not a number).
int64_t Revision(const json::object& obj);
// Annotations of a Deployment's new ReplicaSet: the Deployment's own
// (except kubectl's last-applied and the deployment.kubernetes.io ones),
// the revision (moving the old one into revision-history when an old
// ReplicaSet becomes new again) and, when `exists` is false, the replica
// annotations. Returns whether anything changed.
bool SetNewReplicaSetAnnotations(const json::object& d, json::object& rs,
                                 const std::string& new_revision, bool exists);
// desired-replicas and max-replicas; returns whether they changed.
bool SetReplicasAnnotations(json::object& rs, int64_t desired, int64_t max);
bool ReplicasAnnotationsNeedUpdate(const json::object& rs, int64_t desired, int64_t max);
std::optional<int64_t> IntAnnotation(const json::object& obj, std::string_view key);

// ---- Counting over ReplicaSets (null entries are skipped). ----
// Sum of spec.replicas (GetReplicaCountForReplicaSets).
int64_t SpecReplicas(const std::vector<Rs>& rss);
// Sum of status.<field> ("replicas", "readyReplicas", "availableReplicas").
int64_t StatusSum(const std::vector<Rs>& rss, std::string_view field);
// Those with spec.replicas > 0 (FilterActiveReplicaSets).
std::vector<Rs> Active(const std::vector<Rs>& rss);
// How many replicas a new ReplicaSet may have now (NewRSNewReplicas):
// Recreate all; RollingUpdate as many as maxSurge leaves room for.
int64_t NewRSNewReplicas(const json::object& d, const std::vector<Rs>& all,
                         const json::object& new_rs);
// The new ReplicaSet runs every replica, available (IsSaturated).
bool IsSaturated(const json::object& d, const Rs& rs);
// The only active ReplicaSet, or the newest when none is active; null when
// several are active (FindActiveOrLatest).
Rs FindActiveOrLatest(const Rs& new_rs, std::vector<Rs> old_rss);
// How many replicas `rs` gains (or loses) when a Deployment is resized by
// `to_add` of which `added` are given out already (getProportion).
int64_t Proportion(const json::object& d, const json::object& rs, int64_t to_add, int64_t added);
// creationTimestamp, then name.
bool CreatedBefore(const Rs& a, const Rs& b);

// ---- Conditions (status.conditions of a Deployment). ----
const json::object* GetCondition(const json::object& status, std::string_view type);
json::object NewCondition(std::string_view type, std::string_view status, std::string_view reason,
                          std::string_view message, TimePoint now);
// util.SetDeploymentCondition: no change when status and reason are the same;
// keeps lastTransitionTime when only the reason changes.
void SetCondition(json::object& status, json::object condition);
void RemoveCondition(json::object& status, std::string_view type);

// spec.progressDeadlineSeconds is set (and not MaxInt32).
bool HasProgressDeadline(const json::object& d);
// util.DeploymentComplete, DeploymentProgressing, DeploymentTimedOut.
bool DeploymentComplete(const json::object& d, const json::object& status);
bool DeploymentProgressing(const json::object& d, const json::object& status);
bool DeploymentTimedOut(const json::object& d, const json::object& status, TimePoint now);

}  // namespace flotilla::api::deployment
