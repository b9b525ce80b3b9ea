// `flotilla plan` with a propagation policy (policy_plan.h).
#include "federation/overview/policy_plan.h"

#include <map>
#include <string>
#include <vector>

#include "api/policy/policy.h"
#include "federation/common/policies.h"
#include "planner/plan_case.h"
#include "planner/preferences.h"

namespace flotilla::federation::overview {
namespace {

namespace policy = api::policy;

// The causes of `policy` being invalid, each field under "policy.".
Status Invalid(std::vector<StatusCause> causes) {
  std::string message = "policy is invalid:";
  for (StatusCause& c : causes) {
    c.field = "policy." + c.field;
    message += " " + c.field + ": " + c.message + ";";
  }
  message.pop_back();
  return Status::Invalid(message, std::move(causes));
}

struct Verdict {
  bool admitted = true;
  std::string why;
};

Verdict Judge(const policy::PropagationPolicy& p, const json::object& cluster, int64_t current) {
  const policy::ClusterAffinity& affinity =
      p.affinity_groups.empty() ? p.affinity : p.affinity_groups.front().affinity;
  if (const char* why = affinity.WhyNot(policy::ClusterFacts::Of(cluster))) return {false, why};
  policy::TaintVerdict taints = policy::JudgeTaints(policy::TaintsOf(cluster), p.tolerations, {});
  if (taints.no_execute) return {false, "a NoExecute taint the policy does not tolerate"};
  if (taints.no_schedule && current == 0)
    return {false, "a NoSchedule taint the policy does not tolerate"};
  return {};
}

}  // namespace

bool HasPolicy(const json::object& doc) { return doc.contains("policy"); }

StatusOr<json::object> RunPolicyPlanCase(json::object doc, bool explain) {
  if (doc.contains("preferences")) {
    return Status::Invalid(
        "preferences: Forbidden: a case with a policy takes its preferences "
        "from the policy");
  }
  json::value policy_value = doc.at("policy");
  doc.erase("policy");
  json::object cluster_objects;
  if (const json::value* objects = doc.if_contains("clusterObjects")) {
    if (!objects->is_object())
      return Status::Invalid("clusterObjects: Invalid value: must be an object of Clusters");
    cluster_objects = objects->get_object();
    doc.erase("clusterObjects");
  }
  if (!policy_value.is_object()) return Status::Invalid("policy: Invalid value: must be an object");
  json::object policy_obj = policy_value.get_object();
  std::string_view kind = StringViewAt(policy_obj, "kind");
  if (kind != "PropagationPolicy" && kind != "ClusterPropagationPolicy") {
    return Status::Invalid(
        "policy.kind: Unsupported value: supported values: \"PropagationPolicy\", "
        "\"ClusterPropagationPolicy\"");
  }
  bool namespaced = kind == "PropagationPolicy";
  if (namespaced && StringViewAt(policy_obj, "metadata.namespace").empty())
    EnsureObject(policy_obj, "metadata")["namespace"] = "default";
  policy::DefaultPropagation(policy_obj, namespaced);
  if (auto causes = policy::ValidatePropagation(policy_obj, namespaced); !causes.empty())
    return Invalid(std::move(causes));
  FLOTILLA_ASSIGN_OR_RETURN(policy::PropagationPolicy p,
                            policy::PropagationPolicy::FromObject(policy_obj));
  FLOTILLA_ASSIGN_OR_RETURN(planner::PlanCase c, planner::PlanCaseFromJson(doc));

  std::vector<json::object> objects;  // per case cluster, named
  objects.reserve(c.clusters.size());
  for (const std::string& name : c.clusters) {
    const json::value* given = cluster_objects.if_contains(name);
    json::object obj =
        given != nullptr && given->is_object() ? given->get_object() : json::object{};
    EnsureObject(obj, "metadata")["name"] = name;
    objects.push_back(std::move(obj));
  }
  std::vector<std::string> admitted;
  std::vector<DivisionCluster> division;
  json::object verdicts;
  for (size_t i = 0; i < c.clusters.size(); ++i) {
    const std::string& name = c.clusters[i];
    auto current = c.current.find(name);
    Verdict v = Judge(p, objects[i], current == c.current.end() ? 0 : current->second);
    json::object entry{{"admitted", v.admitted}};
    if (!v.admitted) entry["why"] = v.why;
    if (int64_t w = p.StaticWeightOf(policy::ClusterFacts::Of(objects[i])); w > 0)
      entry["staticWeight"] = w;
    verdicts[name] = std::move(entry);
    if (!v.admitted) continue;
    admitted.push_back(name);
    DivisionCluster d{.name = name, .cluster = &objects[i]};
    if (current != c.current.end()) d.current = current->second;
    if (auto room = c.capacity.find(name); room != c.capacity.end()) d.available = room->second;
    division.push_back(std::move(d));
  }

  json::object result;
  std::optional<planner::Preferences> prefs = DivisionPreferences(p, c.replicas, division);
  if (!prefs) {
    json::object plan;
    for (const std::string& name : admitted) plan[name] = c.replicas;
    result = json::object{{"plan", std::move(plan)}, {"overflow", json::object{}}};
  } else {
    c.clusters = admitted;
    c.preferences = *prefs;
    result = planner::RunPlanCase(c, explain);
  }
  if (explain) {
    result["policy"] = json::object{{"name", p.Ref()},
                                    {"kind", kind},
                                    {"replicaScheduling", prefs ? "Divided" : "Duplicated"},
                                    {"clusters", std::move(verdicts)}};
    if (prefs) result["policy"].as_object()["preferences"] = planner::PreferencesToJson(*prefs);
  }
  return result;
}

}  // namespace flotilla::federation::overview
