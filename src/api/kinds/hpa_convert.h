// HorizontalPodAutoscaler conversion between autoscaling/v1 and
// autoscaling/v2, as pkg/apis/autoscaling/v1/conversion.go does it (v2 is the
// internal shape). v1 holds one CPU utilization target; every v2 field it
// cannot hold travels in annotations:
//   autoscaling.alpha.kubernetes.io/metrics          other spec.metrics (v1 MetricSpec JSON)
//   autoscaling.alpha.kubernetes.io/current-metrics  status.currentMetrics (v1 MetricStatus JSON)
//   autoscaling.alpha.kubernetes.io/conditions       status.conditions
//   autoscaling.alpha.kubernetes.io/behavior         spec.behavior (Go field names, as
//                                                    Kubernetes marshals its internal type)
// Known Kubernetes asymmetries are kept: v1 -> v2 appends the CPU target
// after the annotated metrics, a v1 HPA without metrics gets CPU 80%, and
// required v1 quantities read as "0" when v2 had none. Internal to
// src/api/kinds.
#pragma once

#include <string_view>

#include "base/json.h"
#include "base/status.h"

namespace flotilla::api::kinds {

inline constexpr std::string_view kMetricsAnnotation = "autoscaling.alpha.kubernetes.io/metrics";
inline constexpr std::string_view kCurrentMetricsAnnotation =
    "autoscaling.alpha.kubernetes.io/current-metrics";
inline constexpr std::string_view kConditionsAnnotation =
    "autoscaling.alpha.kubernetes.io/conditions";
inline constexpr std::string_view kBehaviorAnnotation = "autoscaling.alpha.kubernetes.io/behavior";

// Converts `obj` to `to_version` ("v1" or "v2"). An object already at that
// version is returned as it is. BadRequest for another apiVersion or target.
StatusOr<json::object> ConvertHorizontalPodAutoscaler(json::object obj,
                                                      std::string_view to_version);

// The v2 HPA an autoscaling/v1 object converts to (annotations consumed,
// v2 defaults applied); malformed annotations are dropped as Kubernetes
// does.
json::object HpaV1ToV2(const json::object& v1);
// The autoscaling/v1 HPA a v2 object converts to.
json::object HpaV2ToV1(const json::object& v2);

// SetDefaults_HorizontalPodAutoscaler (v2): minReplicas 1, a CPU 80%
// utilization metric when there are none, and every unset field of a given
// behavior filled (scale up: 0s window, Max of 4 pods / 100% per 15s; scale
// down: Max of 100% per 15s, window left to the controller). Also drops the
// v1 round-trip annotations, which a v2 object never carries.
void DefaultHpaV2(json::object& obj);
// SetDefaults_HorizontalPodAutoscaler (v1): minReplicas 1.
void DefaultHpaV1(json::object& obj);

}  // namespace flotilla::api::kinds
