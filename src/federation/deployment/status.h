// A federated Deployment's status, written so that `kubectl rollout status`,
// `get deploy` and `describe deploy` tell the truth across a rollout that
// goes one cluster at a time (seed 001, [R1]):
// - replicas, readyReplicas, availableReplicas, unavailableReplicas: the
//   local Deployments' sums, without the pods that wait for room in clusters
//   full for the workload (the placer's probes: they are in the breakdown,
//   and counting them would keep `rollout status` waiting for replicas the
//   federation knows cannot run there);
// - updatedReplicas: only the clusters whose local Deployment runs the
//   federation's current template and has observed it (clusters not
//   updated yet count 0), without those waiting pods either;
// - observedGeneration: the federated generation once the federation acted
//   on it and every local Deployment observed what the federation last
//   wrote to it; else it stays;
// - conditions as Kubernetes sets them: Available (MinimumReplicasAvailable
//   / MinimumReplicasUnavailable against spec.replicas - maxUnavailable) and
//   Progressing: DeploymentPaused while paused, ProgressDeadlineExceeded
//   (False) when a cluster's rollout failed, NewReplicaSetAvailable once
//   every cluster completed, else ReplicaSetUpdated, each message naming the
//   current shadow ReplicaSet and the cluster concerned;
// - collisionCount kept.
// The per-cluster breakdown goes into the annotation
// federation.kubernetes.io/deployment-status:
//   {"revision": "3", "clusters": {"a": {"planned": 3, "revision": "3",
//     "replicas": 3, "updated": 3, "ready": 3, "available": 3,
//     "unschedulable": 0, "rollout": "complete"}}}
//
// Pure: no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "base/clock.h"
#include "base/json.h"
#include "federation/deployment/rollout.h"

namespace flotilla::federation::deployment {

struct ClusterStatus {
  std::string cluster;
  int64_t planned = 0;
  // The managed local Deployment as last seen or written; null when none.
  const json::object* local = nullptr;
  bool on_template = false;  // it runs the federation's template
  ClusterRollout rollout = ClusterRollout::kWaiting;
  // The federated revision of the template it runs; "" when no shadow has it.
  std::string revision;
  int64_t pending = 0;      // pods waiting to be scheduled or created
  int64_t unscheduled = 0;  // of those, the pods that exist
  // The cluster is full for the workload: its unscheduled pods are the
  // probes (and the replicas no cluster can take), waiting for room.
  bool full = false;
  std::optional<int64_t> estimated_capacity;
  // It has what the federation wants and its controller observed that.
  bool observed = false;
};

// The status of `d` given its clusters; `shadow` names the current shadow
// ReplicaSet for the conditions' messages.
json::object AggregateStatus(const json::object& d, std::span<const ClusterStatus> clusters,
                             const std::string& shadow, TimePoint now);

// The breakdown annotation's JSON text: the clusters InBreakdown admits
// (federation/common/local_workload.h); one left out has no rollout either.
std::string BreakdownAnnotation(const std::string& revision,
                                std::span<const ClusterStatus> clusters);

}  // namespace flotilla::federation::deployment
