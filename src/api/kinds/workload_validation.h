// Validation of apps/v1 ReplicaSet, Deployment and StatefulSet, as
// pkg/apis/apps/validation and the apps registry strategies do it. `old` is
// the stored object on update, null on create. Internal to src/api/kinds.
#pragma once

#include "api/kinds/util.h"

namespace flotilla::api::kinds {

Causes ValidateReplicaSet(const json::object& obj, const json::object* old);
Causes ValidateDeployment(const json::object& obj, const json::object* old);
Causes ValidateStatefulSet(const json::object& obj, const json::object* old);
Causes ValidateDaemonSet(const json::object& obj, const json::object* old);

// An intstr.IntOrString: %#v of it (how messages print one), the number of
// a valid "NN%" string, the int or the percentage's number (0 otherwise),
// and ValidatePositiveIntOrPercent's check of it at `path` (a valid percent
// string or a non-negative int).
std::string GoIntOrString(const json::value& v);
std::optional<int64_t> Percent(const json::value& v);
int64_t IntOrPercentValue(const json::value& v);
void CheckIntOrPercent(const json::value& v, const std::string& path, Causes& out);

}  // namespace flotilla::api::kinds
