// policy/v1 PodDisruptionBudgets as kube-apiserver's eviction subresource
// and kube-controller-manager's disruption controller read and write them
// (pkg/registry/core/pod/storage/eviction.go, pkg/controller/disruption).
// Pure; thread-safe.
#pragma once

#include "base/clock.h"
#include "base/json.h"

namespace flotilla::api {

// Whether budget `pdb` covers `pod` (same namespace assumed): its
// spec.selector matches the pod's labels. In policy/v1 an empty selector
// selects every pod of the namespace; a null or invalid one selects none.
bool BudgetSelects(const json::object& pdb, const json::object& pod);

// Sets the DisruptionAllowed condition of a budget's `status` from its
// disruptionsAllowed, as pdbhelper.UpdateDisruptionAllowedCondition does:
// True (SufficientPods) when above zero, else False (InsufficientPods);
// the transition time moves only when the status changes.
void SetDisruptionAllowedCondition(json::object& status, TimePoint now);

// The same condition False with reason SyncFailed and `message`: a budget
// the controller could not compute (its pods have no controller to scale
// a percentage by).
void SetSyncFailedCondition(json::object& status, std::string_view message, TimePoint now);

}  // namespace flotilla::api
