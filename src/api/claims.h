// PersistentVolumeClaims in use, as kube-controller-manager's
// pvc-protection controller (pkg/controller/volume/pvcprotection) and the
// StorageObjectInUseProtection admission see them: a claim carries the
// finalizer kubernetes.io/pvc-protection from its create, and is not
// removed while a pod uses it. Pure; thread-safe.
#pragma once

#include <string_view>

#include "base/json.h"

namespace flotilla::api {

inline constexpr std::string_view kClaimProtectionFinalizer = "kubernetes.io/pvc-protection";

// Whether `pod` (of the claim's namespace) uses the claim named `claim`: it
// has not Succeeded or Failed, and a volume names the claim (a
// persistentVolumeClaim volume, or an ephemeral one, whose claim is
// "<pod>-<volume>").
bool PodUsesClaim(const json::object& pod, std::string_view claim);

}  // namespace flotilla::api
