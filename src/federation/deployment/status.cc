// A federated Deployment's status (status.h).
#include "federation/deployment/status.h"

#include <algorithm>

#include "api/deployment/deployment_util.h"
#include "api/views.h"
#include "federation/common/local_workload.h"

namespace flotilla::federation::deployment {
namespace {

namespace apps = api::deployment;

struct Sums {
  int64_t replicas = 0, updated = 0, ready = 0, available = 0, unavailable = 0;
};

Sums Sum(std::span<const ClusterStatus> clusters) {
  Sums s;
  for (const ClusterStatus& c : clusters) {
    if (c.local == nullptr) continue;
    // In a full cluster the waiting pods are left out.
    int64_t waiting = c.full ? c.unscheduled : 0;
    auto less_waiting = [&](int64_t n) { return std::max<int64_t>(0, n - waiting); };
    api::WorkloadView local(*c.local);
    s.replicas += less_waiting(local.status_replicas());
    s.ready += local.ready_replicas();
    s.available += local.available_replicas();
    s.unavailable += less_waiting(local.unavailable_replicas());
    if (c.on_template && local.Observed()) s.updated += less_waiting(local.updated_replicas());
  }
  return s;
}

// The Progressing condition: reason and message.
std::pair<std::string_view, std::string> Progress(const json::object& d,
                                                  std::span<const ClusterStatus> clusters,
                                                  const std::string& shadow, const Sums& s) {
  std::string rs = "ReplicaSet \"" + shadow + "\"";
  for (const ClusterStatus& c : clusters) {
    if (c.rollout == ClusterRollout::kFailed) {
      return {apps::kTimedOutReason, rs + " has timed out progressing in cluster " + c.cluster +
                                         "; no further cluster is updated."};
    }
  }
  bool complete =
      s.updated == apps::Replicas(d) && s.replicas == s.updated && s.available == s.updated;
  for (const ClusterStatus& c : clusters) {
    complete = complete && c.rollout == ClusterRollout::kComplete;
  }
  if (complete) return {apps::kNewRSAvailableReason, rs + " has successfully progressed."};
  std::string where;
  for (const ClusterStatus& c : clusters) {
    if (c.rollout == ClusterRollout::kUpdating) where += (where.empty() ? "" : ", ") + c.cluster;
  }
  return {apps::kReplicaSetUpdatedReason,
          rs + " is progressing" + (where.empty() ? "." : " in cluster " + where + ".")};
}

}  // namespace

json::object AggregateStatus(const json::object& d, std::span<const ClusterStatus> clusters,
                             const std::string& shadow, TimePoint now) {
  Sums s = Sum(clusters);
  const json::value* previous = Find(d, "status");
  json::object status =
      previous != nullptr && previous->is_object() ? previous->get_object() : json::object();
  status["replicas"] = s.replicas;
  status["updatedReplicas"] = s.updated;
  status["readyReplicas"] = s.ready;
  status["availableReplicas"] = s.available;
  status["unavailableReplicas"] = s.unavailable;
  bool observed = true;
  for (const ClusterStatus& c : clusters) observed = observed && c.observed;
  if (observed) status["observedGeneration"] = api::ObjectView(d).generation();

  int64_t min_available = apps::Replicas(d) - apps::MaxUnavailable(d);
  if (s.available >= min_available) {
    apps::SetCondition(status,
                       apps::NewCondition("Available", "True", apps::kMinimumReplicasAvailable,
                                          "Deployment has minimum availability.", now));
  } else {
    apps::SetCondition(status,
                       apps::NewCondition("Available", "False", apps::kMinimumReplicasUnavailable,
                                          "Deployment does not have minimum availability.", now));
  }
  if (Paused(d)) {
    apps::SetCondition(status, apps::NewCondition("Progressing", "Unknown", apps::kPausedReason,
                                                  "Deployment is paused", now));
  } else {
    auto [reason, message] = Progress(d, clusters, shadow, s);
    bool failed = reason == apps::kTimedOutReason;
    apps::SetCondition(
        status, apps::NewCondition("Progressing", failed ? "False" : "True", reason, message, now));
  }
  return status;
}

std::string BreakdownAnnotation(const std::string& revision,
                                std::span<const ClusterStatus> clusters) {
  json::object out;
  for (const ClusterStatus& c : clusters) {
    if (!InBreakdown(c.planned, c.local != nullptr, c.pending, c.estimated_capacity.has_value())) {
      continue;
    }
    const json::object empty;
    api::WorkloadView local(c.local != nullptr ? *c.local : empty);
    json::object entry{{"planned", c.planned},
                       {"revision", c.revision},
                       {"replicas", local.status_replicas()},
                       {"updated", c.on_template ? local.updated_replicas() : 0},
                       {"ready", local.ready_replicas()},
                       {"available", local.available_replicas()},
                       {"unschedulable", c.pending},
                       {"rollout", Name(c.rollout)}};
    if (c.estimated_capacity) entry["estimatedCapacity"] = *c.estimated_capacity;
    out[c.cluster] = std::move(entry);
  }
  return json::serialize(json::object{{"revision", revision}, {"clusters", std::move(out)}});
}

}  // namespace flotilla::federation::deployment
