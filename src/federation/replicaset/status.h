// The federated ReplicaSet's status (seed 000, "Monitoring and status
// reporting"): the local ReplicaSets' counts summed, and a per-cluster
// breakdown for the annotation federation.kubernetes.io/replica-set-status:
//
//   {"clusters": {"A": {"planned": 16, "current": 16, "ready": 16,
//                        "unschedulable": 0},
//                 "C": {"planned": 8, "current": 8, "ready": 6,
//                        "unschedulable": 2, "estimatedCapacity": 6}}}
//
// Pure: no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "base/json.h"

namespace flotilla::federation::replicaset {

struct LocalStatus {
  std::string cluster;
  int64_t planned = 0;  // what the federation wants there (probes included)
  // The local ReplicaSet's status (0 when there is none).
  int64_t replicas = 0;
  int64_t fully_labeled = 0;
  int64_t ready = 0;
  int64_t available = 0;
  int64_t pending = 0;  // pods waiting to be scheduled or created
  std::optional<int64_t> estimated_capacity;
  bool local = false;  // a local ReplicaSet the federation manages exists
  // The local ReplicaSet exists with the spec the federation wants and its
  // controller has observed that spec.
  bool observed = false;
};

// The status of `frs` given its local ReplicaSets: the counts summed;
// observedGeneration is the federated object's generation when every local
// ReplicaSet observed its current spec, else the previous value.
json::object AggregateStatus(const json::object& frs, std::span<const LocalStatus> locals);

// The per-cluster breakdown, as the annotation's JSON text: the clusters
// InBreakdown admits (federation/common/local_workload.h).
std::string BreakdownAnnotation(std::span<const LocalStatus> locals);

}  // namespace flotilla::federation::replicaset
