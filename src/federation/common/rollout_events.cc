// The Events of a cluster-by-cluster rollout (rollout_events.h).
#include "federation/common/rollout_events.h"

#include "api/annotations.h"
#include "base/mutex.h"

namespace flotilla::federation {

void RolloutReporter::Report(const Check& check, const RolloutPlan& plan,
                             const std::string& revision) {
  std::map<std::string, std::string> reported;
  {
    MutexLock lock(mu_);
    reported = reported_[check.key];
  }
  std::string before = api::AnnotationAt(check.obj(), breakdown_annotation_);
  std::map<std::string, std::string> now_reported;
  for (size_t i = 0; i < check.copies.size() && i < plan.states.size(); ++i) {
    const Copy& c = check.copies[i];
    ClusterRollout now = plan.states[i];
    now_reported[c.cluster()] = Name(now);
    auto remembered = reported.find(c.cluster());
    std::string was =
        remembered != reported.end() ? remembered->second : PreviousRollout(before, c.cluster());
    const json::object* tmpl = plan.TemplateFor(i, check.obj());
    bool started = c.written && c.existing != nullptr && tmpl != nullptr &&
                   !RunsTemplate(*c.existing, *tmpl) && plan.new_template[i];
    if (started) {
      events_.Event(check.obj(), runtime::kEventTypeNormal, "RolloutStarted",
                    "Rolling out revision " + revision + " to cluster " + c.cluster());
    } else if (now == ClusterRollout::kComplete && was == Name(ClusterRollout::kUpdating)) {
      events_.Event(check.obj(), runtime::kEventTypeNormal, "RolloutCompleted",
                    "Cluster " + c.cluster() + " finished rolling out revision " + revision);
    } else if (now == ClusterRollout::kFailed && was != Name(ClusterRollout::kFailed)) {
      events_.Event(check.obj(), runtime::kEventTypeWarning, "RolloutFailed",
                    "Cluster " + c.cluster() + " did not finish rolling out revision " + revision +
                        " within its progress deadline; no further cluster is updated until "
                        "the template changes");
    }
  }
  MutexLock lock(mu_);
  reported_[check.key] = std::move(now_reported);
}

void RolloutReporter::Forget(const std::string& key) {
  MutexLock lock(mu_);
  reported_.erase(key);
}

std::string PreviousRollout(const std::string& breakdown, const std::string& cluster) {
  StatusOr<json::object> parsed = ParseJsonObject(breakdown);
  if (!parsed.ok()) return "";
  const json::value* clusters = parsed->if_contains("clusters");
  if (clusters == nullptr || !clusters->is_object()) return "";
  const json::value* c = clusters->get_object().if_contains(cluster);
  if (c == nullptr || !c->is_object()) return "";
  return std::string(GetString(c->get_object(), "rollout").value_or(""));
}

}  // namespace flotilla::federation
