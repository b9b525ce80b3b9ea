// How the Deployment controller moves replicas between ReplicaSets
// (pkg/controller/deployment: rolling.go, recreate.go, sync.go).
#include <algorithm>
#include <map>

#include "api/views.h"
#include "member/deployment/deployment_controller.h"
#include "member/object_util.h"
#include "member/replicaset/controller_ref.h"

namespace flotilla::member {

using deployment::Rs;

namespace {

int64_t SpecOf(const Rs& rs) { return IntAt(*rs, "spec.replicas"); }

std::vector<Rs> WithNew(const std::vector<Rs>& old_rss, const Rs& new_rs) {
  std::vector<Rs> all = old_rss;
  if (new_rs) all.push_back(new_rs);
  return all;
}

}  // namespace

// A paused Deployment or a replica change alone: resize, no rollout.
StatusOr<runtime::Result> DeploymentController::SyncScaling(Sync& s) {
  FLOTILLA_ASSIGN_OR_RETURN(Split split, AllReplicaSets(s, false));
  FLOTILLA_RETURN_IF_ERROR(Scale(s, split));
  if (GetBool(s.d["spec"].as_object(), "paused").value_or(false)) {
    FLOTILLA_RETURN_IF_ERROR(CleanupDeployment(s, split.old_rss));
  }
  FLOTILLA_RETURN_IF_ERROR(SyncDeploymentStatus(s, split));
  return runtime::Result{};
}

Status DeploymentController::Scale(Sync& s, const Split& split) {
  int64_t want = deployment::Replicas(s.d);
  if (Rs only = deployment::FindActiveOrLatest(split.new_rs, split.old_rss)) {
    if (SpecOf(only) == want) return Status::Ok();
    return ScaleReplicaSetAndRecordEvent(s, only, want).status();
  }
  if (deployment::IsSaturated(s.d, split.new_rs)) {
    for (Rs rs : deployment::Active(split.old_rss)) {
      FLOTILLA_RETURN_IF_ERROR(ScaleReplicaSetAndRecordEvent(s, rs, 0).status());
    }
    return Status::Ok();
  }
  if (!deployment::IsRollingUpdate(s.d)) return Status::Ok();
  // Several active ReplicaSets mid-rollout: spread the change in proportion
  // to their sizes, the largest first (newest first when growing, oldest
  // first when shrinking); the rounding leftover goes to the first.
  std::vector<Rs> all = deployment::Active(WithNew(split.old_rss, split.new_rs));
  int64_t allowed = want > 0 ? want + deployment::MaxSurge(s.d) : 0;
  int64_t to_add = allowed - deployment::SpecReplicas(all);
  bool growing = to_add > 0;
  std::sort(all.begin(), all.end(), [growing](const Rs& a, const Rs& b) {
    if (SpecOf(a) != SpecOf(b)) return SpecOf(a) > SpecOf(b);
    return growing ? deployment::CreatedBefore(b, a) : deployment::CreatedBefore(a, b);
  });
  std::map<std::string, int64_t> sizes;
  int64_t added = 0;
  for (const Rs& rs : all) {
    int64_t p = to_add != 0 ? deployment::Proportion(s.d, *rs, to_add, added) : 0;
    sizes[MetaAt(*rs, "name")] = SpecOf(rs) + p;
    added += p;
  }
  if (to_add != 0 && !all.empty()) {
    int64_t& first = sizes[MetaAt(*all.front(), "name")];
    first = std::max<int64_t>(0, first + to_add - added);
  }
  for (Rs rs : all) {
    FLOTILLA_RETURN_IF_ERROR(ScaleReplicaSet(s, rs, sizes[MetaAt(*rs, "name")]).status());
  }
  return Status::Ok();
}

StatusOr<runtime::Result> DeploymentController::RolloutRolling(Sync& s) {
  FLOTILLA_ASSIGN_OR_RETURN(Split split, AllReplicaSets(s, true));
  FLOTILLA_ASSIGN_OR_RETURN(bool scaled_up, ReconcileNewReplicaSet(s, split));
  if (scaled_up) return SyncRolloutStatus(s, split);
  FLOTILLA_ASSIGN_OR_RETURN(bool scaled_down, ReconcileOldReplicaSets(s, split));
  if (scaled_down) return SyncRolloutStatus(s, split);
  const json::value* status = s.d.if_contains("status");
  if (status && status->is_object() && deployment::DeploymentComplete(s.d, status->get_object())) {
    FLOTILLA_RETURN_IF_ERROR(CleanupDeployment(s, split.old_rss));
  }
  return SyncRolloutStatus(s, split);
}

StatusOr<bool> DeploymentController::ReconcileNewReplicaSet(Sync& s, const Split& split) {
  Rs new_rs = split.new_rs;
  int64_t want = deployment::Replicas(s.d);
  if (SpecOf(new_rs) == want) return false;
  if (SpecOf(new_rs) > want) return ScaleReplicaSetAndRecordEvent(s, new_rs, want);
  int64_t count = deployment::NewRSNewReplicas(s.d, WithNew(split.old_rss, new_rs), *new_rs);
  return ScaleReplicaSetAndRecordEvent(s, new_rs, count);
}

StatusOr<bool> DeploymentController::ReconcileOldReplicaSets(Sync& s, Split& split) {
  std::vector<Rs> old_rss = deployment::Active(split.old_rss);
  if (deployment::SpecReplicas(old_rss) == 0) return false;
  int64_t all_pods = deployment::SpecReplicas(WithNew(old_rss, split.new_rs));
  int64_t min_available = deployment::Replicas(s.d) - deployment::MaxUnavailable(s.d);
  int64_t new_unavailable = SpecOf(split.new_rs) - IntAt(*split.new_rs, "status.availableReplicas");
  int64_t max_scaled_down = all_pods - min_available - new_unavailable;
  if (max_scaled_down <= 0) return false;
  // Unhealthy old pods go first: they would block the rollout otherwise.
  FLOTILLA_ASSIGN_OR_RETURN(int64_t cleaned, CleanupUnhealthyReplicas(s, old_rss, max_scaled_down));
  Split after{split.new_rs, old_rss};
  FLOTILLA_ASSIGN_OR_RETURN(int64_t scaled, ScaleDownOldForRollingUpdate(s, after));
  return cleaned + scaled > 0;
}

StatusOr<int64_t> DeploymentController::CleanupUnhealthyReplicas(Sync& s, std::vector<Rs>& old_rss,
                                                                 int64_t max_cleanup) {
  std::sort(old_rss.begin(), old_rss.end(), deployment::CreatedBefore);
  int64_t total = 0;
  for (Rs& rs : old_rss) {
    if (total >= max_cleanup) break;
    int64_t replicas = SpecOf(rs);
    int64_t available = IntAt(*rs, "status.availableReplicas");
    if (replicas == 0 || replicas == available) continue;
    int64_t down = std::min(max_cleanup - total, replicas - available);
    // More available than wanted: a status not yet caught up with a scale
    // down. Never scale up here; kube fails the sync, we wait for the
    // ReplicaSet's next status (its event wakes us) without a backoff.
    if (down < 0) continue;
    FLOTILLA_RETURN_IF_ERROR(ScaleReplicaSetAndRecordEvent(s, rs, replicas - down).status());
    total += down;
  }
  return total;
}

StatusOr<int64_t> DeploymentController::ScaleDownOldForRollingUpdate(Sync& s, const Split& split) {
  int64_t min_available = deployment::Replicas(s.d) - deployment::MaxUnavailable(s.d);
  // A ReplicaSet's status may still count pods its spec just let go (the
  // scale-down of a moment ago): kube's sum would scale down again for
  // them and dip below min_available. Count at most what each spec keeps.
  int64_t available = 0;
  for (const Rs& rs : WithNew(split.old_rss, split.new_rs)) {
    if (rs) available += std::min(SpecOf(rs), IntAt(*rs, "status.availableReplicas"));
  }
  if (available <= min_available) return 0;
  std::vector<Rs> old_rss = split.old_rss;
  std::sort(old_rss.begin(), old_rss.end(), deployment::CreatedBefore);
  int64_t goal = available - min_available;
  int64_t total = 0;
  for (Rs& rs : old_rss) {
    if (total >= goal) break;
    if (SpecOf(rs) == 0) continue;
    int64_t down = std::min(SpecOf(rs), goal - total);
    FLOTILLA_RETURN_IF_ERROR(ScaleReplicaSetAndRecordEvent(s, rs, SpecOf(rs) - down).status());
    total += down;
  }
  return total;
}

StatusOr<runtime::Result> DeploymentController::RolloutRecreate(Sync& s) {
  FLOTILLA_ASSIGN_OR_RETURN(Split split, AllReplicaSets(s, false));
  bool scaled_down = false;
  for (Rs rs : deployment::Active(split.old_rss)) {
    FLOTILLA_ASSIGN_OR_RETURN(bool scaled, ScaleReplicaSetAndRecordEvent(s, rs, 0));
    scaled_down = scaled_down || scaled;
  }
  if (scaled_down || OldPodsRunning(s, split)) return SyncRolloutStatus(s, split);
  if (!split.new_rs) {
    FLOTILLA_ASSIGN_OR_RETURN(split, AllReplicaSets(s, true));
  }
  FLOTILLA_RETURN_IF_ERROR(
      ScaleReplicaSetAndRecordEvent(s, split.new_rs, deployment::Replicas(s.d)).status());
  const json::value* status = s.d.if_contains("status");
  if (status && status->is_object() && deployment::DeploymentComplete(s.d, status->get_object())) {
    FLOTILLA_RETURN_IF_ERROR(CleanupDeployment(s, split.old_rss));
  }
  return SyncRolloutStatus(s, split);
}

// Old ReplicaSets still count pods, or pods of theirs have not terminated.
bool DeploymentController::OldPodsRunning(const Sync& s, const Split& split) const {
  if (deployment::StatusSum(split.old_rss, "replicas") > 0) return true;
  std::string new_uid = split.new_rs ? MetaAt(*split.new_rs, "uid") : "";
  for (const auto& [uid, pods] : s.pods_by_rs) {
    if (uid == new_uid) continue;
    for (const runtime::ObjectPtr& pod : pods) {
      std::string phase = StringAt(*pod, "status.phase");
      if (phase != "Failed" && phase != "Succeeded") return true;
    }
  }
  return false;
}

StatusOr<bool> DeploymentController::ScaleReplicaSetAndRecordEvent(Sync& s, Rs& rs,
                                                                   int64_t new_scale) {
  if (SpecOf(rs) == new_scale) return false;
  return ScaleReplicaSet(s, rs, new_scale);
}

// Sets the size and the replica annotations; records ScalingReplicaSet when
// the size changed. Returns whether it did.
StatusOr<bool> DeploymentController::ScaleReplicaSet(Sync& s, Rs& rs, int64_t new_scale) {
  int64_t old_scale = SpecOf(rs);
  int64_t want = deployment::Replicas(s.d);
  int64_t max = want + deployment::MaxSurge(s.d);
  bool resize = old_scale != new_scale;
  if (!resize && !deployment::ReplicasAnnotationsNeedUpdate(*rs, want, max)) return false;
  json::object copy = *rs;
  copy["spec"].as_object()["replicas"] = new_scale;
  deployment::SetReplicasAnnotations(copy, want, max);
  FLOTILLA_ASSIGN_OR_RETURN(*rs, client_.Update(kReplicaSets, "", copy));
  if (resize) {
    Record(s, runtime::kEventTypeNormal, "ScalingReplicaSet",
           std::string("Scaled ") + (old_scale < new_scale ? "up" : "down") + " replica set " +
               MetaAt(*rs, "name") + " from " + std::to_string(old_scale) + " to " +
               std::to_string(new_scale));
  }
  return resize;
}

// Deletes the oldest revisions beyond revisionHistoryLimit, only those with
// no replicas left and whose status is current.
Status DeploymentController::CleanupDeployment(Sync& s, const std::vector<Rs>& old_rss) {
  const json::value* limit_v = Find(s.d, "spec.revisionHistoryLimit");
  if (limit_v == nullptr || !limit_v->is_int64()) return Status::Ok();
  std::vector<Rs> alive;
  for (const Rs& rs : old_rss) {
    if (!api::IsBeingDeleted(*rs)) alive.push_back(rs);
  }
  int64_t diff = static_cast<int64_t>(alive.size()) - limit_v->get_int64();
  if (diff <= 0) return Status::Ok();
  std::sort(alive.begin(), alive.end(), [](const Rs& a, const Rs& b) {
    int64_t ra = deployment::Revision(*a), rb = deployment::Revision(*b);
    if (ra != rb) return ra < rb;
    return deployment::CreatedBefore(a, b);
  });
  for (int64_t i = 0; i < diff; ++i) {
    const Rs& rs = alive[i];
    if (IntAt(*rs, "status.replicas") != 0 || SpecOf(rs) != 0 ||
        IntAt(*rs, "metadata.generation") > IntAt(*rs, "status.observedGeneration")) {
      continue;
    }
    Status st = client_.Delete(kReplicaSets, MetaAt(*rs, "namespace"), MetaAt(*rs, "name"));
    if (!st.ok() && !st.Is(Reason::kNotFound)) return st;
  }
  return Status::Ok();
}

}  // namespace flotilla::member
