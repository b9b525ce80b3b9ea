// Custom kinds that a customization explains (interpreted.h).
#include "federation/sync/interpreted.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "api/annotations.h"
#include "api/federated.h"
#include "api/views.h"
#include "planner/planner.h"
#include "planner/preferences.h"

namespace flotilla::federation::sync {
namespace {

using interpreter::Operation;

StatusOr<planner::Preferences> PreferencesOf(const json::object& obj) {
  std::string text = api::AnnotationAt(obj, api::kReplicaPreferencesAnnotation);
  if (text.empty()) return planner::Preferences::Default();
  return planner::ParsePreferences(text);
}

}  // namespace

Status PlanDivided(const interpreter::Customization& c, Check& check, const json::object& desired) {
  FLOTILLA_ASSIGN_OR_RETURN(interpreter::Replicas asked, interpreter::GetReplicas(c, check.obj));
  FLOTILLA_ASSIGN_OR_RETURN(planner::Preferences prefs, PreferencesOf(check.obj));
  std::vector<std::string> clusters;
  for (const Copy& copy : check.copies) clusters.push_back(copy.cluster());
  planner::PlanResult plan = planner::Plan(asked.replicas, clusters, {}, {}, check.key, prefs);
  for (Copy& copy : check.copies) {
    auto it = plan.plan.find(copy.cluster());
    int64_t n = it == plan.plan.end() ? 0 : it->second;
    if (n == 0) {
      copy.desired.reset();
      copy.remove = true;
      continue;
    }
    FLOTILLA_ASSIGN_OR_RETURN(json::object revised, interpreter::ReviseReplica(c, desired, n));
    copy.desired = std::move(revised);
  }
  return Status::Ok();
}

StatusOr<json::object> AggregatedStatus(const interpreter::Customization& c, const Check& check) {
  json::array items;
  for (const Copy& copy : check.copies) {
    if (!copy.Managed()) continue;
    const json::object& current = *copy.Current();
    json::object item{{"clusterName", copy.cluster()}, {"applied", true}};
    if (c.Has(Operation::kInterpretStatus)) {
      FLOTILLA_ASSIGN_OR_RETURN(json::value status, interpreter::ReflectStatus(c, current));
      item["status"] = std::move(status);
    } else if (const json::value* status = current.if_contains("status")) {
      item["status"] = *status;
    }
    if (c.Has(Operation::kInterpretHealth)) {
      FLOTILLA_ASSIGN_OR_RETURN(bool healthy, interpreter::InterpretHealth(c, current));
      item["health"] = healthy ? "Healthy" : "Unhealthy";
    } else {
      item["health"] = "Unknown";
    }
    items.push_back(std::move(item));
  }
  FLOTILLA_ASSIGN_OR_RETURN(json::object aggregated,
                            interpreter::AggregateStatus(c, check.obj, items));
  const json::object* status = GetObject(aggregated, "status");
  return status != nullptr ? *status : json::object();
}

}  // namespace flotilla::federation::sync
