// The HPA's status as the controller writes it (autoscaling/v2 shape, keys
// in Go's field order): conditions set as Kubernetes' setCondition sets
// them (lastTransitionTime moves only when the status changes) and the
// status rebuilt after each sync (setStatus). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/json.h"

namespace flotilla::api::hpa {

// Sets condition `type` in status.conditions (added at the end when absent).
void SetCondition(json::object& status, std::string_view type, bool value, std::string_view reason,
                  std::string_view message, TimePoint now);

// The status after a sync: `working` holds the conditions set during it and
// the previous lastScaleTime and desiredReplicas; `metrics` is an array of
// MetricStatus (null or empty for none); `rescaled` sets lastScaleTime to
// `now`. `generation` <= 0 leaves observedGeneration out.
json::object BuildStatus(const json::object& working, int64_t generation, int64_t current,
                         int64_t desired, const json::value& metrics, bool rescaled, TimePoint now);

// The desiredReplicas of a status (0 when absent).
int64_t DesiredReplicasOf(const json::object& status);

}  // namespace flotilla::api::hpa
