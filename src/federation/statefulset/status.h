// A federated StatefulSet's status, summed over its local StatefulSets so
// that `kubectl get sts` and `kubectl rollout status sts/NAME` read the
// federation-wide truth across a rollout that goes cluster by cluster:
// - replicas, readyReplicas, availableReplicas: sums over the reachable
//   clusters (an unreachable one counts nothing until it returns);
// - updatedReplicas: only the clusters on the federation's template that
//   observed it; currentReplicas: the replicas still on the previous
//   template (all of them once every cluster completed);
// - updateRevision: the federation's ControllerRevision of the current
//   template; currentRevision: the same once every reachable cluster
//   completed its rollout, else the one before (what rollout status waits
//   on);
// - observedGeneration: the federated generation once every reachable
//   local StatefulSet has what the federation wants and observed it;
// - collisionCount kept.
// The breakdown annotation federation.kubernetes.io/statefulset-status:
//   {"updateRevision": "store-5d8c7", "clusters": {"c1": {"planned": 4,
//     "reachable": true, "replicas": 4, "ready": 4, "updated": 4,
//     "rollout": "complete"}}}
// An unreachable cluster keeps its entry (and so its share, which the next
// check reads back as "planned").
//
// Pure: no I/O.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "base/json.h"
#include "federation/common/rollout.h"

namespace flotilla::federation::statefulset {

struct ClusterStatus {
  std::string cluster;
  int64_t planned = 0;
  bool reachable = false;
  // The managed local StatefulSet as last seen or written; null when none.
  const json::object* local = nullptr;
  bool on_template = false;
  ClusterRollout rollout = ClusterRollout::kComplete;
  bool observed = false;  // it has what the federation wants and observed it
};

json::object AggregateStatus(const json::object& sts, std::span<const ClusterStatus> clusters,
                             const std::string& update_revision);

std::string BreakdownAnnotation(const std::string& revision,
                                std::span<const ClusterStatus> clusters);

}  // namespace flotilla::federation::statefulset
