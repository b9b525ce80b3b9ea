// Conditions as Kubernetes objects carry them: status.conditions, a list of
// {type, status, reason, message, ...} with at most one entry per type.
// Pure; thread-safe.
#pragma once

#include <string_view>

#include "base/json.h"

namespace flotilla::api {

// The condition `type` in `status` (an object's status), null when none.
const json::object* FindCondition(const json::object& status, std::string_view type);
// The same in `obj`'s status.
const json::object* ConditionOf(const json::object& obj, std::string_view type);
// Whether `obj` has the condition `type` with status "True".
bool ConditionTrue(const json::object& obj, std::string_view type);
// Sets `condition` in `status`: added, or replacing the one of its type
// when its status differs (one of the same status is kept as it is, with
// its transition time).
void SetCondition(json::object& status, json::object condition);

}  // namespace flotilla::api
