// A federated Deployment's rollout over the clusters (rollout.h).
#include "federation/deployment/rollout.h"

#include "api/deployment/deployment_util.h"
#include "api/views.h"

namespace flotilla::federation::deployment {

bool Paused(const json::object& d) {
  const json::value* v = Find(d, "spec.paused");
  return v != nullptr && v->is_bool() && v->get_bool();
}

bool MidUpdate(const json::object& local, bool full) {
  api::WorkloadView v(local);
  return v.updated_replicas() != v.status_replicas() || (!full && v.unavailable_replicas() != 0) ||
         v.observed_generation() != v.generation();
}

bool TimedOut(const json::object& local) {
  const json::object* status = GetObject(local, "status");
  if (status == nullptr) return false;
  const json::object* cond = api::deployment::GetCondition(*status, "Progressing");
  return cond != nullptr && GetString(*cond, "status") == "False" &&
         GetString(*cond, "reason") == api::deployment::kTimedOutReason;
}

RolloutPlan PlanDeploymentRollout(const json::object& federated,
                                  std::span<const LocalDeployment> clusters) {
  const json::object* tmpl = TemplateOf(federated);
  static const json::object kNone;
  std::vector<ClusterTemplate> facts;
  for (const LocalDeployment& c : clusters) {
    ClusterTemplate f{.cluster = c.cluster, .exists = c.local != nullptr};
    if (c.local != nullptr) {
      const json::object* want = c.tmpl != nullptr ? c.tmpl : tmpl;
      f.on_template = RunsTemplate(*c.local, want != nullptr ? *want : kNone);
      f.failed = TimedOut(*c.local);
      f.busy = f.failed || MidUpdate(*c.local, c.full);
    }
    facts.push_back(std::move(f));
  }
  RolloutMode mode = Paused(federated) ? RolloutMode::kHeld
                     : StringAt(federated, "spec.strategy.type") == "Recreate"
                         ? RolloutMode::kAllAtOnce
                         : RolloutMode::kOneAtATime;
  return PlanRollout(federated, facts, mode);
}

}  // namespace flotilla::federation::deployment
