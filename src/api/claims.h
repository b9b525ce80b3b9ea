// PersistentVolumeClaims in use, as kube-controller-manager's
// pvc-protection controller (pkg/controller/volume/pvcprotection) and the
// StorageObjectInUseProtection admission see them: a claim carries the
// finalizer kubernetes.io/pvc-protection from its create, and is not
// removed while a pod uses it. And the storage class a claim names, as
// the DefaultStorageClass admission and the volume controller read it.
// Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"

namespace flotilla::api {

inline constexpr std::string_view kClaimProtectionFinalizer = "kubernetes.io/pvc-protection";

// Whether `pod` (of the claim's namespace) uses the claim named `claim`, as
// podUsesPVC decides: the pod is scheduled (a kubelet may run it; one not
// yet scheduled will not start with a claim being deleted) and a
// persistentVolumeClaim volume names the claim, whatever the pod's phase
// (a finished pod holds its claim until the pod is deleted), or, while the
// pod has not Succeeded or Failed, an ephemeral volume's claim
// "<pod>-<volume>" is the claim.
bool PodUsesClaim(const json::object& pod, std::string_view claim);

// The claims `pod`'s volumes name: persistentVolumeClaim volumes' claims and
// ephemeral volumes' "<pod>-<volume>", in volume order.
std::vector<std::string> ClaimNames(const json::object& pod);

// Whether `storage_class` is its cluster's default: the annotation
// storageclass.kubernetes.io/is-default-class (or its beta form) "true".
bool IsDefaultStorageClass(const json::object& storage_class);

// The default class of `classes` (GetDefaultClass): of the default ones,
// the newest, then the first by name; nullopt when none is.
std::optional<std::string> DefaultClassName(const std::vector<const json::object*>& classes);

// The class `claim` asks for: the beta annotation
// volume.beta.kubernetes.io/storage-class, else spec.storageClassName
// ("" asks for no class: a pre-provisioned volume); nullopt when neither
// is set, which the DefaultStorageClass admission fills.
std::optional<std::string> ClaimClass(const json::object& claim);

}  // namespace flotilla::api
