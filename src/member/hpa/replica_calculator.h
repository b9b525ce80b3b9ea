// The HPA's view of a workload's pods: the simulated metrics API (a
// workload's CPU demand spread over its ready pods) and Kubernetes' replica
// calculation for Resource metrics (pkg/controller/podautoscaler's
// ReplicaCalculator): pods are grouped into ready, unready (Pending, or not
// Ready for cpu) and ignored (being deleted, or Failed); usage is compared to
// the target over the ready pods; a change within the 10% tolerance is no
// change; on a scale-up unready pods count as using nothing, and a proposal
// that would reverse the direction is dropped. Errors carry Kubernetes'
// messages ("missing request for cpu in container app of Pod web-1").
// Pure functions; thread-safe. Internal to src/member/hpa.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "runtime/cache.h"

namespace flotilla::member::hpa {

inline constexpr double kTolerance = 0.1;

// Usage per pod name, in milli-units.
using PodMetrics = std::map<std::string, int64_t>;

// What the simulated metrics-server reports for `resource` over `pods`: a
// sample for every Running pod not being deleted. cpu: `demand_milli`
// spread evenly over the ready pods (the remainder of the division goes to
// the first ones, so the samples add up to the demand), unready pods use
// none. memory: every pod uses none. Any other resource: no samples.
PodMetrics SimulatedMetrics(const std::vector<runtime::ObjectPtr>& pods, std::string_view resource,
                            int64_t demand_milli);

// A Resource metric's target: exactly one of the two is set.
struct ResourceTarget {
  std::optional<int64_t> utilization;    // averageUtilization, percent of request
  std::optional<int64_t> average_milli;  // averageValue
};

struct ResourceProposal {
  int64_t replicas = 0;
  std::optional<int64_t> utilization;  // for Utilization targets
  int64_t average_milli = 0;           // mean usage of the pods measured
};

// GetResourceReplicas and GetRawResourceReplicas. `pods` match the target's
// selector in the HPA's namespace. The error is the message Kubernetes
// wraps in "failed to get cpu utilization: ..." (or "... usage: ...").
StatusOr<ResourceProposal> ResourceReplicas(int64_t current_replicas, const ResourceTarget& target,
                                            std::string_view resource, const PodMetrics& metrics,
                                            const std::vector<runtime::ObjectPtr>& pods);

// A pod counts as ready when it is Running with condition Ready True and is
// not being deleted.
bool IsPodReady(const json::object& pod);

}  // namespace flotilla::member::hpa
