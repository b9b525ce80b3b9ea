// A StatefulSet pod's identity and storage, as the StatefulSet controller
// gives them (pkg/controller/statefulset/stateful_set_utils.go): the pod
// "<set>-<ordinal>" with hostname and subdomain, the identity labels and a
// controller ownerReference; its claims "<template>-<set>-<ordinal>" made
// from the volumeClaimTemplates, which the pod's volumes reference.
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/json.h"

namespace flotilla::member::statefulset {

inline constexpr std::string_view kPodNameLabel = "statefulset.kubernetes.io/pod-name";
inline constexpr std::string_view kPodIndexLabel = "apps.kubernetes.io/pod-index";
inline constexpr std::string_view kRevisionLabel = "controller-revision-hash";

// The ordinal of a pod named "<set>-<n>", or nullopt for any other name.
std::optional<int> OrdinalOf(std::string_view set_name, std::string_view pod_name);

std::string PodName(std::string_view set_name, int ordinal);
std::string ClaimName(std::string_view claim_template, std::string_view set_name, int ordinal);

// The pod for `ordinal` from `set`'s template, labelled with `revision` (the
// ControllerRevision's name).
json::object NewPod(const json::object& set, int ordinal, const std::string& revision);

// The claims of the pod with `ordinal`, one per volumeClaimTemplate: the
// template's spec and labels plus the set's selector matchLabels. With
// persistentVolumeClaimRetentionPolicy.whenDeleted Delete they are owned by
// the set, so the garbage collector removes them with it.
std::vector<json::object> NewClaims(const json::object& set, int ordinal);

// The controller ownerReference to `set` its pods (and owned claims) carry.
json::object ControllerRef(const json::object& set);

// Whether `obj` has a controller ownerReference.
bool HasController(const json::object& obj);

// "namespace/name" of the apps StatefulSet controlling `pod`, "" for none.
std::string OwnerSetKey(const json::object& pod);

// The pod's revision label ("" when absent).
std::string RevisionOf(const json::object& pod);

}  // namespace flotilla::member::statefulset
