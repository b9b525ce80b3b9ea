// The federated StatefulSet controller (statefulset_controller.h).
#include "federation/statefulset/statefulset_controller.h"

#include <algorithm>
#include <map>

#include "api/annotations.h"
#include "api/federated.h"
#include "api/owner.h"
#include "api/views.h"
#include "base/mutex.h"
#include "federation/common/cluster_selector.h"
#include "federation/common/deletion.h"
#include "federation/common/federated_kind.h"
#include "federation/common/local_workload.h"
#include "federation/common/member_copy.h"
#include "federation/common/object_writes.h"
#include "federation/common/revision_history.h"
#include "federation/statefulset/identities.h"
#include "federation/statefulset/partition.h"
#include "federation/statefulset/status.h"

namespace flotilla::federation::statefulset {

// What one check knows between Plan and Finish.
struct StatefulSetController::State {
  bool invalid = false;  // preferences that do not parse: nothing is done
  // Every admitted joined cluster's share, unreachable ones included.
  planner::ReplicaCounts shares;
  std::map<std::string, bool> reachable;
  // Clusters whose <name>-<cluster> is too long to be a StatefulSet's name.
  std::vector<std::string> too_long;
  RolloutPlan rollout;  // per copy
};

StatefulSetController::State& StatefulSetController::StateOf(Check& check) {
  return *std::any_cast<std::shared_ptr<State>&>(check.state);
}

StatefulSetController::StatefulSetController(FederationContext& ctx, WorkloadOptions options)
    : ctx_(ctx),
      options_(options),
      services_(ctx.informers().For(kServices)),
      revisions_(ctx.informers().For(runtime::kControllerRevisions)),
      history_(ctx.fed(), revisions_) {
  // A local StatefulSet's progress moves the rollout on at once.
  reconciler_.emplace(
      ctx, *this,
      ReconcilerOptions{.name = kName,
                        .workers = options.workers,
                        .sync_grace = options.sync_grace,
                        .retry_soon = std::max<Duration>(options.member_change_delay,
                                                         std::chrono::milliseconds(100))});
  rollout_events_.emplace(reconciler_->events(), api::kStatefulSetStatusAnnotation);
  auto service_changed = [this](const runtime::ObjectPtr& svc) { EnqueueServiceOwners(*svc); };
  services_.AddEventHandler(
      {.on_add = service_changed,
       .on_update = [service_changed](const runtime::ObjectPtr&,
                                      const runtime::ObjectPtr& svc) { service_changed(svc); },
       .on_delete = service_changed});
  auto revision_changed = [this](const runtime::ObjectPtr& rev) {
    std::string owner = api::ControllerName(*rev, "StatefulSet");
    if (!owner.empty()) {
      reconciler_->Enqueue(runtime::ObjectKey(api::ObjectView(*rev).ns(), owner));
    }
  };
  revisions_.AddEventHandler({.on_delete = revision_changed});
}

std::string StatefulSetController::CopyName(const json::object& obj,
                                            const std::string& cluster) const {
  return LocalName(std::string(api::ObjectView(obj).name()), cluster);
}

void StatefulSetController::EnqueueServiceOwners(const json::object& svc) {
  std::string ns(api::ObjectView(svc).ns());
  const json::value* labels = Find(svc, "metadata.labels");
  if (labels != nullptr && labels->is_object()) {
    if (auto owner = GetString(labels->get_object(), kStatefulSetLabel)) {
      reconciler_->Enqueue(runtime::ObjectKey(ns, *owner));
      return;
    }
  }
  // A governing Service: the StatefulSets of its namespace that name it.
  std::string name(api::ObjectView(svc).name());
  for (const runtime::ObjectPtr& sts :
       reconciler_->objects().cache().ByIndex(runtime::kNamespaceIndex, ns)) {
    if (api::WorkloadView(*sts).service_name() == name)
      reconciler_->Enqueue(runtime::ObjectKey(*sts));
  }
}

planner::ReplicaCounts StatefulSetController::Partition(Check& check, State& state,
                                                        const planner::Preferences* prefs) {
  std::map<std::string, int64_t> last = LastPlanned(check.obj(), api::kStatefulSetStatusAnnotation);
  {
    MutexLock lock(mu_);
    if (auto it = decided_.find(check.key); it != decided_.end()) {
      last = std::map<std::string, int64_t>(it->second.begin(), it->second.end());
    }
  }
  int64_t replicas = api::WorkloadView(check.obj()).replicas();
  std::vector<StatefulCluster> clusters;
  for (const runtime::ObjectPtr& cluster : ctx_.cluster_objects().lister().List()) {
    std::string name(api::ObjectView(*cluster).name());
    auto copy = std::find_if(check.copies.begin(), check.copies.end(),
                             [&](const Copy& c) { return c.cluster() == name; });
    bool ready = copy != check.copies.end();
    // A ready cluster the placement does not admit gets nothing; one that
    // is not ready keeps its share where the placement admits it.
    if (!ready && (std::ranges::find(check.not_admitted, name) != check.not_admitted.end() ||
                   !check.selector.Matches(*cluster))) {
      continue;
    }
    if (CopyName(check.obj(), name).size() > api::kMaxStatefulSetNameLength) {
      state.too_long.push_back(name);
      continue;
    }
    // A ready cluster as the object's policy sees it (its taints).
    const json::object& seen =
        ready && copy->target.cluster_object != nullptr ? *copy->target.cluster_object : *cluster;
    StatefulCluster c{.name = name, .ready = ready, .cordoned = api::ClusterView(seen).cordoned()};
    if (auto planned = last.find(name); planned != last.end()) {
      // What the federation placed there: a hand edit moves nothing.
      c.current = planned->second;
    } else if (c.ready && copy->existing != nullptr && IsManaged(*copy->existing)) {
      c.current = api::WorkloadView(*copy->existing).replicas();
    }
    state.reachable[name] = c.ready;
    clusters.push_back(std::move(c));
  }
  if (prefs != nullptr) return statefulset::Partition(replicas, clusters, *prefs);
  // Duplicated: every admitted ready cluster runs all the replicas (a
  // cordoned one keeps at most what it holds); the others keep theirs.
  planner::ReplicaCounts out;
  for (const StatefulCluster& c : clusters) {
    out[c.name] = !c.ready ? c.current : c.cordoned ? std::min(c.current, replicas) : replicas;
  }
  return out;
}

void StatefulSetController::Forget(const std::string& key) {
  rollout_events_->Forget(key);
  MutexLock lock(mu_);
  decided_.erase(key);
}

Status StatefulSetController::Plan(Check& check) {
  auto shared = std::make_shared<State>();
  check.state = shared;
  State& state = *shared;
  // The policy that places it divides the replicas (its weights say where
  // new ones go and which go first), or duplicates them.
  std::optional<planner::Preferences> prefs;
  if (check.policy) {
    prefs = reconciler_->PolicyDivision(check, api::WorkloadView(check.obj()).replicas(),
                                        api::WorkloadView(check.obj()).pod_template());
  } else {
    StatusOr<planner::Preferences> annotated =
        PreferencesOf(check.obj(), api::kStatefulSetPreferencesAnnotation);
    if (!annotated.ok()) {
      // Admission rejects these; one stored before cannot be planned.
      reconciler_->events().Event(check.obj(), runtime::kEventTypeWarning, "InvalidPreferences",
                                  Describe(annotated.status()));
      state.invalid = true;
      return Status::Ok();
    }
    prefs = *std::move(annotated);
  }
  state.shares = Partition(check, state, prefs ? &*prefs : nullptr);
  {
    MutexLock lock(mu_);
    decided_[check.key] = state.shares;
  }
  RolloutMode mode = StringAt(check.obj(), "spec.updateStrategy.type") == "OnDelete"
                         ? RolloutMode::kAllAtOnce
                         : RolloutMode::kOneAtATime;
  state.rollout = reconciler_->PlanTemplateRollout(
      check, mode, [](const json::object& local) { return MidUpdate(local); });
  for (size_t i = 0; i < check.copies.size(); ++i) {
    Copy& c = check.copies[i];
    auto share = state.shares.find(c.cluster());
    if (share == state.shares.end()) continue;  // its name would be too long
    json::object desired = DesiredLocal(check.obj(), share->second);
    EnsureObject(desired, "metadata")["name"] = c.name;
    if (!state.rollout.new_template[i] && c.Managed()) {
      if (const json::object* keep = TemplateOf(*c.existing)) {
        EnsureObject(desired, "spec")["template"] = *keep;
      }
    }
    c.desired = std::move(desired);
    c.create = share->second > 0;
    // A local StatefulSet created now rolls out its first pods.
    if (c.existing == nullptr && c.create) state.rollout.states[i] = ClusterRollout::kUpdating;
  }
  reconciler_->ApplyOverrides(check, &state.rollout.new_template);
  return Status::Ok();
}

bool StatefulSetController::UpToDate(const Copy& c) const {
  return !NeedsUpdate(*c.existing, *c.desired);
}

json::object StatefulSetController::Updated(const Copy& c) const {
  return federation::Updated(*c.existing, *c.desired);
}

std::string StatefulSetController::Detail(const Copy& c) const {
  return "as " + c.name + " with " + std::to_string(api::WorkloadView(*c.desired).replicas()) +
         " replicas";
}

namespace {

// `obj` is controlled by `uid`, or by nothing (an orphaning delete of its
// owner stripped the reference).
bool OwnedOrOrphaned(const json::object& obj, std::string_view uid) {
  const json::object* owner = api::ControllerRef(obj);
  return owner == nullptr || GetString(*owner, "uid") == uid;
}

}  // namespace

std::vector<runtime::ObjectPtr> StatefulSetController::LoadBalancers(
    const json::object& sts) const {
  std::vector<runtime::ObjectPtr> out;
  api::ObjectView set(sts);
  for (runtime::ObjectPtr& svc : services_.lister().ByLabel(kStatefulSetLabel, set.name())) {
    if (api::ObjectView(*svc).ns() == set.ns() && OwnedOrOrphaned(*svc, set.uid())) {
      out.push_back(std::move(svc));
    }
  }
  return out;
}

Status StatefulSetController::SyncServices(Check& check, const State& state) {
  std::vector<StatefulPod> pods = Pods(check.name, state.shares);
  bool lb = api::AnnotationAt(check.obj(), api::kStatefulSetLbNeededAnnotation) == "true";
  runtime::ObjectPtr governing =
      services_.lister().Get(check.ns, api::WorkloadView(check.obj()).service_name());
  if (governing != nullptr) {
    FLOTILLA_RETURN_IF_ERROR(
        SetAnnotations(ctx_.fed(), kServices, *governing,
                       {{api::kStatefulSetLbNeededAnnotation, lb ? "true" : "false"},
                        {api::kStatefulReplicaListAnnotation, ReplicaList(pods)}})
            .status());
  } else if (lb) {
    reconciler_->events().Event(check.obj(), runtime::kEventTypeWarning, "NoGoverningService",
                                "No Service " +
                                    std::string(api::WorkloadView(check.obj()).service_name()) +
                                    " on the federation: its ports are what each pod's "
                                    "LoadBalancer Service serves");
  }
  std::map<std::string, json::object> wanted;
  if (lb && governing != nullptr) {
    const json::value* ports = Find(*governing, "spec.ports");
    json::array list = ports != nullptr && ports->is_array() ? ports->get_array() : json::array();
    for (const StatefulPod& pod : pods) {
      wanted[pod.name] = LoadBalancerService(check.obj(), pod, list);
    }
  }
  for (const runtime::ObjectPtr& svc : LoadBalancers(check.obj())) {
    std::string name(api::ObjectView(*svc).name());
    auto want = wanted.find(name);
    if (want == wanted.end()) {
      // Its pod went (or lb-needed went off): with its copy.
      Status s = DeleteExactly(ctx_.fed(), kServices, *svc, "Background");
      if (!s.ok() && !s.Is(Reason::kNotFound) && !s.Is(Reason::kConflict)) return s;
      continue;
    }
    if (ServiceNeedsUpdate(*svc, want->second)) {
      json::object updated = *svc;
      json::object& meta = EnsureObject(updated, "metadata");
      for (const char* field : {"labels", "annotations"}) {
        for (const auto& [k, v] : want->second.at("metadata").as_object().at(field).as_object()) {
          EnsureObject(meta, field)[k] = v;
        }
      }
      meta["ownerReferences"] = want->second.at("metadata").as_object().at("ownerReferences");
      for (const auto& [k, v] : want->second.at("spec").as_object()) {
        EnsureObject(updated, "spec")[k] = v;
      }
      StatusOr<json::object> written = ctx_.fed().Update(kServices, check.ns, updated);
      if (!written.ok() && !written.status().Is(Reason::kConflict)) return written.status();
    }
    wanted.erase(want);
  }
  for (const auto& [name, svc] : wanted) {
    StatusOr<json::object> made = ctx_.fed().Create(kServices, check.ns, svc);
    if (!made.ok() && !made.status().Is(Reason::kAlreadyExists)) return made.status();
  }
  return Status::Ok();
}

Status StatefulSetController::WriteStatus(Check& check, const State& state,
                                          const std::string& update_revision) {
  std::vector<ClusterStatus> clusters;
  for (const auto& [cluster, planned] : state.shares) {
    ClusterStatus s{.cluster = cluster, .planned = planned};
    s.reachable = state.reachable.at(cluster);
    for (size_t i = 0; i < check.copies.size(); ++i) {
      const Copy& c = check.copies[i];
      if (c.cluster() != cluster) continue;
      s.local = c.Managed() ? c.Current() : nullptr;
      s.rollout = state.rollout.states[i];
      if (s.local != nullptr) {
        const json::object* want = state.rollout.TemplateFor(i, check.obj());
        s.on_template = want != nullptr && RunsTemplate(*s.local, *want);
        s.observed = c.desired && reconciler_->CopyUpToDate(check, c) &&
                     api::WorkloadView(*s.local).Observed();
      } else {
        s.observed = planned == 0;
      }
    }
    clusters.push_back(std::move(s));
  }
  return WriteStatusIfChanged(
      ctx_.fed(), kStatefulSets, check.obj(),
      AggregateStatus(check.obj(), clusters, update_revision),
      {{api::kStatefulSetStatusAnnotation, BreakdownAnnotation(update_revision, clusters)}});
}

StatusOr<runtime::Result> StatefulSetController::Finish(Check& check) {
  State& state = StateOf(check);
  if (state.invalid) return runtime::Result{};
  for (const std::string& cluster : state.too_long) {
    reconciler_->events().Event(check.obj(), runtime::kEventTypeWarning, "NameTooLong",
                                "Cluster " + cluster +
                                    " gets no replicas: its local StatefulSet would be named " +
                                    CopyName(check.obj(), cluster) + ", more than " +
                                    std::to_string(api::kMaxStatefulSetNameLength) + " characters");
  }
  FLOTILLA_ASSIGN_OR_RETURN(runtime::Revisions revisions, history_.Sync(check.obj()));
  std::string update(api::ObjectView(revisions.update).name());
  rollout_events_->Report(check, state.rollout,
                          std::to_string(IntAt(revisions.update, "revision")));
  FLOTILLA_RETURN_IF_ERROR(SyncServices(check, state));
  FLOTILLA_RETURN_IF_ERROR(WriteStatus(check, state, update));
  FLOTILLA_RETURN_IF_ERROR(history_.Truncate(check.obj(), revisions, {}));
  return runtime::Result{};
}

StatusOr<bool> StatefulSetController::Finalize(const json::object& obj) {
  bool remaining = false;
  for (const runtime::ObjectPtr& svc : LoadBalancers(obj)) {
    remaining = true;
    if (api::IsBeingDeleted(*svc)) continue;
    Status s = DeleteExactly(ctx_.fed(), kServices, *svc, "Background");
    if (!s.ok() && !s.Is(Reason::kNotFound) && !s.Is(Reason::kConflict)) return s;
  }
  FLOTILLA_ASSIGN_OR_RETURN(bool revisions_gone, DeleteRevisions(ctx_.fed(), revisions_, obj));
  return !remaining && revisions_gone;
}

}  // namespace flotilla::federation::statefulset

namespace flotilla::federation {

void RegisterStatefulSet(KindRegistry& kinds) {
  kinds.Add(
      {.controller = "statefulset",
       .help = "federated StatefulSets: stable identities and DNS across the members",
       .kind = "StatefulSet",
       .propagates = {kStatefulSets},
       .admission = {.preferences_annotation = api::kStatefulSetPreferencesAnnotation,
                     .update_order = true,
                     .max_local_name = api::kMaxStatefulSetNameLength},
       .listings = {WorkloadListing{.short_names = {"sts"},
                                    .breakdown_annotation = api::kStatefulSetStatusAnnotation}},
       .build = [](const KindEnv& env) {
         return std::make_shared<statefulset::StatefulSetController>(env.ctx, env.workloads);
       }});
}

}  // namespace flotilla::federation
