// The federated DaemonSet controller (daemonset_controller.h).
#include "federation/daemonset/daemonset_controller.h"

#include "api/federated.h"
#include "api/views.h"
#include "federation/common/federated_kind.h"
#include "federation/common/local_workload.h"
#include "federation/common/object_writes.h"
#include "federation/common/revision_history.h"
#include "federation/common/rollout.h"

namespace flotilla::federation::daemonset {
namespace {

using client::kDaemonSets;

constexpr std::string_view kCounts[] = {"desiredNumberScheduled", "currentNumberScheduled",
                                        "numberMisscheduled",     "numberReady",
                                        "numberAvailable",        "numberUnavailable"};

int64_t Count(const json::object& ds, std::string_view field) {
  return IntAt(ds, "status." + std::string(field), 0);
}

}  // namespace

bool MidUpdate(const json::object& local) {
  int64_t desired = Count(local, "desiredNumberScheduled");
  return IntAt(local, "status.observedGeneration", 0) != IntAt(local, "metadata.generation", 0) ||
         Count(local, "updatedNumberScheduled") != desired ||
         Count(local, "numberAvailable") != desired;
}

json::object AggregateStatus(const json::object& ds, const std::vector<LocalDaemonSet>& clusters) {
  const json::value* before = ds.if_contains("status");
  json::object status =
      before != nullptr && before->is_object() ? before->get_object() : json::object();
  int64_t updated = 0;
  bool observed = true;
  for (std::string_view field : kCounts) status[field] = 0;
  for (const LocalDaemonSet& c : clusters) {
    observed = observed && c.observed;
    if (c.local == nullptr) continue;
    for (std::string_view field : kCounts) {
      status[field] = status[field].as_int64() + Count(*c.local, field);
    }
    if (c.on_template && c.observed) updated += Count(*c.local, "updatedNumberScheduled");
  }
  status["updatedNumberScheduled"] = updated;
  if (observed) status["observedGeneration"] = IntAt(ds, "metadata.generation", 0);
  return status;
}

std::string BreakdownAnnotation(const std::string& revision,
                                const std::vector<LocalDaemonSet>& clusters) {
  json::object out;
  for (const LocalDaemonSet& c : clusters) {
    static const json::object kNone;
    const json::object& l = c.local != nullptr ? *c.local : kNone;
    out[c.cluster] =
        json::object{{"planned", Count(l, "desiredNumberScheduled")},
                     {"ready", Count(l, "numberReady")},
                     {"updated", c.on_template ? Count(l, "updatedNumberScheduled") : 0},
                     {"reachable", true},
                     {"rollout", Name(c.rollout)}};
  }
  return json::serialize(json::object{{"updateRevision", revision}, {"clusters", std::move(out)}});
}

// What one check knows between Plan and Finish.
struct DaemonSetController::State {
  RolloutPlan rollout;  // per copy
};

DaemonSetController::DaemonSetController(FederationContext& ctx, const WorkloadOptions& options)
    : ctx_(ctx),
      revisions_(ctx.informers().For(runtime::kControllerRevisions)),
      history_(ctx.fed(), revisions_, kDaemonSets, "DaemonSet") {
  // A local DaemonSet's progress moves the rollout on at once.
  reconciler_.emplace(
      ctx, *this,
      ReconcilerOptions{.name = kName,
                        .workers = options.workers,
                        .sync_grace = options.sync_grace,
                        .retry_soon = std::max<Duration>(options.member_change_delay,
                                                         std::chrono::milliseconds(100))});
  rollout_events_.emplace(reconciler_->events(), api::kDaemonSetStatusAnnotation);
}

const client::ResourceRef& DaemonSetController::resource() const { return kDaemonSets; }

void DaemonSetController::Forget(const std::string& key) { rollout_events_->Forget(key); }

Status DaemonSetController::Plan(Check& check) {
  auto state = std::make_shared<State>();
  check.state = state;
  RolloutMode mode = StringAt(check.obj(), "spec.updateStrategy.type") == "OnDelete"
                         ? RolloutMode::kAllAtOnce
                         : RolloutMode::kOneAtATime;
  state->rollout = reconciler_->PlanTemplateRollout(check, mode, MidUpdate);
  for (size_t i = 0; i < check.copies.size(); ++i) {
    Copy& c = check.copies[i];
    json::object desired = DesiredLocal(check.obj(), std::nullopt);
    if (!state->rollout.new_template[i] && c.Managed()) {
      if (const json::object* keep = TemplateOf(*c.existing)) {
        EnsureObject(desired, "spec")["template"] = *keep;
      }
    }
    c.desired = std::move(desired);
    c.create = true;
    // A local DaemonSet created now rolls out its first pods.
    if (c.existing == nullptr) state->rollout.states[i] = ClusterRollout::kUpdating;
  }
  reconciler_->ApplyOverrides(check, &state->rollout.new_template);
  return Status::Ok();
}

bool DaemonSetController::UpToDate(const Copy& c) const {
  return !NeedsUpdate(*c.existing, *c.desired);
}

json::object DaemonSetController::Updated(const Copy& c) const {
  return federation::Updated(*c.existing, *c.desired);
}

std::string DaemonSetController::Detail(const Copy& c) const { return "on every node"; }

StatusOr<runtime::Result> DaemonSetController::Finish(Check& check) {
  State& state = *std::any_cast<std::shared_ptr<State>&>(check.state);
  FLOTILLA_ASSIGN_OR_RETURN(runtime::Revisions revisions, history_.Sync(check.obj()));
  rollout_events_->Report(check, state.rollout,
                          std::to_string(IntAt(revisions.update, "revision", 0)));
  std::vector<LocalDaemonSet> clusters;
  for (size_t i = 0; i < check.copies.size(); ++i) {
    const Copy& c = check.copies[i];
    LocalDaemonSet l{.cluster = c.cluster(), .rollout = state.rollout.states[i]};
    l.local = c.Managed() ? c.Current() : nullptr;
    if (l.local != nullptr) {
      const json::object* want = state.rollout.TemplateFor(i, check.obj());
      l.on_template = want != nullptr && RunsTemplate(*l.local, *want);
      l.observed = c.desired && reconciler_->CopyUpToDate(check, c) &&
                   IntAt(*l.local, "status.observedGeneration", 0) ==
                       IntAt(*l.local, "metadata.generation", 0);
    }
    clusters.push_back(std::move(l));
  }
  std::string update(api::ObjectView(revisions.update).name());
  FLOTILLA_RETURN_IF_ERROR(WriteStatusIfChanged(
      ctx_.fed(), kDaemonSets, check.obj(), AggregateStatus(check.obj(), clusters),
      {{api::kDaemonSetStatusAnnotation, BreakdownAnnotation(update, clusters)}}));
  FLOTILLA_RETURN_IF_ERROR(history_.Truncate(check.obj(), revisions, {}));
  return runtime::Result{};
}

StatusOr<bool> DaemonSetController::Finalize(const json::object& obj) {
  return DeleteRevisions(ctx_.fed(), revisions_, obj);
}

}  // namespace flotilla::federation::daemonset

namespace flotilla::federation {

void RegisterDaemonSet(KindRegistry& kinds) {
  kinds.Add({.controller = daemonset::DaemonSetController::kName,
             .help = "federated DaemonSets: the whole DaemonSet in every selected cluster, rolled "
                     "out one cluster at a time",
             .kind = "DaemonSet",
             .propagates = {client::kDaemonSets},
             .admission = {.update_order = true},
             .listings = {WorkloadListing{.short_names = {"ds"},
                                          .breakdown_annotation = api::kDaemonSetStatusAnnotation}},
             .build = [](const KindEnv& env) {
               return std::make_shared<daemonset::DaemonSetController>(env.ctx, env.workloads);
             }});
}

}  // namespace flotilla::federation
