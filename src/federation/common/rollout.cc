// A federated workload's rollout over the clusters (rollout.h).
#include "federation/common/rollout.h"

#include <algorithm>
#include <optional>
#include <set>

#include "api/annotations.h"
#include "api/deployment/deployment_util.h"
#include "api/federated.h"

namespace flotilla::federation {
namespace {

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace

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

const json::object* TemplateOf(const json::object& obj) {
  const json::value* t = Find(obj, "spec.template");
  return t != nullptr && t->is_object() ? &t->get_object() : nullptr;
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

RolloutPlan PlanRollout(const json::object& federated, std::span<const ClusterTemplate> clusters,
                        RolloutMode mode) {
  const size_t n = clusters.size();
  RolloutPlan plan;
  plan.new_template.assign(n, false);
  plan.states.assign(n, ClusterRollout::kWaiting);
  for (size_t i = 0; i < n; ++i) {
    const ClusterTemplate& c = clusters[i];
    if (!c.exists) {  // created (if at all) with the template
      plan.new_template[i] = true;
      plan.states[i] = ClusterRollout::kComplete;
      continue;
    }
    if (!c.on_template) continue;
    plan.new_template[i] = true;
    plan.states[i] = c.failed ? ClusterRollout::kFailed
                     : c.busy ? ClusterRollout::kUpdating
                              : ClusterRollout::kComplete;
  }
  if (mode == RolloutMode::kHeld) {
    for (size_t i = 0; i < n; ++i) {
      if (!plan.new_template[i]) plan.states[i] = ClusterRollout::kPaused;
    }
    return plan;
  }
  if (mode == RolloutMode::kAllAtOnce) {
    for (size_t i = 0; i < n; ++i) {
      if (plan.new_template[i]) continue;
      plan.new_template[i] = true;
      plan.states[i] = ClusterRollout::kUpdating;
    }
    return plan;
  }
  std::vector<size_t> busy;
  for (size_t i = 0; i < n; ++i) {
    if (clusters[i].exists && (clusters[i].busy || clusters[i].failed)) busy.push_back(i);
  }
  std::optional<size_t> next;
  if (busy.size() == 1 && !plan.new_template[busy[0]]) {
    next = busy[0];  // in progress on an older template: moved to the newest
  } else if (busy.empty()) {
    std::vector<std::string> names;
    for (const ClusterTemplate& c : clusters) names.push_back(c.cluster);
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

}  // namespace flotilla::federation
