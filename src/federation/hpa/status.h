// A federated HPA's status from its local HPAs' (seed 004; docs/federation.md,
// "Federated HPAs"):
// - currentReplicas and desiredReplicas: the local HPAs' sums;
// - currentMetrics: per metric of the federated spec, the local values
//   averaged with each cluster's currentReplicas as its weight;
// - lastScaleTime: the latest of the locals';
// - conditions: AbleToScale (False while some local HPA cannot get its
//   target's scale, naming the cluster), ScalingActive (True while some
//   local HPA has a valid metric; False with no cluster to run one),
//   ScalingLimited (True when the desired replicas reach the federation-wide
//   maxReplicas), lastTransitionTime moving only when a status changes;
// - the per-cluster breakdown for the federation.kubernetes.io/hpa-status
//   annotation: min, max, current, desired, the load in percent of the
//   target, and whether the cluster's shares are frozen.
//
// Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/json.h"
#include "federation/hpa/partition.h"

namespace flotilla::federation::hpa {

struct LocalHpa {
  std::string cluster;
  Bounds shares;
  const json::object* local = nullptr;  // the local HPA as last seen; null: none yet
  bool frozen = false;
};

// The most demanding metric's current value over its target in `hpa`'s
// status (1.0: on target); none when no metric has both.
std::optional<double> LoadOf(const json::object& hpa);

// The federated HPA `fed`'s status (its previous one keeps the conditions'
// transition times).
json::object AggregateStatus(const json::object& fed, const std::vector<LocalHpa>& locals,
                             TimePoint now);

// {"clusters": {"a": {"minReplicas": 1, "maxReplicas": 4, "currentReplicas": 2,
//   "desiredReplicas": 2, "utilization": 85, "frozen": false}}}
std::string BreakdownAnnotation(const std::vector<LocalHpa>& locals);

}  // namespace flotilla::federation::hpa
