// The reconciler of federated objects (reconciler.h).
#include "federation/common/reconciler.h"

#include <algorithm>
#include <map>
#include <set>

#include "api/annotations.h"
#include "api/federated.h"
#include "api/views.h"
#include "base/mutex.h"
#include "federation/common/deletion.h"
#include "federation/common/member_copy.h"
#include "federation/common/object_writes.h"
#include "federation/common/policies.h"
#include "federation/common/rollout.h"
#include "interpreter/native.h"

namespace flotilla::federation {
namespace {

// A write to the federated object that conflicts (the cache is behind) is
// no failure: the newer object's event brings the key back.
StatusOr<runtime::Result> Quiet(const Status& s) {
  if (s.ok() || s.Is(Reason::kConflict)) return runtime::Result{};
  return s;
}

// A write that lost a race with someone else's (the member's cache is
// behind, or the object changed meanwhile).
bool IsRace(const Status& s) {
  return s.Is(Reason::kConflict) || s.Is(Reason::kNotFound) || s.Is(Reason::kAlreadyExists);
}

// The sooner of two re-checks (zero: none).
// The replicas of the workload `demand` describes that `cluster` has room
// for: the pods of its template the cluster has free plus the replicas of
// it ready there in `copy` (their pods are in the cluster's allocated
// figures; pending ones are not). None without figures.
std::optional<int64_t> RoomFor(const json::object& cluster, const Strategy::Demand& demand,
                               const runtime::ObjectPtr& copy) {
  std::optional<int64_t> free = AvailableReplicas(cluster, demand.pod_template);
  if (!free) return std::nullopt;
  return *free +
         (copy != nullptr && IsManaged(*copy) ? api::WorkloadView(*copy).ready_replicas() : 0);
}

Duration Sooner(Duration a, Duration b) {
  if (a == Duration::zero()) return b;
  if (b == Duration::zero()) return a;
  return std::min(a, b);
}

}  // namespace

const json::object* Copy::Current() const {
  if (written) return &*written;
  return existing.get();
}

std::string CopyBreakdown(const std::vector<Copy>& copies,
                          const std::function<BreakdownCell(const json::object* current)>& cell) {
  json::object clusters;
  for (const Copy& c : copies) {
    if (!c.desired) continue;
    BreakdownCell b = cell(c.Managed() ? c.Current() : nullptr);
    clusters[c.cluster()] = json::object{{"planned", b.planned}, {"ready", b.ready}};
  }
  return json::serialize(json::object{{"clusters", std::move(clusters)}});
}

bool Copy::Managed() const {
  const json::object* c = Current();
  return c != nullptr && IsManaged(*c) && !api::IsBeingDeleted(*c);
}

void Check::ClearError() {
  MutexLock lock(mu_);
  error_ = Status::Ok();
}

void Check::Fail(const Status& s) {
  MutexLock lock(mu_);
  if (error_.ok()) error_ = s;
}

Status Check::error() const {
  MutexLock lock(mu_);
  return error_;
}

std::string Strategy::CopyName(const json::object& obj, const std::string&) const {
  return std::string(api::ObjectView(obj).name());
}

json::object Typed(const client::ResourceRef& resource, const std::string& kind, json::object obj) {
  obj["apiVersion"] = resource.ApiVersion();
  obj["kind"] = kind;
  return obj;
}

runtime::ObjectPtr Typed(const client::ResourceRef& resource, const std::string& kind,
                         runtime::ObjectPtr obj) {
  auto says = [&](std::string_view field, std::string_view want) {
    const json::value* v = obj->if_contains(field);
    return v != nullptr && v->is_string() && v->get_string() == want;
  };
  if (says("kind", kind) && says("apiVersion", resource.ApiVersion())) return obj;
  return std::make_shared<const json::object>(Typed(resource, kind, *obj));
}

Reconciler::Reconciler(FederationContext& ctx, Strategy& strategy, ReconcilerOptions options)
    : ctx_(ctx),
      strategy_(strategy),
      options_(std::move(options)),
      reads_([&] {
        std::vector<client::ResourceRef> r{strategy.resource()};
        for (const client::ResourceRef& more : strategy.MemberReads()) r.push_back(more);
        return r;
      }()),
      objects_(ctx.informers().For(strategy.resource())),
      writer_(ctx, ctx.Events("federation-" + options_.name + "-controller")),
      replica_writes_(ctx.metrics().Counter(
          "flotilla_federation_replica_count_writes_total",
          "Updates by the federation that changed spec.replicas of an object in a member.",
          {"kind", "cluster"})),
      expectations_(ctx.clock(), options_.expectation_ttl) {
  controller_ = &ctx.manager().AddController(
      options_.name, std::max(1, options_.workers),
      [this](const std::string& key) { return Reconcile(key); }, options_.backoff);
  objects_handler_ = objects_.AddEventHandler(controller_->EnqueueHandler());
  hooks_.push_back(ctx.AddFinalizedResource(
      strategy.resource(),
      [&strategy](const json::object& obj) { return strategy.Federates(obj); }));
  member_handlers_.push_back(ctx.members().AddHandler(
      strategy.resource(), [this](const std::string& cluster) { return MemberHandler(cluster); }));
  for (const client::ResourceRef& r : strategy.MemberReads()) {
    member_handlers_.push_back(ctx.members().AddHandler(r, [this](const std::string&) {
      return runtime::EventHandler{.on_synced = [this] { EnqueueAll(); }};
    }));
  }
  hooks_.push_back(ctx.OnClusterChange([this] { EnqueueAll(); }));
  ctx.AddReconciler(*this);
}

Reconciler::~Reconciler() {
  // Nothing enqueues any more, then the workers stop (a check under way
  // ends first).
  ctx_.RemoveReconciler(*this);
  for (FederationContext::HookId id : hooks_) ctx_.RemoveHook(id);
  for (MemberInformers::HandlerId id : member_handlers_) ctx_.members().RemoveHandler(id);
  objects_.RemoveEventHandler(objects_handler_);
  std::unique_ptr<runtime::Controller> removed = ctx_.manager().RemoveController(*controller_);
  controller_->ShutDown();
}

bool Reconciler::Reconciles(std::string_view api_version, std::string_view kind) const {
  return strategy_.kind() == kind && strategy_.resource().ApiVersion() == api_version;
}

runtime::EventHandler Reconciler::MemberHandler(const std::string& cluster) {
  // A change of a copy (or of a same-named object) re-checks its federated
  // object.
  auto changed = [this, cluster](const runtime::ObjectPtr& obj) {
    std::string key = api::AnnotationAt(*obj, api::kFederatedObjectAnnotation);
    if (key.empty() || !IsManaged(*obj)) key = runtime::ObjectKey(*obj);
    expectations_.Observed(key, cluster, *obj);
    Enqueue(key, options_.member_change_delay);
  };
  return {.on_add = changed,
          .on_update = [changed](const runtime::ObjectPtr&,
                                 const runtime::ObjectPtr& obj) { changed(obj); },
          .on_delete = changed,
          .on_synced = [this] { EnqueueAll(); }};
}

void Reconciler::Enqueue(const std::string& key, Duration delay) {
  if (objects_.cache().Get(key) == nullptr) return;
  if (delay > Duration::zero()) {
    controller_->queue().AddAfter(key, delay);
  } else {
    controller_->queue().Add(key);
  }
}

void Reconciler::EnqueueAll() {
  for (const std::string& key : objects_.cache().Keys()) controller_->queue().Add(key);
}

StatusOr<runtime::Result> Reconciler::Reconcile(const std::string& key) {
  bool deferred = false;
  StatusOr<runtime::Result> result = CheckKey(key, deferred);
  // The last object of the first pass: the policies' counts are whole
  // once every reconciler's are.
  if (!deferred && Checked(key)) ctx_.policy_statuses().EnqueueAll();
  return result;
}

bool Reconciler::FirstPassDone() {
  Checked("");
  MutexLock lock(first_mu_);
  return first_listed_ && first_pending_.empty();
}

bool Reconciler::Checked(const std::string& key) {
  MutexLock lock(first_mu_);
  if (!first_listed_) {
    if (!objects_.HasSynced()) return false;
    std::vector<std::string> keys = objects_.cache().Keys();
    first_pending_ = std::set<std::string>(keys.begin(), keys.end());
    first_listed_ = true;
  }
  if (first_pending_.empty()) return false;
  first_pending_.erase(key);
  return first_pending_.empty();
}

StatusOr<runtime::Result> Reconciler::CheckKey(const std::string& key, bool& deferred) {
  runtime::ObjectPtr cached = objects_.cache().Get(key);
  if (cached == nullptr) {
    Forget(key);
    return runtime::Result{};
  }
  if (!strategy_.Federates(*cached)) return runtime::Result{};
  Check check;
  check.SetObj(Typed(strategy_.resource(), strategy_.kind(), cached));
  if (api::IsBeingDeleted(check.obj())) return Delete(check.obj());
  check.key = key;
  check.custom = ctx_.customizations().For(strategy_.resource().ApiVersion(), strategy_.kind());
  api::ObjectView view(check.obj());
  check.ns = view.ns();
  check.name = view.name();
  check.now = ctx_.clock().Now();

  StatusOr<ObjectPlacement> placement =
      ctx_.policies().PlacementOf(check.obj(), strategy_.resource().ApiVersion(), strategy_.kind(),
                                  strategy_.PreferencesAnnotation());
  if (!placement.ok()) {
    // Admission refuses these; one stored before it existed places nothing.
    events().Event(check.obj(), runtime::kEventTypeWarning, "InvalidClusterSelector",
                   Describe(placement.status()));
    return runtime::Result{};
  }
  const ClusterSelector* selector = &placement->selector;
  const ClusterSelector nowhere = ClusterSelector::Nowhere();
  if (!placement->placed && strategy_.FollowsDependentsOnly()) selector = &nowhere;
  check.policy = placement->policy;
  MemberTargets targets = ReadyTargets(ctx_, reads_, options_.sync_grace);
  if (targets.waiting) {
    deferred = true;
    return runtime::Result{.requeue_after = options_.sync_grace};
  }
  check.not_served = std::move(targets.not_served);

  SeeTaints(check, targets.ready);
  ClusterSelector group;
  if (check.policy && !check.policy->affinity_groups.empty()) {
    group = ChooseAffinityGroup(check, targets.ready);
    selector = &group;
  }
  std::vector<Target> not_admitted;
  for (Target& t : targets.ready) {
    // No Cluster object: the cluster is leaving; what it holds stays.
    if (t.cluster_object == nullptr) continue;
    if (!selector->Matches(*t.cluster_object) && !NeededIn(check, t.cluster)) {
      not_admitted.push_back(std::move(t));
      continue;
    }
    Copy c{.target = std::move(t)};
    c.name = strategy_.CopyName(check.obj(), c.cluster());
    c.existing = Cached(check, c.cluster(), c.name);
    check.copies.push_back(std::move(c));
  }
  if (check.policy && check.policy->Spreads()) Spread(check, *selector, not_admitted);
  check.selector = *selector;
  for (const Target& t : not_admitted) check.not_admitted.push_back(t.cluster);
  // A check decides on caches that show the earlier checks' writes; the
  // caches' events of them bring the key back.
  bool behind = std::any_of(check.copies.begin(), check.copies.end(), [&](const Copy& c) {
    return expectations_.Behind(key, c.cluster(), c.existing);
  });
  for (const Target& t : not_admitted) {
    const std::string name = strategy_.CopyName(check.obj(), t.cluster);
    behind = expectations_.Behind(key, t.cluster, Cached(check, t.cluster, name)) || behind;
  }
  if (behind) {
    deferred = true;
    return runtime::Result{.requeue_after = options_.expectation_ttl};
  }
  if (Duration wait = PaceMove(check, not_admitted); wait > Duration::zero()) {
    deferred = true;
    return runtime::Result{.requeue_after = wait};
  }
  // The finalizer comes before the first copy does. An object created while
  // a cluster was joined has it from its create (the admission puts it on,
  // FederationContext::FinalizesAtCreate); a federation without members
  // pays no write for it. One that has neither it nor its policy's
  // annotations yet (written before the controllers ran) gets both in one
  // write.
  bool finalize = !check.copies.empty() || !not_admitted.empty();
  if (StatusOr<bool> recorded = RecordPolicy(check, finalize); !recorded.ok()) {
    deferred = true;
    return Quiet(recorded.status());
  }
  ctx_.policy_statuses().Placed(strategy_.kind() + " " + key, check.policy.get());

  FLOTILLA_RETURN_IF_ERROR(strategy_.Plan(check));
  if (strategy_.TakesOverrides()) ApplyOverrides(check);
  if (Status s = RecordOverrides(check); !s.ok()) {
    deferred = true;
    return Quiet(s);
  }
  FLOTILLA_RETURN_IF_ERROR(RecordDependencies(check));
  StampAll(check);
  CreateAll(check);
  UpdateAll(check);
  DeleteUnwanted(check, not_admitted);
  StatusOr<runtime::Result> result = strategy_.Finish(check);
  if (!result.ok()) return Quiet(result.status());
  FLOTILLA_RETURN_IF_ERROR(check.error());
  if (check.retry) result->requeue_after = Sooner(result->requeue_after, options_.retry_soon);
  if (check.waiting_for_room) {
    result->requeue_after = Sooner(result->requeue_after, options_.room_recheck);
  }
  if (check.taints_change_at) {
    Duration left = std::max(Duration::zero(), *check.taints_change_at - check.now);
    result->requeue_after = Sooner(result->requeue_after, left + std::chrono::seconds(1));
  }
  return result;
}

void Reconciler::Spread(Check& check, const ClusterSelector& selector,
                        std::vector<Target>& not_admitted) {
  const api::policy::PropagationPolicy& policy = *check.policy;
  const std::string field = policy.SpreadField();
  std::optional<Strategy::Demand> demand = strategy_.DemandOf(check.obj());
  bool duplicated = policy.scheduling.type == api::policy::ReplicaSchedulingType::kDuplicated;
  std::vector<api::policy::SpreadCandidate> candidates;
  std::set<std::string> holding;
  for (const Copy& c : check.copies) {
    if (!selector.Matches(*c.target.cluster_object)) continue;  // a dependency's
    bool holds = c.existing != nullptr && IsManaged(*c.existing);
    if (holds) holding.insert(c.cluster());
    // A cordoned cluster gets nothing new.
    if (!holds && api::ClusterView(*c.target.cluster_object).cordoned()) continue;
    api::policy::SpreadCandidate s{.name = c.cluster(), .holds = holds};
    if (!field.empty()) {
      api::policy::ClusterFacts facts = api::policy::ClusterFacts::Of(*c.target.cluster_object);
      s.group = field == api::policy::kRegionField ? facts.region
                : field == api::policy::kProviderField
                    ? facts.provider
                    : (facts.zones.empty() ? "" : facts.zones.front());
    }
    // Room matters for divided replicas only (every cluster runs them all
    // otherwise).
    if (demand && !duplicated) s.available = RoomFor(*c.target.cluster_object, *demand, c.existing);
    candidates.push_back(std::move(s));
  }
  std::optional<int64_t> need;
  if (demand && !duplicated) need = demand->replicas;
  StatusOr<std::vector<std::string>> chosen =
      api::policy::SelectBySpread(policy.spread, std::move(candidates), need);
  std::set<std::string> keep = holding;
  if (chosen.ok()) {
    keep = std::set<std::string>(chosen->begin(), chosen->end());
  } else {
    events().Event(check.obj(), runtime::kEventTypeWarning, "SpreadConstraintsUnsatisfied",
                   "the spread constraints of policy(" + policy.Ref() +
                       ") cannot be met: " + chosen.status().message() +
                       (holding.empty() ? "; placed nowhere" : "; left where it is"));
  }
  std::vector<Copy> kept;
  for (Copy& c : check.copies) {
    if (keep.contains(c.cluster()) || NeededIn(check, c.cluster())) {
      kept.push_back(std::move(c));
    } else {
      not_admitted.push_back(std::move(c.target));
    }
  }
  check.copies = std::move(kept);
}

void Reconciler::SeeTaints(Check& check, std::vector<Target>& ready) const {
  std::span<const api::policy::ClusterToleration> tolerations;
  if (check.policy) tolerations = check.policy->tolerations;
  for (Target& t : ready) {
    if (t.cluster_object == nullptr) continue;
    std::vector<api::policy::ClusterTaint> taints = api::policy::TaintsOf(*t.cluster_object);
    if (taints.empty()) continue;
    api::policy::TaintVerdict v = api::policy::JudgeTaints(taints, tolerations, check.now);
    if (v.changes_at && (!check.taints_change_at || *v.changes_at < *check.taints_change_at)) {
      check.taints_change_at = v.changes_at;
    }
    api::ClusterView view(*t.cluster_object);
    bool unschedulable = (view.unschedulable() && !v.cordon_tolerated) || v.no_schedule;
    bool draining = view.draining() || v.no_execute;
    if (unschedulable == view.unschedulable() && draining == view.draining()) continue;
    auto seen = std::make_shared<json::object>(*t.cluster_object);
    json::object& spec = EnsureObject(*seen, "spec");
    spec["unschedulable"] = unschedulable;
    spec["draining"] = draining;
    t.cluster_object = std::move(seen);
  }
}

ClusterSelector Reconciler::ChooseAffinityGroup(Check& check,
                                                const std::vector<Target>& ready) const {
  const auto& groups = check.policy->affinity_groups;
  std::optional<Strategy::Demand> demand = strategy_.DemandOf(check.obj());
  bool duplicated =
      check.policy->scheduling.type == api::policy::ReplicaSchedulingType::kDuplicated;
  const api::policy::PropagationPolicy::AffinityGroup* fallback = nullptr;
  for (const auto& g : groups) {
    // Room for the workload in its ready, schedulable clusters (RoomFor);
    // a cluster without figures has room.
    int64_t room = 0, most = 0;
    bool any = false, unknown = false;
    for (const Target& t : ready) {
      if (t.cluster_object == nullptr || !g.affinity.Matches(*t.cluster_object)) continue;
      if (api::ClusterView(*t.cluster_object).cordoned()) continue;
      any = true;
      if (!demand) break;
      std::optional<int64_t> free =
          RoomFor(*t.cluster_object, *demand,
                  Cached(check, t.cluster, strategy_.CopyName(check.obj(), t.cluster)));
      if (!free) {
        unknown = true;
        break;
      }
      int64_t here = *free;
      room += here;
      most = std::max(most, here);
    }
    if (!any) continue;
    if (fallback == nullptr) fallback = &g;
    // Divided replicas need the group's room together, duplicated ones one
    // cluster's (every cluster of the group runs them all).
    if (!demand || unknown || (duplicated ? most : room) >= demand->replicas) {
      check.waiting_for_room = fallback != &g;
      return ClusterSelector::ForAffinity(g.affinity);
    }
  }
  return ClusterSelector::ForAffinity((fallback != nullptr ? *fallback : groups.front()).affinity);
}

void Reconciler::ApplyOverrides(Check& check, const std::vector<bool>* new_template) {
  const std::string api_version = strategy_.resource().ApiVersion();
  const std::string kind = strategy_.kind();
  std::map<std::string, PolicyStatuses::Failure> failures;
  for (size_t i = 0; i < check.copies.size(); ++i) {
    Copy& c = check.copies[i];
    if (!c.desired || c.target.cluster_object == nullptr) continue;
    json::object copy = *c.desired;
    std::shared_ptr<const api::policy::OverridePolicy> failed;
    Status s = ctx_.overrides().Apply(check.obj(), api_version, kind, *c.target.cluster_object,
                                      copy, &failed);
    if (!s.ok()) {
      // Left as it is: not created, not updated.
      events().Event(check.obj(), runtime::kEventTypeWarning, "ApplyOverridePolicyFailed",
                     "cluster " + c.cluster() + ": " + s.message());
      failures[c.cluster()] = {.policy = std::move(failed), .message = s.message()};
      c.desired.reset();
      c.create = false;
      continue;
    }
    if (new_template != nullptr && i < new_template->size() && !(*new_template)[i] &&
        c.existing != nullptr) {
      if (const json::object* kept = TemplateOf(*c.desired)) {
        EnsureObject(copy, "spec")["template"] = *kept;
      }
    }
    c.desired = std::move(copy);
  }
  ctx_.policy_statuses().Overridden(strategy_.kind() + " " + check.key, failures);
  // Which policies change the copy in each cluster, for kubectl describe.
  json::object summary;
  for (const Copy& c : check.copies) {
    if (!c.desired) continue;
    json::array names;
    for (const auto& [key, kind] :
         {std::pair{api::policy::kAppliedClusterOverridesAnnotation, "ClusterOverridePolicy "},
          std::pair{api::policy::kAppliedOverridesAnnotation, "OverridePolicy "}}) {
      std::string text = api::AnnotationAt(*c.desired, key);
      if (text.empty()) continue;
      StatusOr<json::value> applied = ParseJson(text);
      if (!applied.ok() || !applied->is_array()) continue;
      for (const json::value& a : applied->get_array()) {
        if (!a.is_object()) continue;
        std::string name(GetString(a.get_object(), "policyName").value_or(""));
        if (kind[0] == 'O' && !check.ns.empty()) name = check.ns + "/" + name;
        names.push_back(json::string(kind + name));
      }
    }
    if (!names.empty()) summary[c.cluster()] = std::move(names);
  }
  check.overrides_annotation = summary.empty() ? "" : json::serialize(summary);
}

Status Reconciler::RecordOverrides(Check& check) {
  if (!check.overrides_annotation) return Status::Ok();
  std::map<std::string, std::string> set;
  std::vector<std::string> remove;
  if (check.overrides_annotation->empty()) {
    remove.push_back(api::kOverridesAnnotation);
  } else {
    set[api::kOverridesAnnotation] = *check.overrides_annotation;
  }
  FLOTILLA_ASSIGN_OR_RETURN(
      std::optional<json::object> written,
      SetAnnotations(ctx_.fed(), strategy_.resource(), check.obj(), set, remove));
  if (written) check.SetObj(Typed(strategy_.resource(), strategy_.kind(), *std::move(written)));
  return Status::Ok();
}

json::object Reconciler::TemplateFor(const Check& check, const Copy& c,
                                     const json::object& tmpl) const {
  if (ctx_.overrides().Empty() || c.target.cluster_object == nullptr) return tmpl;
  json::object obj = check.obj();
  EnsureObject(obj, "spec")["template"] = tmpl;
  if (!ctx_.overrides()
           .Apply(check.obj(), strategy_.resource().ApiVersion(), strategy_.kind(),
                  *c.target.cluster_object, obj)
           .ok()) {
    return tmpl;
  }
  const json::object* out = TemplateOf(obj);
  return out != nullptr ? *out : tmpl;
}

RolloutPlan Reconciler::PlanTemplateRollout(
    const Check& check, RolloutMode mode,
    const std::function<bool(const json::object&)>& busy) const {
  const json::object* tmpl = TemplateOf(check.obj());
  std::vector<json::object> templates;
  if (tmpl != nullptr && !ctx_.overrides().Empty()) {
    for (const Copy& c : check.copies) templates.push_back(TemplateFor(check, c, *tmpl));
  }
  static const json::object kNone;
  std::vector<ClusterTemplate> facts;
  for (size_t i = 0; i < check.copies.size(); ++i) {
    const Copy& c = check.copies[i];
    ClusterTemplate f{.cluster = c.cluster()};
    if (c.Managed()) {
      f.exists = true;
      const json::object* want = i < templates.size() ? &templates[i] : tmpl;
      f.on_template = RunsTemplate(*c.existing, want != nullptr ? *want : kNone);
      f.busy = busy(*c.existing);
    }
    facts.push_back(std::move(f));
  }
  RolloutPlan plan = PlanRollout(check.obj(), facts, mode);
  plan.cluster_templates = std::move(templates);
  return plan;
}

std::optional<planner::Preferences> Reconciler::PolicyDivision(
    const Check& check, int64_t replicas, const json::object* pod_template) const {
  std::vector<DivisionCluster> clusters;
  for (const Copy& c : check.copies) {
    DivisionCluster d{.name = c.cluster(), .cluster = c.target.cluster_object.get()};
    if (c.Managed()) d.current = api::WorkloadView(*c.existing).replicas();
    if (d.cluster != nullptr) d.available = AvailableReplicas(*d.cluster, pod_template);
    clusters.push_back(std::move(d));
  }
  return DivisionPreferences(*check.policy, replicas, clusters);
}

Unmanaged Reconciler::OnUnmanaged(const Check& check, const Copy& c) const {
  Unmanaged how = strategy_.OnUnmanaged(c);
  if (!check.policy || how == Unmanaged::kLeaveQuietly) return how;
  // A policy's conflictResolution decides, as in Karmada.
  return check.policy->overwrite_conflicts ? Unmanaged::kTakeOver : Unmanaged::kWarn;
}

bool Reconciler::PreservedByPolicy(const json::object& obj) const {
  StatusOr<ObjectPlacement> placement = ctx_.policies().PlacementOf(
      obj, strategy_.resource().ApiVersion(), strategy_.kind(), strategy_.PreferencesAnnotation());
  return placement.ok() && placement->policy && placement->policy->preserve_on_deletion;
}

StatusOr<bool> Reconciler::RecordPolicy(Check& check, bool finalize) {
  json::object wanted = PolicyAnnotations(check.policy.get());
  bool changed = false;
  for (const std::string& key : PolicyAnnotationKeys()) {
    const json::value* want = wanted.if_contains(key);
    const json::value* have = api::FindAnnotation(check.obj(), key);
    changed = changed || (want == nullptr) != (have == nullptr) || (want && *want != *have);
  }
  // Most checks find both in place: the object is copied only to change it.
  if (!changed && !(finalize && NeedsFederationFinalizer(check.obj()))) return false;
  json::object updated = check.obj();
  if (finalize) AddFederationFinalizer(updated);
  if (changed) {
    json::object& annotations = EnsureObject(EnsureObject(updated, "metadata"), "annotations");
    for (const std::string& key : PolicyAnnotationKeys()) annotations.erase(key);
    for (const auto& [key, value] : wanted) annotations[key] = value;
    if (annotations.empty()) updated["metadata"].as_object().erase("annotations");
  }
  FLOTILLA_ASSIGN_OR_RETURN(json::object written,
                            ctx_.fed().Update(strategy_.resource(), check.ns, updated));
  if (changed) {
    ctx_.policy_statuses().Recorded(strategy_.kind() + " " + check.key, check.obj(),
                                    check.policy.get());
  }
  check.SetObj(Typed(strategy_.resource(), strategy_.kind(), std::move(written)));
  if (!changed) return false;
  if (check.policy) {
    events().Event(check.obj(), runtime::kEventTypeNormal, "ApplyPolicySucceed",
                   "Apply policy(" + check.policy->Ref() + ") succeed");
  }
  return true;
}

runtime::ObjectPtr Reconciler::Cached(const Check& check, const std::string& cluster,
                                      const std::string& name) const {
  std::shared_ptr<runtime::Informer> informer = ctx_.members().Get(cluster, strategy_.resource());
  return informer != nullptr ? informer->lister().Get(check.ns, name) : nullptr;
}

Duration Reconciler::PaceMove(const Check& check, const std::vector<Target>& not_admitted) {
  bool leaving = std::any_of(not_admitted.begin(), not_admitted.end(), [&](const Target& t) {
    runtime::ObjectPtr copy = Cached(check, t.cluster, strategy_.CopyName(check.obj(), t.cluster));
    return copy != nullptr && IsManaged(*copy) && !api::IsBeingDeleted(*copy);
  });
  MutexLock lock(moving_mu_);
  if (!leaving) {
    moving_.erase(check.key);
    return Duration::zero();
  }
  if (moving_.contains(check.key)) return Duration::zero();
  Duration wait = ctx_.moves().TryTake();
  if (wait == Duration::zero()) moving_.insert(check.key);
  return wait;
}

void Reconciler::Forget(const std::string& key) {
  {
    MutexLock lock(moving_mu_);
    moving_.erase(key);
  }
  ctx_.policy_statuses().Gone(strategy_.kind() + " " + key);
  EnqueueDependencies(ctx_.dependencies().Remove(DependentId(key)));
  strategy_.Forget(key);
  expectations_.Forget(key);
  versions_.Forget(key);
}

void Reconciler::StampAll(Check& check) {
  for (Copy& c : check.copies) {
    if (c.desired) c.desired_hash = StampDesiredHash(*c.desired);
  }
}

void Reconciler::Remember(const std::string& key, const Copy& c, const json::object& written) {
  versions_.Remember(key, c.cluster(),
                     {.want = c.desired_hash, .got = OwnedHash(written, *c.desired)});
}

bool Reconciler::CopyUpToDate(const Check& check, const Copy& c) {
  const json::object* have = c.Current();
  if (have == nullptr || !c.desired) return false;
  // Written for another desired copy, or not by the federation as it is.
  if (DesiredHashOf(*have) != HashText(c.desired_hash)) return false;
  bool retains = check.custom != nullptr && check.custom->Has(interpreter::Operation::kRetain);
  if (std::optional<CopyVersions::Written> w = versions_.Find(check.key, c.cluster());
      w && w->want == c.desired_hash) {
    // A member's change of what Retain keeps is judged below.
    if (OwnedHash(*have, *c.desired) == w->got) return true;
    if (!retains) return false;
  }
  Copy judged = c;
  judged.existing = std::make_shared<const json::object>(*have);
  judged.written.reset();
  if (retains) judged.desired = Retained(check.custom, *c.desired, *have);
  if (!strategy_.UpToDate(judged)) return false;
  Remember(check.key, c, *have);
  return true;
}

Status Reconciler::Interpreted(const Check& check, Status s) {
  if (!s.ok()) {
    events().Event(check.obj(), runtime::kEventTypeWarning, "InterpreterFailed",
                   std::string(s.message()));
  }
  return s;
}

namespace {

// False for a copy scaled to zero whose pods are gone (a workload kept in a
// cluster it left, as the seeds keep local objects): what its template uses
// is not needed there.
bool RunsPods(const Copy& c) {
  const json::value* want = Find(*c.desired, "spec.replicas");
  if (want == nullptr || !want->is_number() || want->to_number<int64_t>() > 0) return true;
  const json::object* now = c.Current();
  const json::value* have = now != nullptr ? Find(*now, "status.replicas") : nullptr;
  return have != nullptr && have->is_number() && have->to_number<int64_t>() > 0;
}

}  // namespace

Status Reconciler::RecordDependencies(const Check& check) {
  std::vector<DependencyRef> refs;
  std::set<std::string> clusters;
  // A customization's dependencies are the user's word; otherwise the
  // built-in interpreter's, unless the policy says propagateDeps: false.
  std::optional<json::array> named;
  if (check.custom != nullptr && check.custom->Has(interpreter::Operation::kInterpretDependency)) {
    StatusOr<json::array> custom = interpreter::GetDependencies(*check.custom, check.obj());
    FLOTILLA_RETURN_IF_ERROR(Interpreted(check, custom.status()));
    named = *std::move(custom);
  } else if (check.policy == nullptr || check.policy->propagate_deps != false) {
    named = interpreter::NativeDependencies(strategy_.resource().ApiVersion(), strategy_.kind(),
                                            check.obj());
  }
  if (named) {
    refs = DependencyRefs(*named, check.ns);
    for (DependencyRef& r : refs) {
      if (ctx_.ClusterScoped(r.api_version, r.kind)) r.ns.clear();
    }
    for (const Copy& c : check.copies) {
      if (c.desired && !c.remove && RunsPods(c)) clusters.insert(c.cluster());
    }
  }
  EnqueueDependencies(
      ctx_.dependencies().Set(DependentId(check.key), std::move(refs), std::move(clusters)));
  return Status::Ok();
}

bool Reconciler::NeededIn(const Check& check, const std::string& cluster) const {
  return ctx_.dependencies().NeededIn(
      {strategy_.resource().ApiVersion(), strategy_.kind(), check.ns, check.name}, cluster);
}

std::string Reconciler::DependentId(const std::string& key) const {
  return strategy_.resource().group + "/" + strategy_.resource().resource + ":" + key;
}

void Reconciler::EnqueueDependencies(const std::vector<DependencyRef>& refs) {
  for (const DependencyRef& r : refs) {
    ctx_.EnqueueObject(r.api_version, r.kind, r.ns, r.name);
  }
}

void Reconciler::Create(Check& check, std::vector<size_t> which) {
  writer_.ForEach(which.size(), [&](size_t w) {
    Copy& c = check.copies[which[w]];
    expectations_.Expect(check.key, c.cluster(), nullptr);
    StatusOr<json::object> made = writer_.Create(check.obj(), c.target, strategy_.resource(),
                                                 *c.desired, strategy_.Detail(c));
    expectations_.Done(check.key, c.cluster(), made);
    if (made.ok()) {
      Remember(check.key, c, *made);
      c.written = *std::move(made);
    } else if (made.status().Is(Reason::kAlreadyExists)) {
      check.retry = true;  // the cache is behind the member
    } else {
      c.create_failed = true;
      check.Fail(made.status());
    }
  });
}

void Reconciler::CreateAll(Check& check) {
  auto todo = [&] {
    std::vector<size_t> out;
    for (size_t i = 0; i < check.copies.size(); ++i) {
      const Copy& c = check.copies[i];
      if (c.existing == nullptr && !c.written && !c.create_failed && c.desired && c.create &&
          !c.remove) {
        out.push_back(i);
      }
    }
    return out;
  };
  Create(check, todo());
  bool failed = std::any_of(check.copies.begin(), check.copies.end(),
                            [](const Copy& c) { return c.create_failed; });
  if (failed && strategy_.Replan(check)) {
    check.ClearError();
    StampAll(check);
    Create(check, todo());
  }
}

StatusOr<json::object> Reconciler::Replace(Check& check, const Copy& c) {
  bool managed = IsManaged(*c.existing);
  if (!strategy_.MustReplace(c)) {
    return writer_.Update(check.obj(), c.target, strategy_.resource(),
                          Retained(check.custom, strategy_.Updated(c), *c.existing));
  }
  // Replaced: its dependents stay for the new object to adopt where they
  // match.
  client::DeleteOptions orphan = DeleteOptionsFor(*c.existing, "Orphan");
  FLOTILLA_RETURN_IF_ERROR(writer_.Delete(check.obj(), c.target, strategy_.resource(), check.ns,
                                          c.name, orphan,
                                          managed ? "(a field that cannot change differs; replaced)"
                                                  : "(not created by the federation; replaced)"));
  return writer_.Create(check.obj(), c.target, strategy_.resource(), *c.desired,
                        strategy_.Detail(c));
}

void Reconciler::UpdateAll(Check& check) {
  std::vector<size_t> todo;
  for (size_t i = 0; i < check.copies.size(); ++i) {
    Copy& c = check.copies[i];
    if (c.written || !c.desired || c.remove || c.existing == nullptr ||
        api::IsBeingDeleted(*c.existing)) {
      continue;
    }
    if (!IsManaged(*c.existing)) {
      switch (OnUnmanaged(check, c)) {
        case Unmanaged::kLeaveQuietly:
          continue;
        case Unmanaged::kWarn:
          events().Event(check.obj(), runtime::kEventTypeWarning, "NotManagedInCluster",
                         Describe(check.obj()) + " in cluster " + c.cluster() +
                             " exists and is not managed by the federation (no " +
                             api::kManagedByLabel + "=" + api::kManagedByValue +
                             " label): left alone");
          continue;
        case Unmanaged::kTakeOver:
          break;
      }
    } else if (CopyUpToDate(check, c)) {
      continue;
    }
    todo.push_back(i);
  }
  writer_.ForEach(todo.size(), [&](size_t t) {
    Copy& c = check.copies[todo[t]];
    bool managed = IsManaged(*c.existing);
    expectations_.Expect(check.key, c.cluster(), c.existing);
    StatusOr<json::object> updated =
        managed && !strategy_.MustReplace(c)
            ? writer_.Update(check.obj(), c.target, strategy_.resource(),
                             Retained(check.custom, strategy_.Updated(c), *c.existing),
                             strategy_.Detail(c))
            : Replace(check, c);
    expectations_.Done(check.key, c.cluster(), updated);
    if (!updated.ok()) {
      if (IsRace(updated.status())) {
        check.retry = true;  // changed or deleted meanwhile: the next check sees it
      } else {
        check.Fail(updated.status());
      }
      return;
    }
    Remember(check.key, c, *updated);
    const json::value* before = Find(*c.existing, "spec.replicas");
    const json::value* after = Find(*updated, "spec.replicas");
    if (after != nullptr && (before == nullptr || *before != *after)) {
      replica_writes_.Add({strategy_.kind(), c.cluster()}, 1);
    }
    c.written = *std::move(updated);
    if (!managed) {
      events().Event(check.obj(), runtime::kEventTypeWarning, "OverwriteInCluster",
                     "A " + strategy_.kind() + " " + c.name +
                         " the federation did not create existed in cluster " + c.cluster() +
                         "; it now follows " + Describe(check.obj()) +
                         " and may adopt what its selector matches");
    }
  });
}

void Reconciler::DeleteUnwanted(Check& check, const std::vector<Target>& not_admitted) {
  struct Unwanted {
    const Target* target;
    std::string name;
    runtime::ObjectPtr copy;
    const char* why;
  };
  std::vector<Unwanted> todo;
  // Until every dependent has been checked once, a copy this object's own
  // placement does not admit may be one a dependent needs there.
  const bool dependents_known = ctx_.DependentsKnown();
  for (const Target& t : not_admitted) {
    if (strategy_.KeepNotAdmitted(check, t.cluster)) continue;
    std::string name = strategy_.CopyName(check.obj(), t.cluster);
    runtime::ObjectPtr copy = Cached(check, t.cluster, name);
    if (!dependents_known && copy != nullptr) {
      check.retry = true;
      continue;
    }
    todo.push_back({&t, std::move(name), std::move(copy),
                    "(the cluster selector no longer admits the cluster)"});
  }
  for (const Copy& c : check.copies) {
    if (c.remove) todo.push_back({&c.target, c.name, c.existing, "(no longer wanted there)"});
  }
  std::erase_if(todo, [](const Unwanted& u) {
    return u.copy == nullptr || !IsManaged(*u.copy) || api::IsBeingDeleted(*u.copy);
  });
  writer_.ForEach(todo.size(), [&](size_t i) {
    const Unwanted& u = todo[i];
    client::DeleteOptions opts = DeleteOptionsFor(*u.copy, "Background");
    expectations_.Expect(check.key, u.target->cluster, u.copy);
    Status s =
        writer_.Delete(check.obj(), *u.target, strategy_.resource(), check.ns, u.name, opts, u.why);
    expectations_.Done(check.key, u.target->cluster, s);
    if (IsRace(s)) {
      check.retry = true;
    } else if (!s.ok()) {
      check.Fail(s);
    }
  });
}

StatusOr<runtime::Result> Reconciler::Delete(const json::object& obj) {
  std::string key = runtime::ObjectKey(obj);
  if (!HasFinalizer(obj, api::kDeleteFromUnderlyingClustersFinalizer)) {
    Forget(key);
    return runtime::Result{};
  }
  if (DeletesMemberCopies(obj) && !PreservedByPolicy(obj)) {
    std::string policy = api::AnnotationAt(obj, api::kDeletionPropagationAnnotation);
    std::string ns(api::ObjectView(obj).ns());
    MemberTargets targets = ReadyTargets(ctx_, std::span(reads_).first(1), Duration::zero());
    std::atomic<bool> remaining = targets.waiting;
    writer_.ForEach(targets.ready.size(), [&](size_t i) {
      const Target& t = targets.ready[i];
      std::string name = strategy_.CopyName(obj, t.cluster);
      std::shared_ptr<runtime::Informer> informer =
          ctx_.members().Get(t.cluster, strategy_.resource());
      runtime::ObjectPtr copy = informer ? informer->lister().Get(ns, name) : nullptr;
      if (copy == nullptr) {
        // The cache may lag a copy created just now: ask the member.
        StatusOr<json::object> live = writer_.Get(t, strategy_.resource(), ns, name);
        if (live.ok()) {
          copy = std::make_shared<const json::object>(*std::move(live));
        } else if (!live.status().Is(Reason::kNotFound)) {
          remaining = true;  // cannot tell: check again
          return;
        }
      }
      if (copy == nullptr || !IsManaged(*copy)) return;
      remaining = true;
      if (api::IsBeingDeleted(*copy)) return;
      client::DeleteOptions opts = DeleteOptionsFor(*copy, policy);

      (void)writer_.Delete(obj, t, strategy_.resource(), ns, name, opts);
    });
    // The member caches' delete events bring the key back sooner.
    if (remaining) return runtime::Result{.requeue_after = options_.retry_soon};
  }
  StatusOr<bool> done = strategy_.Finalize(obj);
  if (!done.ok()) return Quiet(done.status());
  if (!*done) return runtime::Result{.requeue_after = options_.retry_soon};
  StatusOr<json::object> released =
      RemoveFederationFinalizer(ctx_.fed(), strategy_.resource(), obj);
  if (!released.ok()) return Quiet(released.status());
  Forget(key);
  return runtime::Result{};
}

}  // namespace flotilla::federation
