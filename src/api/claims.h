// PersistentVolumeClaims in use, as kube-controller-manager's
// pvc-protection controller (pkg/controller/volume/pvcprotection) and the
// StorageObjectInUseProtection admission see them: a claim carries the
// finalizer kubernetes.io/pvc-protection from its create, and is not
// removed while a pod uses it. Pure; thread-safe.
#pragma once

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

}  // namespace flotilla::api
