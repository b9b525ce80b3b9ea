// The federated ReplicaSet controller (replicaset_controller.h).
#include "federation/replicaset/replicaset_controller.h"

#include <algorithm>

#include "api/annotations.h"
#include "api/federated.h"
#include "api/owner.h"
#include "federation/common/deletion.h"
#include "federation/common/local_workload.h"
#include "federation/common/member_copy.h"
#include "federation/common/object_writes.h"
#include "federation/replicaset/status.h"

namespace flotilla::federation::replicaset {

bool IsShadow(const json::object& rs) {
  return api::AnnotationAt(rs, api::kShadowReplicaSetAnnotation) == "true";
}

// What one check knows between Plan and Finish.
struct ReplicaSetController::State {
  bool invalid = false;  // preferences that do not parse: nothing is done
  planner::Preferences prefs;
  int64_t replicas = 0;
  PlacementResult placement;
};

ReplicaSetController::ReplicaSetController(FederationContext& ctx, WorkloadOptions options)
    : ctx_(ctx),
      options_(options),
      placer_(options.placer(), ctx.metrics(), "ReplicaSet"),
      reconciler_(ctx, *this,
                  {.name = kName,
                   .workers = options.workers,
                   .member_change_delay = options.member_change_delay,
                   .sync_grace = options.sync_grace,
                   .retry_soon = std::max<Duration>(options.member_change_delay,
                                                    std::chrono::milliseconds(100))}) {
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
  reconciler_.Enqueue(runtime::ObjectKey(StringAt(*pod, "metadata.namespace"), owner),
                      options_.member_change_delay);
}

Status ReplicaSetController::Plan(Check& check) {
  State state;
  StatusOr<planner::Preferences> prefs =
      PreferencesOf(check.obj, api::kReplicaSetPreferencesAnnotation);
  if (!prefs.ok()) {
    // Admission rejects these; one stored before cannot be planned.
    reconciler_.events().Event(check.obj, runtime::kEventTypeWarning, "InvalidPreferences",
                               Describe(prefs.status()));
    state.invalid = true;
    check.state = std::move(state);
    return Status::Ok();
  }
  state.prefs = *std::move(prefs);
  state.replicas = IntAt(check.obj, "spec.replicas");
  std::vector<WorkloadInCluster> clusters;
  for (const Copy& c : check.copies) {
    WorkloadInCluster w{.cluster = c.cluster()};
    if (c.existing != nullptr && IsManaged(*c.existing) && !IsBeingDeleted(*c.existing)) {
      w.local = c.existing;
      if (auto pods = ctx_.members().Get(c.cluster(), kPods.resource)) {
        w.pods = PodsOf(pods->lister(), *c.existing);
      }
    }
    clusters.push_back(std::move(w));
  }
  state.placement =
      placer_.Place(check.key, state.replicas, state.prefs, clusters,
                    LastPlanned(check.obj, api::kReplicaSetStatusAnnotation), check.now);
  SetDesired(check, state);
  check.state = std::move(state);
  return Status::Ok();
}

void ReplicaSetController::SetDesired(Check& check, const State& state) const {
  for (size_t i = 0; i < check.copies.size(); ++i) {
    Copy& c = check.copies[i];
    int64_t replicas = state.placement.ReplicasFor(c.cluster());
    c.desired = DesiredLocal(check.obj, replicas);
    c.create = replicas > 0 && !state.placement.views[i].create_failed;
  }
}

bool ReplicaSetController::Replan(Check& check) {
  State& state = std::any_cast<State&>(check.state);
  std::vector<std::string> failed;
  for (const Copy& c : check.copies) {
    if (c.create_failed) failed.push_back(c.cluster());
  }
  placer_.CreateFailed(check.key, failed, state.replicas, state.prefs, state.placement, check.now);
  SetDesired(check, state);
  return true;
}

bool ReplicaSetController::UpToDate(const Copy& c) const {
  return !NeedsUpdate(*c.existing, *c.desired);
}

json::object ReplicaSetController::Updated(const Copy& c) const {
  return federation::Updated(*c.existing, *c.desired);
}

Unmanaged ReplicaSetController::OnUnmanaged(const Copy& c) const {
  // Taken over only where the federation places replicas ([E2]).
  return IntAt(*c.desired, "spec.replicas") > 0 ? Unmanaged::kTakeOver : Unmanaged::kLeaveQuietly;
}

bool ReplicaSetController::MustReplace(const Copy& c) const {
  // A selector cannot change.
  const json::value* have = Find(*c.existing, "spec.selector");
  const json::value* want = Find(*c.desired, "spec.selector");
  return have != nullptr && want != nullptr && *have != *want;
}

std::string ReplicaSetController::Detail(const Copy& c) const {
  return "with " + std::to_string(IntAt(*c.desired, "spec.replicas")) + " replicas";
}

StatusOr<runtime::Result> ReplicaSetController::Finish(Check& check) {
  const State& state = std::any_cast<const State&>(check.state);
  if (state.invalid) return runtime::Result{};
  if (std::optional<std::string> changed = placer_.Settle(check.key, state.placement)) {
    reconciler_.events().Event(check.obj, runtime::kEventTypeNormal, "PlacementChanged", *changed);
  }
  FLOTILLA_RETURN_IF_ERROR(WriteStatus(check, state));

  // Not in its desired state yet: check again later ([I7], [I8]).
  bool settled = true;
  for (size_t i = 0; i < check.copies.size(); ++i) {
    const json::object* lrs = check.copies[i].Current();
    int64_t want = state.placement.ReplicasFor(check.copies[i].cluster());
    bool ready = lrs == nullptr ? want == 0
                                : IntAt(*lrs, "status.readyReplicas") == want &&
                                      IntAt(*lrs, "status.replicas") == want;
    const ClusterView& v = state.placement.views[i];
    settled = settled && ready && v.pending == 0 && !v.create_failed;
  }
  Duration after = settled ? Duration::zero() : options_.recheck_delay;
  if (state.placement.next_check) {
    Duration until =
        std::max<Duration>(*state.placement.next_check - check.now, std::chrono::milliseconds(1));
    after = after == Duration::zero() ? until : std::min(after, until);
  }
  return runtime::Result{.requeue_after = after};
}

Status ReplicaSetController::WriteStatus(Check& check, const State& state) {
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
      l.replicas = IntAt(*lrs, "status.replicas");
      l.fully_labeled = IntAt(*lrs, "status.fullyLabeledReplicas");
      l.ready = IntAt(*lrs, "status.readyReplicas");
      l.available = IntAt(*lrs, "status.availableReplicas");
      l.observed = !NeedsUpdate(*lrs, *c.desired) &&
                   IntAt(*lrs, "status.observedGeneration") >= IntAt(*lrs, "metadata.generation");
    } else {
      l.observed = l.planned == 0;
    }
    locals.push_back(std::move(l));
  }
  FLOTILLA_ASSIGN_OR_RETURN(
      json::object frs, SetAnnotation(ctx_.fed(), kReplicaSets, check.obj,
                                      api::kReplicaSetStatusAnnotation, BreakdownAnnotation(locals)));
  return WriteStatusIfChanged(ctx_.fed(), kReplicaSets, frs, AggregateStatus(frs, locals));
}

}  // namespace flotilla::federation::replicaset
