// A federated Deployment's rollout over the clusters (rollout.h).
#include "federation/deployment/rollout.h"

#include <algorithm>
#include <set>

#include "api/annotations.h"
#include "api/deployment/deployment_util.h"
#include "api/federated.h"

namespace flotilla::federation::deployment {
namespace {

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace

const json::object* TemplateOf(const json::object& obj) {
  const json::value* t = Find(obj, "spec.template");
  return t != nullptr && t->is_object() ? &t->get_object() : nullptr;
}

bool Paused(const json::object& d) {
  const json::value* v = Find(d, "spec.paused");
  return v != nullptr && v->is_bool() && v->get_bool();
}

const char* Name(ClusterRollout r) {
  switch (r) {
    case ClusterRollout::kComplete:
      return "complete";
    case ClusterRollout::kUpdating:
      return "updating";
    case ClusterRollout::kFailed:
      return "failed";
    case ClusterRollout::kWaiting:
      return "waiting";
    case ClusterRollout::kPaused:
      return "paused";
  }
  return "";
}

bool MidUpdate(const json::object& local, bool full) {
  return IntAt(local, "status.updatedReplicas") != IntAt(local, "status.replicas") ||
         (!full && IntAt(local, "status.unavailableReplicas") != 0) ||
         IntAt(local, "status.observedGeneration") != IntAt(local, "metadata.generation");
}

bool TimedOut(const json::object& local) {
  const json::object* status = GetObject(local, "status");
  if (status == nullptr) return false;
  const json::object* cond = api::deployment::GetCondition(*status, "Progressing");
  return cond != nullptr && GetString(*cond, "status") == "False" &&
         GetString(*cond, "reason") == api::deployment::kTimedOutReason;
}

bool RunsTemplate(const json::object& local, const json::object& tmpl) {
  const json::object* have = TemplateOf(local);
  return have != nullptr && api::deployment::EqualIgnoreHash(*have, tmpl);
}

std::vector<std::string> UpdateOrder(const json::object& federated,
                                     std::vector<std::string> clusters) {
  std::sort(clusters.begin(), clusters.end());
  std::vector<std::string> out;
  std::set<std::string> taken;
  std::string order = api::AnnotationAt(federated, api::kClusterUpdateOrderAnnotation);
  size_t start = 0;
  while (start <= order.size()) {
    size_t comma = order.find(',', start);
    if (comma == std::string::npos) comma = order.size();
    std::string name = Trim(std::string_view(order).substr(start, comma - start));
    if (std::binary_search(clusters.begin(), clusters.end(), name) && taken.insert(name).second) {
      out.push_back(name);
    }
    start = comma + 1;
  }
  for (const std::string& c : clusters) {
    if (!taken.contains(c)) out.push_back(c);
  }
  return out;
}

RolloutPlan PlanRollout(const json::object& federated, std::span<const LocalDeployment> clusters) {
  const size_t n = clusters.size();
  RolloutPlan plan;
  plan.new_template.assign(n, false);
  plan.states.assign(n, ClusterRollout::kWaiting);
  const json::object* tmpl = TemplateOf(federated);
  static const json::object kNone;
  std::vector<bool> busy(n, false);
  for (size_t i = 0; i < n; ++i) {
    const json::object* local = clusters[i].local;
    if (local == nullptr) {  // created (if at all) with the template
      plan.new_template[i] = true;
      plan.states[i] = ClusterRollout::kComplete;
      continue;
    }
    bool timed_out = TimedOut(*local);
    busy[i] = timed_out || MidUpdate(*local, clusters[i].full);
    if (!RunsTemplate(*local, tmpl != nullptr ? *tmpl : kNone)) continue;
    plan.new_template[i] = true;
    plan.states[i] = timed_out ? ClusterRollout::kFailed
                     : busy[i] ? ClusterRollout::kUpdating
                               : ClusterRollout::kComplete;
  }
  if (Paused(federated)) {
    for (size_t i = 0; i < n; ++i) {
      if (!plan.new_template[i]) plan.states[i] = ClusterRollout::kPaused;
    }
    return plan;
  }
  if (StringAt(federated, "spec.strategy.type") == "Recreate") {
    for (size_t i = 0; i < n; ++i) {
      if (plan.new_template[i]) continue;
      plan.new_template[i] = true;
      plan.states[i] = ClusterRollout::kUpdating;
    }
    return plan;
  }
  // RollingUpdate: one cluster at a time.
  std::vector<size_t> busy_ones;
  for (size_t i = 0; i < n; ++i) {
    if (busy[i]) busy_ones.push_back(i);
  }
  std::optional<size_t> next;
  if (busy_ones.size() == 1 && !plan.new_template[busy_ones[0]]) {
    next = busy_ones[0];  // in progress on an older template: moved to the newest
  } else if (busy_ones.empty()) {
    std::vector<std::string> names;
    for (const LocalDeployment& c : clusters) names.push_back(c.cluster);
    for (const std::string& name : UpdateOrder(federated, names)) {
      size_t i = std::find(names.begin(), names.end(), name) - names.begin();
      if (!plan.new_template[i]) {
        next = i;
        break;
      }
    }
  }
  if (next) {
    plan.new_template[*next] = true;
    plan.states[*next] = ClusterRollout::kUpdating;
  }
  return plan;
}

}  // namespace flotilla::federation::deployment
