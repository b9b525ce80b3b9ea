// A federated StatefulSet's status (status.h).
#include "federation/statefulset/status.h"

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
    const json::object& l = *c.local;
    replicas += IntAt(l, "status.replicas");
    ready += IntAt(l, "status.readyReplicas");
    available += IntAt(l, "status.availableReplicas");
    bool seen = IntAt(l, "status.observedGeneration") >= IntAt(l, "metadata.generation");
    if (c.on_template && seen) {
      updated += IntAt(l, "status.updatedReplicas");
      previous += IntAt(l, "status.currentReplicas") - IntAt(l, "status.updatedReplicas");
    } else {
      previous += IntAt(l, "status.replicas");
    }
  }
  const json::value* before = Find(sts, "status");
  json::object status =
      before != nullptr && before->is_object() ? before->get_object() : json::object();
  status["replicas"] = replicas;
  status["readyReplicas"] = ready;
  status["availableReplicas"] = available;
  status["updatedReplicas"] = updated;
  std::string current = StringAt(sts, "status.currentRevision");
  if (complete || current.empty()) current = update_revision;
  status["currentRevision"] = current;
  status["updateRevision"] = update_revision;
  status["currentReplicas"] = current == update_revision ? updated : std::max<int64_t>(previous, 0);
  if (observed) status["observedGeneration"] = IntAt(sts, "metadata.generation");
  return status;
}

std::string BreakdownAnnotation(const std::string& revision,
                                std::span<const ClusterStatus> clusters) {
  json::object out;
  for (const ClusterStatus& c : clusters) {
    const json::object none;
    const json::object& l = c.local != nullptr ? *c.local : none;
    json::object entry{{"planned", c.planned}, {"reachable", c.reachable}};
    if (c.reachable) {
      entry["replicas"] = IntAt(l, "status.replicas");
      entry["ready"] = IntAt(l, "status.readyReplicas");
      entry["updated"] = c.on_template ? IntAt(l, "status.updatedReplicas") : 0;
      entry["rollout"] = Name(c.rollout);
    }
    out[c.cluster] = std::move(entry);
  }
  return json::serialize(json::object{{"updateRevision", revision}, {"clusters", std::move(out)}});
}

}  // namespace flotilla::federation::statefulset
