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

}  // namespace flotilla::api::kinds
