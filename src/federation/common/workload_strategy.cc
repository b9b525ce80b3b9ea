// What the strategies of replica-placing workloads share
// (workload_strategy.h).
#include "federation/common/workload_strategy.h"

#include <algorithm>

#include "api/deployment/deployment_util.h"
#include "api/views.h"
#include "federation/common/cluster_selector.h"
#include "federation/common/deletion.h"
#include "federation/common/member_copy.h"
#include "federation/common/policies.h"

namespace flotilla::federation {
namespace {

constexpr char kLocationAffinityCondition[] = "LocationAffinity";

}  // namespace

WorkloadStrategy::WorkloadStrategy(FederationContext& ctx, WorkloadOptions options,
                                   const std::string& kind, std::string preferences_annotation,
                                   std::string breakdown_annotation)
    : ctx_(ctx),
      options_(options),
      placer_(options.placer(), ctx.metrics(), kind),
      preferences_annotation_(std::move(preferences_annotation)),
      breakdown_annotation_(std::move(breakdown_annotation)) {}

std::vector<client::ResourceRef> WorkloadStrategy::WithApplicationReads(
    std::vector<client::ResourceRef> reads) const {
  if (options_.applications != nullptr) reads.push_back(kNodes);
  return reads;
}

void WorkloadStrategy::StartReconciler(const std::string& name, Duration copy_change_delay) {
  reconciler_.emplace(
      ctx_, *this,
      ReconcilerOptions{.name = name,
                        .workers = options_.workers,
                        .member_change_delay = copy_change_delay,
                        .sync_grace = options_.sync_grace,
                        .retry_soon = std::max<Duration>(options_.member_change_delay,
                                                         std::chrono::milliseconds(100)),
                        .room_recheck = options_.recheck_delay});
  if (options_.applications != nullptr) {
    options_.applications->AddKind(resource(), kind(), preferences_annotation_,
                                   [this](const std::string& key) { reconciler_->Enqueue(key); });
  }
}

WorkloadPlan& WorkloadStrategy::PlanOf(Check& check) {
  return *std::any_cast<std::shared_ptr<WorkloadPlan>&>(check.state);
}

const WorkloadPlan& WorkloadStrategy::PlanOf(const Check& check) {
  return *std::any_cast<const std::shared_ptr<WorkloadPlan>&>(check.state);
}

bool WorkloadStrategy::Place(Check& check, std::shared_ptr<WorkloadPlan> plan) {
  check.state = plan;
  plan->replicas = api::WorkloadView(check.obj()).replicas();
  StatusOr<planner::Preferences> prefs =
      check.policy ? StatusOr<planner::Preferences>(PolicyPreferences(check, *plan))
                   : PreferencesOf(check.obj(), preferences_annotation_);
  if (!prefs.ok()) {
    // Admission rejects these; one stored before cannot be planned.
    reconciler_->events().Event(check.obj(), runtime::kEventTypeWarning, "InvalidPreferences",
                                Describe(prefs.status()));
    plan->invalid = true;
    return false;
  }
  plan->prefs = *std::move(prefs);
  std::vector<WorkloadInCluster> clusters;
  for (const Copy& c : check.copies) {
    const json::object* cluster = c.target.cluster_object.get();
    WorkloadInCluster w{.cluster = c.cluster(),
                        .cordoned = cluster != nullptr && api::ClusterView(*cluster).cordoned(),
                        .draining = cluster != nullptr && api::ClusterView(*cluster).draining()};
    if (c.existing != nullptr && IsManaged(*c.existing) && !api::IsBeingDeleted(*c.existing)) {
      w.local = c.existing;
      PodsOf(c.cluster(), *c.existing, w);
    }
    clusters.push_back(std::move(w));
  }
  plan->placement = placer_.Place(check.key, plan->replicas, plan->prefs, clusters,
                                  LastCheckOf(check.obj(), breakdown_annotation_), check.now);
  plan->hpa = HpaTargetListOf(check.obj());
  if (plan->hpa) {
    FollowHpa(check, *plan);
  } else if (plan->duplicated) {
    FollowDuplicated(check, *plan);
  } else if (options_.applications != nullptr) {
    plan->coupled = options_.applications->Place(check.obj(), check.now);
    if (plan->coupled) FollowApplication(check, *plan);
  }
  return true;
}

planner::Preferences WorkloadStrategy::PolicyPreferences(const Check& check,
                                                         WorkloadPlan& plan) const {
  std::optional<planner::Preferences> prefs = reconciler_->PolicyDivision(
      check, plan.replicas, api::WorkloadView(check.obj()).pod_template());
  plan.duplicated = !prefs.has_value();
  // Duplicated: the placer's counts are replaced (FollowDuplicated); its
  // bookkeeping still runs on an even spread.
  return prefs ? *std::move(prefs) : planner::Preferences::Default();
}

void WorkloadStrategy::FollowDuplicated(const Check& check, WorkloadPlan& plan) {
  Targets& t = plan.placement.targets;
  t = Targets{};
  auto draining = [](const Copy& c) {
    const json::object* cluster = c.target.cluster_object.get();
    return cluster != nullptr && api::ClusterView(*cluster).draining();
  };
  // A draining cluster gives its replicas up only when another admitted
  // cluster runs them: what can go nowhere waits where it is.
  bool elsewhere = std::any_of(check.copies.begin(), check.copies.end(),
                               [&](const Copy& c) { return !draining(c); });
  for (const Copy& c : check.copies) {
    const json::object* cluster = c.target.cluster_object.get();
    int64_t held = c.Managed() ? api::WorkloadView(*c.existing).replicas() : 0;
    int64_t n = plan.replicas;
    if (draining(c)) {
      n = elsewhere ? 0 : std::min(n, held);
    } else if (cluster != nullptr && api::ClusterView(*cluster).cordoned()) {
      n = std::min(n, held);  // a cordoned cluster keeps at most what it holds
    }
    t.replicas[c.cluster()] = n;
  }
}

void WorkloadStrategy::FollowApplication(const Check& check, WorkloadPlan& plan) {
  Targets& t = plan.placement.targets;
  t = Targets{};
  for (const Copy& c : check.copies) {
    int64_t& n = t.replicas[c.cluster()];
    if (!plan.coupled->seen.contains(c.cluster())) {
      // The application did not see this cluster (it became ready, or
      // stopped being, during the check): its copy stays as it is.
      n = c.Managed() ? api::WorkloadView(*c.existing).replicas() : 0;
    } else if (auto it = plan.coupled->replicas.find(c.cluster());
               it != plan.coupled->replicas.end()) {
      n = it->second;
    }
  }
  if (std::optional<TimePoint> at = plan.coupled->next_check) {
    std::optional<TimePoint>& next = plan.placement.next_check;
    if (!next || *at < *next) next = *at;
  }
}

bool WorkloadStrategy::KeepNotAdmitted(const Check& check, const std::string& cluster) const {
  const WorkloadPlan& plan = PlanOf(check);
  if (plan.coupled) return plan.coupled->keep == cluster;
  // Make-before-break: a copy with available replicas stays until the
  // admitted clusters have theirs available.
  if (plan.hpa || plan.unavailable == 0) return false;
  std::shared_ptr<runtime::Informer> copies = ctx_.members().Get(cluster, resource());
  runtime::ObjectPtr copy =
      copies ? copies->lister().Get(check.ns, CopyName(check.obj(), cluster)) : nullptr;
  return copy != nullptr && IsManaged(*copy) && api::WorkloadView(*copy).available_replicas() > 0;
}

void WorkloadStrategy::SetAffinityCondition(const Check& check, json::object& status) const {
  const WorkloadPlan& plan = PlanOf(check);
  api::deployment::RemoveCondition(status, kLocationAffinityCondition);
  if (const json::array* left = GetArray(status, "conditions"); left && left->empty()) {
    status.erase("conditions");
  }
  if (!plan.coupled) return;
  json::object cond{{"type", kLocationAffinityCondition},
                    {"status", plan.coupled->placed ? "True" : "False"},
                    {"reason", plan.coupled->reason},
                    {"message", plan.coupled->message},
                    {"lastTransitionTime", FormatRfc3339(check.now)}};
  // The time of the last change of status is kept.
  const json::value* old = Find(check.obj(), "status.conditions");
  for (const json::value& c : old && old->is_array() ? old->get_array() : json::array()) {
    if (c.is_object() && GetString(c.get_object(), "type") == kLocationAffinityCondition &&
        GetString(c.get_object(), "status") == GetString(cond, "status")) {
      if (const json::value* t = c.get_object().if_contains("lastTransitionTime")) {
        cond["lastTransitionTime"] = *t;
      }
    }
  }
  json::value& conds = status["conditions"];
  if (!conds.is_array()) conds = json::array();
  conds.as_array().push_back(std::move(cond));
}

void WorkloadStrategy::FollowHpa(const Check& check, WorkloadPlan& plan) const {
  Targets& t = plan.placement.targets;
  // The capacities learned stay: the HPA reads them (a cluster that can run
  // none of the pods gives its shares up).
  t = Targets{.capacity = std::move(t.capacity)};
  for (const Copy& c : check.copies) {
    int64_t n = 0;
    if (std::binary_search(plan.hpa->clusters.begin(), plan.hpa->clusters.end(), c.cluster())) {
      n = c.Managed() ? std::max<int64_t>(api::WorkloadView(*c.existing).replicas(), 1) : 1;
    } else if (c.Managed() && !ctx_.members().Serves(c.cluster(), kHpaResource)) {
      // A member without the HPA's API gets no local HPA; its copy keeps
      // what it runs (the HPA controller's Event says so).
      n = api::WorkloadView(*c.existing).replicas();
    }
    t.replicas[c.cluster()] = n;
  }
}

Status WorkloadStrategy::FollowLocalReplicas(Check& check) {
  const WorkloadPlan& plan = PlanOf(check);
  if (!plan.hpa) return Status::Ok();
  int64_t sum = 0;
  for (const Copy& c : check.copies) sum += plan.placement.ReplicasFor(c.cluster());
  if (sum == api::WorkloadView(check.obj()).replicas()) return Status::Ok();
  json::object obj = check.obj();
  EnsureObject(obj, "spec")["replicas"] = sum;
  FLOTILLA_ASSIGN_OR_RETURN(json::object written, ctx_.fed().Update(resource(), check.ns, obj));
  check.SetObj(Typed(resource(), kind(), std::move(written)));
  return Status::Ok();
}

namespace {

// A copy runs `want` replicas, all of them ready.
bool Holds(const api::WorkloadView& copy, int64_t want) {
  return copy.ready_replicas() == want && copy.status_replicas() == want;
}

}  // namespace

void HoldMoves(const Check& check, WorkloadPlan& plan) {
  plan.held.assign(check.copies.size(), 0);
  plan.unavailable = 0;
  std::vector<int64_t> spare(check.copies.size(), 0);
  for (size_t i = 0; i < check.copies.size(); ++i) {
    const Copy& c = check.copies[i];
    int64_t target = plan.placement.ReplicasFor(c.cluster());
    int64_t placed = 0, available = 0;
    if (const json::object* local = c.Managed() ? c.Current() : nullptr) {
      api::WorkloadView v(*local);
      placed = v.replicas();
      available = std::min(v.available_replicas(), placed);
    }
    // What a full cluster cannot run (its probes) is not waited for.
    int64_t runnable = target;
    if (auto cap = plan.placement.targets.capacity.find(c.cluster());
        cap != plan.placement.targets.capacity.end()) {
      runnable = std::min(runnable, cap->second);
    }
    plan.unavailable += std::max<int64_t>(0, runnable - std::min(available, runnable));
    spare[i] = std::max<int64_t>(0, available - target);
  }
  // Under an HPA the local HPAs move the counts; a coupled application
  // moves whole by its own rule.
  if (plan.hpa || plan.coupled) return;
  int64_t hold = plan.unavailable;
  for (size_t i = 0; i < spare.size() && hold > 0; ++i) {
    plan.held[i] = std::min(spare[i], hold);
    hold -= plan.held[i];
  }
}

void WorkloadStrategy::SetDesired(Check& check) const {
  WorkloadPlan& plan = PlanOf(check);
  HoldMoves(check, plan);
  for (size_t i = 0; i < check.copies.size(); ++i) {
    Copy& c = check.copies[i];
    int64_t replicas = plan.placement.ReplicasFor(c.cluster()) + plan.held[i];
    c.create = replicas > 0 && !plan.placement.views[i].create_failed;
    // No copy there and none to make: nothing reads a desired one (with
    // 100 clusters and one replica, building them was a quarter of the
    // federation's CPU).
    if (c.Current() == nullptr && !c.create) {
      c.desired.reset();
    } else {
      c.desired = DesiredCopy(check, i, replicas);
    }
    // Not among the HPA's clusters, or where its application does not run:
    // no local object there.
    c.remove = (plan.hpa || plan.coupled) && replicas == 0 && c.Managed();
  }
}

bool WorkloadStrategy::Replan(Check& check) {
  WorkloadPlan& plan = PlanOf(check);
  std::vector<std::string> failed;
  for (const Copy& c : check.copies) {
    if (c.create_failed) failed.push_back(c.cluster());
  }
  placer_.CreateFailed(check.key, failed, plan.replicas, plan.prefs, plan.placement, check.now);
  if (plan.hpa) FollowHpa(check, plan);
  if (plan.coupled) FollowApplication(check, plan);
  SetDesired(check);
  return true;
}

Unmanaged WorkloadStrategy::OnUnmanaged(const Copy& c) const {
  // Taken over only where the federation places replicas ([E2]).
  return api::WorkloadView(*c.desired).replicas() > 0 ? Unmanaged::kTakeOver
                                                      : Unmanaged::kLeaveQuietly;
}

bool WorkloadStrategy::MustReplace(const Copy& c) const {
  // A selector cannot change.
  const json::object* have = api::WorkloadView(*c.existing).selector();
  const json::object* want = api::WorkloadView(*c.desired).selector();
  return have != nullptr && want != nullptr && *have != *want;
}

std::string WorkloadStrategy::Detail(const Copy& c) const {
  return "with " + std::to_string(api::WorkloadView(*c.desired).replicas()) + " replicas";
}

void WorkloadStrategy::Settle(const Check& check) {
  // Under a federated HPA the local HPAs move the counts: no move, no
  // event (the HPA's own events tell of its clusters).
  bool by_hpa = PlanOf(check).hpa.has_value();
  std::optional<std::string> changed = placer_.Settle(check.key, PlanOf(check).placement, !by_hpa);
  if (changed && !by_hpa) {
    reconciler_->events().Event(check.obj(), runtime::kEventTypeNormal, "PlacementChanged",
                                *changed);
  }
}

runtime::Result WorkloadStrategy::NextCheck(const Check& check) const {
  const WorkloadPlan& plan = PlanOf(check);
  // Not in its desired state yet: check again later ([I7], [I8]).
  bool settled = true;
  for (size_t i = 0; i < check.copies.size(); ++i) {
    const Copy& c = check.copies[i];
    const json::object* local = c.Managed() ? c.Current() : nullptr;
    int64_t want = plan.placement.ReplicasFor(check.copies[i].cluster());
    bool ready = local == nullptr ? want == 0 : Holds(api::WorkloadView(*local), want);

    const ClusterView& v = plan.placement.views[i];
    settled = settled && ready && v.pending == 0 && !v.create_failed;
  }
  Duration after = settled ? Duration::zero() : options_.recheck_delay;
  if (plan.placement.next_check) {
    Duration until =
        std::max<Duration>(*plan.placement.next_check - check.now, std::chrono::milliseconds(1));
    after = after == Duration::zero() ? until : std::min(after, until);
  }
  return runtime::Result{.requeue_after = after};
}

}  // namespace flotilla::federation
