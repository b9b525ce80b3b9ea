// Field-by-field conversions of HPA metric specs, metric statuses,
// conditions and behavior between the autoscaling/v1 annotation shapes and
// autoscaling/v2 (pkg/apis/autoscaling/v1/conversion.go and its generated
// counterpart). Keys come out in Go's struct field order. Internal to
// src/api/kinds.
#pragma once

#include <optional>

#include "base/json.h"

namespace flotilla::api::kinds {

json::object MetricSpecToV1(const json::object& v2);
json::object MetricSpecToV2(const json::object& v1);
json::object MetricStatusToV1(const json::object& v2);
json::object MetricStatusToV2(const json::object& v1);

// Conditions have the same fields in both versions; v1 writes an unset
// lastTransitionTime as null (Go's zero metav1.Time), v2 leaves it out.
json::object ConditionToV1(const json::object& c);
json::object ConditionToV2(const json::object& c);

// spec.behavior as json.Marshal writes Kubernetes' internal type: Go field
// names, null for unset pointers.
json::object BehaviorToInternalJson(const json::object& behavior);
// The v2 behavior in such JSON (field names matched case-insensitively, as
// Go's decoder does); nullopt when it is not an object or holds nothing.
std::optional<json::object> BehaviorFromInternalJson(const json::value& v);

}  // namespace flotilla::api::kinds
