// The federated ReplicaSet controller (replicaset_controller.h).
#include "federation/replicaset/replicaset_controller.h"

#include <algorithm>

#include "api/annotations.h"
#include "api/federated.h"
#include "api/owner.h"
#include "api/views.h"
#include "federation/common/deletion.h"
#include "federation/common/federated_kind.h"
#include "federation/common/local_workload.h"
#include "federation/common/member_copy.h"
#include "federation/common/object_writes.h"
#include "federation/replicaset/status.h"

namespace flotilla::federation::replicaset {

bool IsShadow(const json::object& rs) {
  return api::AnnotationAt(rs, api::kShadowReplicaSetAnnotation) == "true";
}

ReplicaSetController::ReplicaSetController(FederationContext& ctx, WorkloadOptions options)
    : WorkloadStrategy(ctx, options, "ReplicaSet", api::kReplicaSetPreferencesAnnotation,
                       api::kReplicaSetStatusAnnotation) {
  StartReconciler(kName, options.member_change_delay);
  ctx.members().AddHandler(kPods, [this](const std::string&) {
    auto changed = [this](const runtime::ObjectPtr& pod) { EnqueueOwner(pod); };
    return runtime::EventHandler{
        .on_add = changed,
        .on_update = [changed](const runtime::ObjectPtr&,
                               const runtime::ObjectPtr& pod) { changed(pod); },
        .on_delete = changed};
  });
}

void ReplicaSetController::EnqueueOwner(const runtime::ObjectPtr& pod) {
  std::string owner = api::ControllerName(*pod, "ReplicaSet");
  if (owner.empty()) return;
  reconciler().Enqueue(runtime::ObjectKey(api::ObjectView(*pod).ns(), owner),
                       options_.member_change_delay);
}

void ReplicaSetController::PodsOf(const std::string& cluster, const json::object& local,
                                  WorkloadInCluster& w) const {
  std::shared_ptr<runtime::Informer> pods = ctx_.members().Get(cluster, kPods.resource);
  if (pods != nullptr) w.pods = federation::PodsOf(pods->lister(), local);
}

json::object ReplicaSetController::DesiredCopy(const Check& check, size_t, int64_t replicas) const {
  return DesiredLocal(check.obj(), replicas);
}

Status ReplicaSetController::Plan(Check& check) {
  if (Place(check, std::make_shared<WorkloadPlan>())) SetDesired(check);
  return Status::Ok();
}

bool ReplicaSetController::UpToDate(const Copy& c) const {
  return !NeedsUpdate(*c.existing, *c.desired);
}

json::object ReplicaSetController::Updated(const Copy& c) const {
  return federation::Updated(*c.existing, *c.desired);
}

StatusOr<runtime::Result> ReplicaSetController::Finish(Check& check) {
  if (PlanOf(check).invalid) return runtime::Result{};
  Settle(check);
  FLOTILLA_RETURN_IF_ERROR(FollowLocalReplicas(check));
  FLOTILLA_RETURN_IF_ERROR(WriteStatus(check));
  return NextCheck(check);
}

Status ReplicaSetController::WriteStatus(Check& check) {
  const WorkloadPlan& state = PlanOf(check);
  std::vector<LocalStatus> locals;
  for (size_t i = 0; i < check.copies.size(); ++i) {
    const Copy& c = check.copies[i];
    LocalStatus l{.cluster = c.cluster(), .planned = state.placement.ReplicasFor(c.cluster())};
    l.pending = state.placement.views[i].pending;
    if (auto cap = state.placement.targets.capacity.find(c.cluster());
        cap != state.placement.targets.capacity.end()) {
      l.estimated_capacity = cap->second;
    }
    const json::object* lrs = c.Current();
    if (lrs != nullptr && IsManaged(*lrs)) {
      api::WorkloadView local(*lrs);
      l.local = true;
      l.replicas = local.status_replicas();
      l.fully_labeled = local.fully_labeled_replicas();
      l.ready = local.ready_replicas();
      l.available = local.available_replicas();
      l.observed = c.desired && reconciler().CopyUpToDate(check, c) && local.Observed();

    } else {
      l.observed = l.planned == 0;
    }
    locals.push_back(std::move(l));
  }
  json::object status = AggregateStatus(check.obj(), locals);
  SetAffinityCondition(check, status);
  return WriteStatusIfChanged(ctx_.fed(), kReplicaSets, check.obj(), std::move(status),
                              {{api::kReplicaSetStatusAnnotation, BreakdownAnnotation(locals)}});
}

}  // namespace flotilla::federation::replicaset

namespace flotilla::federation {

void RegisterReplicaSet(KindRegistry& kinds) {
  kinds.Add({.controller = "replicaset",
             .help = "federated ReplicaSets: replicas divided by placement preferences",
             .kind = "ReplicaSet",
             .propagates = {kReplicaSets},
             .admission = {.preferences_annotation = api::kReplicaSetPreferencesAnnotation},
             .applications = true,
             .listings = {WorkloadListing{
                 .short_names = {"rs"}, .breakdown_annotation = api::kReplicaSetStatusAnnotation}},
             .build = [](const KindEnv& env) {
               return std::make_shared<replicaset::ReplicaSetController>(env.ctx, env.workloads);
             }});
}

}  // namespace flotilla::federation
