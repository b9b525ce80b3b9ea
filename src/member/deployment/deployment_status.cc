// The Deployment controller's status: counts over its ReplicaSets, the
// Available condition, and the Progressing condition with the progress
// deadline (pkg/controller/deployment/sync.go, progress.go).
#include "member/deployment/deployment_controller.h"
#include "member/object_util.h"

namespace flotilla::member {

using deployment::Rs;

namespace {

void SetCount(json::object& status, std::string_view key, int64_t n) {
  if (n != 0) status[key] = n;  // omitempty, as the Go type serializes
}

std::vector<Rs> All(const std::vector<Rs>& old_rss, const Rs& new_rs) {
  std::vector<Rs> all = old_rss;
  if (new_rs) all.push_back(new_rs);
  return all;
}


// A ReplicaSet's ReplicaFailure becomes the Deployment's (kube keeps one).
void CopyReplicaFailure(json::object& status, const std::vector<Rs>& all, TimePoint now) {
  json::object failure;
  for (const Rs& rs : all) {
    const json::value* st = rs->if_contains("status");
    const json::object* c = st && st->is_object()
                                ? deployment::GetCondition(st->get_object(), "ReplicaFailure")
                                : nullptr;
    if (c != nullptr && failure.empty()) failure = *c;
  }
  if (failure.empty()) return deployment::RemoveCondition(status, "ReplicaFailure");
  deployment::SetCondition(
      status, deployment::NewCondition(
                  "ReplicaFailure", std::string(GetString(failure, "status").value_or("True")),
                  std::string(GetString(failure, "reason").value_or("")),
                  std::string(GetString(failure, "message").value_or("")), now));
}

}  // namespace

json::object DeploymentController::CalculateStatus(const Sync& s, const Split& split) const {
  std::vector<Rs> all = All(split.old_rss, split.new_rs);
  int64_t available = deployment::StatusSum(all, "availableReplicas");
  int64_t unavailable = std::max<int64_t>(0, deployment::SpecReplicas(all) - available);
  json::object status;
  SetCount(status, "observedGeneration", IntAt(s.d, "metadata.generation"));
  SetCount(status, "replicas", deployment::StatusSum(all, "replicas"));
  SetCount(status, "updatedReplicas", deployment::StatusSum({split.new_rs}, "replicas"));
  SetCount(status, "readyReplicas", deployment::StatusSum(all, "readyReplicas"));
  SetCount(status, "availableReplicas", available);
  SetCount(status, "unavailableReplicas", unavailable);
  json::object old = StatusOf(s.d);
  if (const json::value* c = old.if_contains("collisionCount")) status["collisionCount"] = *c;
  if (const json::value* c = old.if_contains("conditions")) status["conditions"] = *c;
  if (available >= deployment::Replicas(s.d) - deployment::MaxUnavailable(s.d)) {
    deployment::SetCondition(
        status, deployment::NewCondition("Available", "True", deployment::kMinimumReplicasAvailable,
                                         "Deployment has minimum availability.", clock_.Now()));
  } else {
    deployment::SetCondition(
        status,
        deployment::NewCondition("Available", "False", deployment::kMinimumReplicasUnavailable,
                                 "Deployment does not have minimum availability.", clock_.Now()));
  }
  return status;
}

Status DeploymentController::SyncDeploymentStatus(Sync& s, const Split& split) {
  return WriteStatus(s, CalculateStatus(s, split));
}

StatusOr<runtime::Result> DeploymentController::SyncRolloutStatus(Sync& s, const Split& split) {
  json::object status = CalculateStatus(s, split);
  if (!deployment::HasProgressDeadline(s.d)) deployment::RemoveCondition(status, "Progressing");
  json::object old = StatusOf(s.d);
  const json::object* current = deployment::GetCondition(old, "Progressing");
  bool complete_before =
      GetInt(status, "replicas").value_or(0) == GetInt(status, "updatedReplicas").value_or(0) &&
      current != nullptr && GetString(*current, "reason") == deployment::kNewRSAvailableReason;
  std::string subject = split.new_rs ? "ReplicaSet \"" + MetaAt(*split.new_rs, "name") + "\""
                                     : "Deployment \"" + MetaAt(s.d, "name") + "\"";
  TimePoint now = clock_.Now();
  if (deployment::HasProgressDeadline(s.d) && !complete_before) {
    if (deployment::DeploymentComplete(s.d, status)) {
      deployment::SetCondition(
          status, deployment::NewCondition("Progressing", "True", deployment::kNewRSAvailableReason,
                                           subject + " has successfully progressed.", now));
    } else if (deployment::DeploymentProgressing(s.d, status)) {
      // Progress moves lastUpdateTime even when the reason stays the same.
      json::object cond =
          deployment::NewCondition("Progressing", "True", deployment::kReplicaSetUpdatedReason,
                                   subject + " is progressing.", now);
      if (current != nullptr) {
        if (GetString(*current, "status") == "True" && current->contains("lastTransitionTime")) {
          cond["lastTransitionTime"] = current->at("lastTransitionTime");
        }
        deployment::RemoveCondition(status, "Progressing");
      }
      deployment::SetCondition(status, std::move(cond));
    } else if (deployment::DeploymentTimedOut(s.d, status, now)) {
      deployment::SetCondition(
          status, deployment::NewCondition("Progressing", "False", deployment::kTimedOutReason,
                                           subject + " has timed out progressing.", now));
    }
  }
  CopyReplicaFailure(status, All(split.old_rss, split.new_rs), now);
  if (const json::array* conds = GetArray(status, "conditions"); conds && conds->empty()) {
    status.erase("conditions");
  }
  runtime::Result result = RequeueStuck(s, status);
  FLOTILLA_RETURN_IF_ERROR(WriteStatus(s, std::move(status)));
  return result;
}

// A rollout still in progress is checked again when its deadline passes.
runtime::Result DeploymentController::RequeueStuck(const Sync& s,
                                                   const json::object& status) const {
  json::object old = StatusOf(s.d);
  const json::object* current = deployment::GetCondition(old, "Progressing");
  if (!deployment::HasProgressDeadline(s.d) || current == nullptr) return {};
  if (deployment::DeploymentComplete(s.d, status) ||
      GetString(*current, "reason") == deployment::kTimedOutReason) {
    return {};
  }
  TimePoint updated{};
  auto text = GetString(*current, "lastUpdateTime");
  if (text) ParseRfc3339(std::string(*text), &updated);
  Duration after = updated + std::chrono::seconds(IntAt(s.d, "spec.progressDeadlineSeconds", 600)) -
                   clock_.Now();
  if (after < std::chrono::seconds(1)) return runtime::Result{std::chrono::seconds(1)};
  return runtime::Result{after + std::chrono::seconds(1)};
}

// Writes the status when it changed; the written object becomes s.d.
Status DeploymentController::WriteStatus(Sync& s, json::object status) {
  if (StatusOf(s.d) == status) return Status::Ok();
  json::object copy = s.d;
  copy["status"] = std::move(status);
  FLOTILLA_ASSIGN_OR_RETURN(s.d, client_.UpdateStatus(kDeployments, "", copy));
  return Status::Ok();
}

void DeploymentController::Record(const Sync& s, std::string_view type, std::string_view reason,
                                  const std::string& message) {
  events_.Event(WithKind(s.d, "apps/v1", "Deployment"), type, reason, message);
}

}  // namespace flotilla::member
