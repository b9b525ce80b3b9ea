// A federated StatefulSet's status (status.h).
#include "federation/statefulset/status.h"

#include "api/views.h"

namespace flotilla::federation::statefulset {

json::object AggregateStatus(const json::object& sts, std::span<const ClusterStatus> clusters,
                             const std::string& update_revision) {
  int64_t replicas = 0, ready = 0, available = 0, updated = 0, previous = 0;
  bool observed = true, complete = true;
  for (const ClusterStatus& c : clusters) {
    if (!c.reachable) continue;
    observed = observed && c.observed;
    complete = complete && c.rollout == ClusterRollout::kComplete;
    if (c.local == nullptr) continue;
    api::WorkloadView l(*c.local);
    replicas += l.status_replicas();
    ready += l.ready_replicas();
    available += l.available_replicas();
    if (c.on_template && l.Observed()) {
      updated += l.updated_replicas();
      previous += l.current_replicas() - l.updated_replicas();
    } else {
      previous += l.status_replicas();
    }
  }
  api::WorkloadView view(sts);
  const json::value* before = sts.if_contains("status");
  json::object status =
      before != nullptr && before->is_object() ? before->get_object() : json::object();
  status["replicas"] = replicas;
  status["readyReplicas"] = ready;
  status["availableReplicas"] = available;
  status["updatedReplicas"] = updated;
  std::string current(view.current_revision());
  if (complete || current.empty()) current = update_revision;
  status["currentRevision"] = current;
  status["updateRevision"] = update_revision;
  status["currentReplicas"] = current == update_revision ? updated : std::max<int64_t>(previous, 0);
  if (observed) status["observedGeneration"] = view.generation();
  return status;
}

std::string BreakdownAnnotation(const std::string& revision,
                                std::span<const ClusterStatus> clusters) {
  json::object out;
  for (const ClusterStatus& c : clusters) {
    const json::object none;
    api::WorkloadView l(c.local != nullptr ? *c.local : none);
    json::object entry{{"planned", c.planned}, {"reachable", c.reachable}};
    if (c.reachable) {
      entry["replicas"] = l.status_replicas();
      entry["ready"] = l.ready_replicas();
      entry["updated"] = c.on_template ? l.updated_replicas() : 0;
      entry["rollout"] = Name(c.rollout);
    }
    out[c.cluster] = std::move(entry);
  }
  return json::serialize(json::object{{"updateRevision", revision}, {"clusters", std::move(out)}});
}

}  // namespace flotilla::federation::statefulset
