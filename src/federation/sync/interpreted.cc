// Custom kinds that a customization explains (interpreted.h).
#include "federation/sync/interpreted.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "api/annotations.h"
#include "api/federated.h"
#include "api/resources.h"
#include "api/views.h"
#include "federation/common/names.h"
#include "federation/common/policies.h"
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

// A pod that requests what one replica does (ReplicaRequirements'
// resourceRequest; nothing without requirements).
json::object PodOf(const std::optional<json::object>& requirements) {
  json::object container{{"name", "replica"}};
  if (requirements.has_value()) {
    if (const json::value* request = requirements->if_contains("resourceRequest")) {
      container["resources"] = json::object{{"requests", *request}};
    }
  }
  return json::object{{"spec", json::object{{"containers", json::array{std::move(container)}}}}};
}

// The pods in the copy's cluster that it owns and that hold a node.
int64_t BoundPods(MemberInformers& members, const Copy& copy) {
  std::shared_ptr<runtime::Informer> pods = members.Get(copy.cluster(), kPods);
  if (pods == nullptr) return 0;
  std::string uid(api::ObjectView(*copy.Current()).uid());
  int64_t n = 0;
  for (const runtime::ObjectPtr& pod : pods->cache().ByIndex(runtime::kOwnerIndex, uid)) {
    if (api::PodHoldsNode(*pod)) ++n;
  }
  return n;
}

}  // namespace

StatusOr<int64_t> PlanDivided(const interpreter::Customization& c, MemberInformers& members,
                              Check& check, const json::object& desired) {
  FLOTILLA_ASSIGN_OR_RETURN(interpreter::Replicas asked, interpreter::GetReplicas(c, check.obj()));
  FLOTILLA_ASSIGN_OR_RETURN(planner::Preferences prefs, PreferencesOf(check.obj()));
  std::vector<std::string> clusters;
  planner::ReplicaCounts capacity;
  const json::object pod = PodOf(asked.requirements);
  for (const Copy& copy : check.copies) {
    clusters.push_back(copy.cluster());
    std::optional<int64_t> room = copy.target.cluster_object == nullptr
                                      ? std::nullopt
                                      : AvailableReplicas(*copy.target.cluster_object, &pod);
    if (!room) continue;
    // The copy's own pods on nodes are in the cluster's allocated figures:
    // their room is the copy's.
    if (copy.Managed()) *room += BoundPods(members, copy);
    capacity[copy.cluster()] = *room;
  }
  planner::PlanResult plan =
      planner::Plan(asked.replicas, clusters, {}, capacity, check.key, prefs);
  int64_t placed = 0;
  for (Copy& copy : check.copies) {
    auto it = plan.plan.find(copy.cluster());
    int64_t n = it == plan.plan.end() ? 0 : it->second;
    placed += n;
    if (n == 0) {
      copy.desired.reset();
      copy.remove = true;
      continue;
    }
    FLOTILLA_ASSIGN_OR_RETURN(json::object revised, interpreter::ReviseReplica(c, desired, n));
    copy.desired = std::move(revised);
  }
  return std::max<int64_t>(0, asked.replicas - placed);
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
                            interpreter::AggregateStatus(c, check.obj(), items));
  const json::object* status = GetObject(aggregated, "status");
  return status != nullptr ? *status : json::object();
}

}  // namespace flotilla::federation::sync
