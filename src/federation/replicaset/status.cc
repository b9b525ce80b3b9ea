// The federated ReplicaSet's status (status.h).
#include "federation/replicaset/status.h"

#include "federation/common/local_workload.h"

namespace flotilla::federation::replicaset {

json::object AggregateStatus(const json::object& frs, std::span<const LocalStatus> locals) {
  int64_t replicas = 0, fully_labeled = 0, ready = 0, available = 0;
  bool observed = true;
  for (const LocalStatus& l : locals) {
    replicas += l.replicas;
    fully_labeled += l.fully_labeled;
    ready += l.ready;
    available += l.available;
    observed = observed && l.observed;
  }
  const json::object* previous = GetObject(frs, "status");
  json::object status = previous != nullptr ? *previous : json::object();
  status["replicas"] = replicas;
  status["fullyLabeledReplicas"] = fully_labeled;
  status["readyReplicas"] = ready;
  status["availableReplicas"] = available;
  const json::value* generation = Find(frs, "metadata.generation");
  if (observed && generation != nullptr) status["observedGeneration"] = *generation;
  return status;
}

std::string BreakdownAnnotation(std::span<const LocalStatus> locals) {
  json::object clusters;
  for (const LocalStatus& l : locals) {
    if (!InBreakdown(l.planned, l.local, l.pending, l.estimated_capacity.has_value())) continue;
    json::object c{{"planned", l.planned},
                   {"current", l.replicas},
                   {"ready", l.ready},
                   {"unschedulable", l.pending}};
    if (l.estimated_capacity) c["estimatedCapacity"] = *l.estimated_capacity;
    clusters[l.cluster] = std::move(c);
  }
  return json::serialize(json::object{{"clusters", std::move(clusters)}});
}

}  // namespace flotilla::federation::replicaset
