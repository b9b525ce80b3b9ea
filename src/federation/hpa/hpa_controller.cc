// The federated HorizontalPodAutoscaler controller (hpa_controller.h).
#include "federation/hpa/hpa_controller.h"

#include <algorithm>

#include "api/federated.h"
#include "api/views.h"
#include "base/mutex.h"
#include "federation/common/cluster_selector.h"
#include "federation/common/deletion.h"
#include "federation/common/federated_kind.h"
#include "federation/common/hpa_target.h"
#include "federation/common/local_workload.h"
#include "federation/common/member_copy.h"
#include "federation/common/object_writes.h"
#include "federation/common/placer.h"
#include "federation/hpa/status.h"

namespace flotilla::federation::hpa {

struct HpaController::State {
  bool invalid = false;
  std::vector<HpaCluster> clusters;  // one per copy
  Partition partition;
  std::vector<bool> frozen;       // per copy, after this check's writes
  std::optional<TimePoint> thaw;  // the earliest end of a freeze
};

namespace {

// The federated resource and kind an HPA's scaleTargetRef names, when the
// federation places that kind.
const client::ResourceRef* TargetResource(const json::object& hpa, std::string* kind) {
  api::HpaView view(hpa);
  *kind = view.target_kind();
  std::string_view api_version = view.target_api_version();
  if (api_version != "apps/v1" && !api_version.empty()) return nullptr;
  if (*kind == "Deployment") return &kDeployments;
  if (*kind == "ReplicaSet") return &kReplicaSets;
  return nullptr;
}

Bounds SharesOf(const json::object& local) {
  api::HpaView view(local);
  return {view.min_replicas(), view.max_replicas()};
}

// The local HPA with `shares` of the federated `hpa`.
json::object DesiredLocalHpa(const json::object& hpa, Bounds shares) {
  json::object spec;
  if (const json::value* s = hpa.if_contains("spec"); s != nullptr && s->is_object()) {
    spec = s->get_object();
  }
  spec["minReplicas"] = shares.min;
  spec["maxReplicas"] = shares.max;
  return json::object{{"apiVersion", kHorizontalPodAutoscalers.ApiVersion()},
                      {"kind", "HorizontalPodAutoscaler"},
                      {"metadata", MemberMetadata(hpa)},
                      {"spec", std::move(spec)}};
}

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string DescribeMove(const Move& m) {
  std::string from;
  for (const auto& [cluster, n] : m.from) {
    from += (from.empty() ? "" : ", ") + cluster + " (" + std::to_string(n) + ")";
  }
  return "moved " + std::to_string(m.amount) + " of " + (m.min ? "minReplicas" : "maxReplicas") +
         " to cluster " + m.to + " from " + from + ": " + m.reason;
}

}  // namespace

HpaController::HpaController(FederationContext& ctx, HpaOptions options)
    : ctx_(ctx),
      options_(options),
      deployments_(ctx.informers().For(kDeployments)),
      replicasets_(ctx.informers().For(kReplicaSets)) {
  reconciler_.emplace(ctx, *this,
                      ReconcilerOptions{.name = kName,
                                        .workers = options_.workers,
                                        .member_change_delay = options_.member_change_delay,
                                        .sync_grace = options_.sync_grace});
  // A target created, edited (its cluster list removed by hand) or deleted
  // checks the HPAs that scale it.
  for (auto target :
       {std::pair{&deployments_, &kDeployments}, std::pair{&replicasets_, &kReplicaSets}}) {
    auto* informer = target.first;
    const client::ResourceRef* resource = target.second;
    auto changed = [this, resource](const runtime::ObjectPtr& t) { EnqueueFor(*resource, *t); };
    informer->AddEventHandler({.on_add = changed,
                               .on_update = [changed](const runtime::ObjectPtr&,
                                                      const runtime::ObjectPtr& t) { changed(t); },
                               .on_delete = changed});
  }
}

std::vector<client::ResourceRef> HpaController::MemberReads() const {
  return {kDeployments, kReplicaSets};
}

void HpaController::EnqueueFor(const client::ResourceRef& resource, const json::object& target) {
  std::string ns(api::ObjectView(target).ns());
  std::string name(api::ObjectView(target).name());
  for (const runtime::ObjectPtr& hpa : reconciler_->objects().lister().List(ns)) {
    std::string kind;
    if (TargetResource(*hpa, &kind) == &resource && api::HpaView(*hpa).target_name() == name) {
      reconciler_->Enqueue(runtime::ObjectKey(*hpa));
    }
  }
}

runtime::ObjectPtr HpaController::TargetOf(const json::object& hpa,
                                           const client::ResourceRef** resource) const {
  std::string kind;
  *resource = TargetResource(hpa, &kind);
  if (*resource == nullptr) return nullptr;
  runtime::Informer& informer = *resource == &kDeployments ? deployments_ : replicasets_;
  api::HpaView view(hpa);
  return informer.lister().Get(view.ns(), view.target_name());
}

Status HpaController::Plan(Check& check) {
  auto state = std::make_shared<State>();
  check.state = state;
  api::HpaView federated(check.obj());
  // A policy that places the HPA weighs the clusters for its shares, or
  // gives each the whole of minReplicas and maxReplicas (Duplicated).
  std::optional<planner::Preferences> division;
  if (check.policy) {
    division = reconciler_->PolicyDivision(check, federated.max_replicas(), nullptr);
  }
  StatusOr<planner::Preferences> prefs =
      check.policy ? StatusOr<planner::Preferences>(division.value_or(planner::Preferences{}))
                   : PreferencesOf(check.obj(), api::kHpaPreferencesAnnotation);
  if (!prefs.ok()) {
    // Admission rejects these; one stored before cannot be partitioned.
    reconciler_->events().Event(check.obj(), runtime::kEventTypeWarning, "InvalidPreferences",
                                federation::Describe(prefs.status()));
    state->invalid = true;
    return Status::Ok();
  }
  Memory memory;
  {
    MutexLock lock(mu_);
    memory = memory_[check.key];
  }
  // Where the target's controller learned that it can run nothing.
  std::map<std::string, int64_t> capacity;
  const client::ResourceRef* resource = nullptr;
  if (runtime::ObjectPtr fed_target = TargetOf(check.obj(), &resource)) {
    capacity = EstimatedCapacities(*fed_target, resource->resource == "deployments"
                                                    ? api::kDeploymentStatusAnnotation
                                                    : api::kReplicaSetStatusAnnotation);
  }
  std::string kind;
  const client::ResourceRef* target = TargetResource(check.obj(), &kind);
  for (const Copy& c : check.copies) {
    state->clusters.push_back(ClusterOf(check, c, target, memory, capacity));
  }
  if (check.policy && !division) {
    state->partition =
        Duplicate({federated.min_replicas(), federated.max_replicas()}, state->clusters);
  } else {
    state->partition =
        PartitionHpa(federated.min_replicas(), federated.max_replicas(), *prefs, state->clusters,
                     {.min_transfer_load = options_.min_transfer_load});
  }
  for (Copy& c : check.copies) {
    auto share = state->partition.shares.find(c.cluster());
    if (share == state->partition.shares.end()) {
      c.create = false;
      c.remove = c.Managed();
      continue;
    }
    c.desired = DesiredLocalHpa(check.obj(), share->second);
    c.create = true;
  }
  return Status::Ok();
}

HpaCluster HpaController::ClusterOf(const Check& check, const Copy& c,
                                    const client::ResourceRef* target, const Memory& memory,
                                    const std::map<std::string, int64_t>& capacity) const {
  HpaCluster h{.name = c.cluster()};
  h.cordoned =
      c.target.cluster_object != nullptr && api::ClusterView(*c.target.cluster_object).cordoned();
  auto cap = capacity.find(c.cluster());
  h.full = !h.cordoned && cap != capacity.end() && cap->second == 0;
  if (target != nullptr) {
    if (auto informer = ctx_.members().Get(c.cluster(), target->resource)) {
      runtime::ObjectPtr t =
          informer->lister().Get(check.ns, api::HpaView(check.obj()).target_name());
      h.runs_target = t != nullptr && IsManaged(*t) && !api::IsBeingDeleted(*t) &&
                      api::WorkloadView(*t).replicas() > 0;
    }
  }
  const json::object* local = c.Managed() ? c.existing.get() : nullptr;
  // What this process decided counts first: the cache may lag its writes.
  if (auto w = memory.shares.find(c.cluster()); w != memory.shares.end()) {
    h.held = w->second;
  } else if (local != nullptr) {
    h.held = SharesOf(*local);
  }
  if (local != nullptr) {
    api::HpaView view(*local);
    h.current = view.current_replicas();
    h.desired = view.desired_replicas();
    h.load = LoadOf(*local);
  }
  if (auto t = memory.changed_at.find(c.cluster()); t != memory.changed_at.end()) {
    h.frozen = check.now < t->second + options_.freeze_window;
  }
  return h;
}

bool HpaController::UpToDate(const Copy& c) const { return !NeedsUpdate(*c.existing, *c.desired); }

json::object HpaController::Updated(const Copy& c) const {
  return federation::Updated(*c.existing, *c.desired);
}

std::string HpaController::Detail(const Copy& c) const {
  Bounds b = SharesOf(*c.desired);
  return "with minReplicas " + std::to_string(b.min) + " and maxReplicas " + std::to_string(b.max);
}

StatusOr<runtime::Result> HpaController::Finish(Check& check) {
  State& state = *std::any_cast<std::shared_ptr<State>&>(check.state);
  if (state.invalid) return runtime::Result{};
  bool tell_not_served = false;
  {
    MutexLock lock(mu_);
    Memory& m = memory_[check.key];
    if (m.not_served != check.not_served) {
      m.not_served = check.not_served;
      tell_not_served = !check.not_served.empty();
    }
    for (size_t i = 0; i < check.copies.size(); ++i) {
      const Copy& c = check.copies[i];
      if (!state.partition.shares.contains(c.cluster())) {
        m.shares.erase(c.cluster());
        m.changed_at.erase(c.cluster());
        state.frozen.push_back(false);
        continue;
      }
      // The intent, not what the member holds: a write that lost a race is
      // made again by the next check, and a cluster the shares came from
      // stays counted as having given them.
      const Bounds& now = state.partition.shares.at(c.cluster());
      const std::optional<Bounds>& held = state.clusters[i].held;
      if (!held || *held != now) m.changed_at[c.cluster()] = check.now;
      m.shares[c.cluster()] = now;
      auto t = m.changed_at.find(c.cluster());
      bool frozen = t != m.changed_at.end() && check.now < t->second + options_.freeze_window;
      state.frozen.push_back(frozen);
      if (frozen && (!state.thaw || t->second + options_.freeze_window < *state.thaw)) {
        state.thaw = t->second + options_.freeze_window;
      }
    }
  }
  if (tell_not_served) {
    reconciler_->events().Event(
        check.obj(), runtime::kEventTypeWarning, "HPAUnsupportedInCluster",
        "cluster(s) " + Join(check.not_served) + " do not serve " +
            kHorizontalPodAutoscalers.ApiVersion() +
            " HorizontalPodAutoscalers: they get no local HPA and no share of minReplicas and "
            "maxReplicas; the target's copies there keep the replicas they run");
  }
  Report(check, state);
  FLOTILLA_RETURN_IF_ERROR(PlaceTarget(check, state));

  std::vector<LocalHpa> locals;
  for (size_t i = 0; i < check.copies.size(); ++i) {
    const Copy& c = check.copies[i];
    auto share = state.partition.shares.find(c.cluster());
    if (share == state.partition.shares.end()) continue;
    locals.push_back({.cluster = c.cluster(),
                      .shares = share->second,
                      .local = c.Managed() ? c.Current() : nullptr,
                      .frozen = state.frozen[i]});
  }
  FLOTILLA_RETURN_IF_ERROR(
      WriteStatusIfChanged(ctx_.fed(), kHorizontalPodAutoscalers, check.obj(),
                           AggregateStatus(check.obj(), locals, check.now),
                           {{api::kHpaStatusAnnotation, BreakdownAnnotation(locals)}}));
  // A frozen cluster may give or take again once its freeze ends.
  if (state.thaw) {
    return runtime::Result{
        .requeue_after = std::max<Duration>(*state.thaw - check.now, std::chrono::milliseconds(1))};
  }
  return runtime::Result{};
}

void HpaController::Report(const Check& check, const State& state) {
  std::map<std::string, Bounds> before;
  for (const HpaCluster& c : state.clusters) {
    if (c.held) before[c.name] = *c.held;
  }
  for (const Move& m : state.partition.moves) {
    reconciler_->events().Event(check.obj(), runtime::kEventTypeNormal,
                                m.min ? "MinReplicasMoved" : "MaxReplicasMoved", DescribeMove(m));
  }
  if (before != state.partition.shares) {
    reconciler_->events().Event(
        check.obj(), runtime::kEventTypeNormal, "SharesChanged",
        "minReplicas/maxReplicas per cluster: " + Describe(state.partition.shares) + " (were " +
            Describe(before) + ")");
  }
}

Status HpaController::PlaceTarget(const Check& check, const State& state) {
  const client::ResourceRef* resource = nullptr;
  runtime::ObjectPtr target = TargetOf(check.obj(), &resource);
  if (target == nullptr || api::IsBeingDeleted(*target) || state.partition.chosen.empty()) {
    return Status::Ok();
  }
  HpaTargetList want{.hpa = check.name, .clusters = state.partition.chosen};
  std::sort(want.clusters.begin(), want.clusters.end());
  std::optional<HpaTargetList> have = HpaTargetListOf(*target);
  if (have == want) return Status::Ok();
  json::object typed =
      Typed(*resource, std::string(api::HpaView(check.obj()).target_kind()), *target);
  FLOTILLA_RETURN_IF_ERROR(SetAnnotation(ctx_.fed(), *resource, typed,
                                         api::kHpaTargetClusterListAnnotation,
                                         RenderHpaTargetList(want))
                               .status());
  std::string message = "HorizontalPodAutoscaler " + check.name + " places it in cluster(s) " +
                        Join(want.clusters) + "; their local HPAs set the replicas";
  if (!have || have->hpa != want.hpa) {
    message += " (its own placement preferences are overridden while the HPA exists)";
  }
  reconciler_->events().Event(typed, runtime::kEventTypeNormal, "PlacementByHPA", message);
  return Status::Ok();
}

StatusOr<bool> HpaController::Finalize(const json::object& obj) {
  const client::ResourceRef* resource = nullptr;
  runtime::ObjectPtr target = TargetOf(obj, &resource);
  if (target == nullptr) return true;
  std::optional<HpaTargetList> list = HpaTargetListOf(*target);
  std::string name(api::ObjectView(obj).name());
  if (!list || list->hpa != name) return true;
  json::object typed = Typed(*resource, std::string(api::HpaView(obj).target_kind()), *target);
  FLOTILLA_RETURN_IF_ERROR(
      SetAnnotations(ctx_.fed(), *resource, typed, {}, {api::kHpaTargetClusterListAnnotation})
          .status());
  reconciler_->events().Event(
      typed, runtime::kEventTypeNormal, "PlacementByPreferences",
      "HorizontalPodAutoscaler " + name + " is gone: its own placement preferences place it again");
  return true;
}

void HpaController::Forget(const std::string& key) {
  MutexLock lock(mu_);
  memory_.erase(key);
}

}  // namespace flotilla::federation::hpa

namespace flotilla::federation {

void RegisterHpa(KindRegistry& kinds) {
  kinds.Add({.controller = "hpa",
             .help = "federated HorizontalPodAutoscalers: minReplicas and maxReplicas shared "
                     "between the members' local HPAs",
             .kind = "HorizontalPodAutoscaler",
             .propagates = {hpa::kHorizontalPodAutoscalers},
             .admission = {.preferences_annotation = api::kHpaPreferencesAnnotation},
             .build = [](const KindEnv& env) {
               return std::make_shared<hpa::HpaController>(env.ctx,
                                                           env.options.Get<hpa::HpaOptions>());
             }});
}

}  // namespace flotilla::federation
