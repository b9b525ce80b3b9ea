// The federated Deployment controller (deployment_controller.h).
#include "federation/deployment/deployment_controller.h"

#include <algorithm>
#include <map>

#include "api/annotations.h"
#include "api/deployment/deployment_util.h"
#include "api/federated.h"
#include "api/owner.h"
#include "api/views.h"
#include "federation/common/deletion.h"
#include "federation/common/federated_kind.h"
#include "federation/common/local_workload.h"
#include "federation/common/member_copy.h"
#include "federation/common/object_writes.h"
#include "federation/deployment/rollout.h"
#include "federation/deployment/shadows.h"
#include "federation/deployment/status.h"

namespace flotilla::federation::deployment {
namespace {

namespace apps = api::deployment;

constexpr std::string_view kMemberAnnotationPrefix = "deployment.kubernetes.io/";

// `obj` without the annotations a Deployment controller writes
// (deployment.kubernetes.io/revision, ...): the member's own on a local
// Deployment, the federation's own on the federated one.
json::object WithoutControllerAnnotations(json::object obj) {
  json::value* meta = obj.if_contains("metadata");
  if (meta == nullptr || !meta->is_object()) return obj;
  json::value* a = meta->get_object().if_contains("annotations");
  if (a == nullptr || !a->is_object()) return obj;
  std::vector<std::string> drop;
  for (const auto& [k, v] : a->get_object()) {
    if (std::string_view(k).starts_with(kMemberAnnotationPrefix)) drop.emplace_back(k);
  }
  for (const std::string& k : drop) a->get_object().erase(k);
  if (a->get_object().empty()) meta->get_object().erase("annotations");
  return obj;
}

// The local Deployment for `d` with `replicas`, running `keep` (its current
// template) instead of d's when given.
json::object DesiredLocalDeployment(const json::object& d, int64_t replicas,
                                    const json::object* keep) {
  json::object local = WithoutControllerAnnotations(DesiredLocal(d, replicas));
  if (keep != nullptr) EnsureObject(local, "spec")["template"] = *keep;
  return local;
}

}  // namespace

DeploymentController::DeploymentController(FederationContext& ctx, WorkloadOptions options)
    : WorkloadStrategy(ctx, options, "Deployment", api::kDeploymentPreferencesAnnotation,
                       api::kDeploymentStatusAnnotation),
      replicasets_(ctx.informers().For(kReplicaSets)) {
  // A local Deployment's progress moves the rollout on at once.
  StartReconciler(kName, Duration::zero());
  rollout_events_.emplace(reconciler().events(), api::kDeploymentStatusAnnotation);
  ctx.members().AddHandler(kReplicaSets, [this](const std::string&) {
    auto changed = [this](const runtime::ObjectPtr& rs) { EnqueueFromLocalReplicaSet(*rs); };
    return runtime::EventHandler{
        .on_add = changed,
        .on_update = [changed](const runtime::ObjectPtr&,
                               const runtime::ObjectPtr& rs) { changed(rs); },
        .on_delete = changed};
  });
  ctx.members().AddHandler(kPods, [this](const std::string& cluster) {
    auto changed = [this, cluster](const runtime::ObjectPtr& pod) {
      EnqueueFromPod(cluster, *pod);
    };
    return runtime::EventHandler{
        .on_add = changed,
        .on_update = [changed](const runtime::ObjectPtr&,
                               const runtime::ObjectPtr& pod) { changed(pod); },
        .on_delete = changed};
  });
  // A shadow edited or deleted by hand is put back at once.
  auto shadow_changed = [this](const runtime::ObjectPtr& rs) {
    std::string owner = api::ControllerName(*rs, "Deployment");
    const json::value* labels = Find(*rs, "metadata.labels");
    if (owner.empty() && labels != nullptr && labels->is_object()) {
      owner = std::string(GetString(labels->get_object(), api::kShadowOfLabel).value_or(""));
    }
    if (!owner.empty()) {
      reconciler().Enqueue(runtime::ObjectKey(api::ObjectView(*rs).ns(), owner));
    }
  };
  replicasets_.AddEventHandler(
      {.on_add = shadow_changed,
       .on_update = [shadow_changed](const runtime::ObjectPtr&,
                                     const runtime::ObjectPtr& rs) { shadow_changed(rs); },
       .on_delete = shadow_changed});
}

void DeploymentController::EnqueueFromLocalReplicaSet(const json::object& rs) {
  std::string owner = api::ControllerName(rs, "Deployment");
  if (owner.empty()) return;
  reconciler().Enqueue(runtime::ObjectKey(api::ObjectView(rs).ns(), owner),
                       options_.member_change_delay);
}

void DeploymentController::EnqueueFromPod(const std::string& cluster, const json::object& pod) {
  std::string rs_name = api::ControllerName(pod, "ReplicaSet");
  if (rs_name.empty()) return;
  std::shared_ptr<runtime::Informer> rss = ctx_.members().Get(cluster, kReplicaSets.resource);
  if (rss == nullptr) return;
  runtime::ObjectPtr rs = rss->lister().Get(api::ObjectView(pod).ns(), rs_name);
  if (rs != nullptr) EnqueueFromLocalReplicaSet(*rs);
}

void DeploymentController::PodsOf(const std::string& cluster, const json::object& local,
                                  WorkloadInCluster& w) const {
  auto rss = ctx_.members().Get(cluster, kReplicaSets.resource);
  auto pods = ctx_.members().Get(cluster, kPods.resource);
  if (rss == nullptr || pods == nullptr) return;
  const json::object* tmpl = TemplateOf(local);
  for (const runtime::ObjectPtr& rs : rss->lister().ByOwner(api::ObjectView(local).uid())) {
    bool current = tmpl == nullptr || RunsTemplate(*rs, *tmpl);
    std::vector<runtime::ObjectPtr>& into = current ? w.pods : w.outgoing_pods;
    for (runtime::ObjectPtr& pod : federation::PodsOf(pods->lister(), *rs)) {
      into.push_back(std::move(pod));
    }
  }
}

json::object DeploymentController::DesiredCopy(const Check& check, size_t i,
                                               int64_t replicas) const {
  const State& state = static_cast<const State&>(PlanOf(check));
  const Copy& c = check.copies[i];
  const json::object* keep = nullptr;
  if (!state.rollout.new_template[i] && c.existing != nullptr) keep = TemplateOf(*c.existing);
  return DesiredLocalDeployment(check.obj(), replicas, keep);
}

Status DeploymentController::Plan(Check& check) {
  auto state = std::make_shared<State>();
  if (!Place(check, state)) return Status::Ok();
  // The federation's template as each cluster gets it.
  std::vector<json::object> templates;
  if (const json::object* tmpl = TemplateOf(check.obj());
      tmpl != nullptr && !ctx_.overrides().Empty()) {
    for (const Copy& c : check.copies) {
      templates.push_back(reconciler().TemplateFor(check, c, *tmpl));
    }
  }
  std::vector<LocalDeployment> locals;
  for (size_t i = 0; i < check.copies.size(); ++i) {
    const Copy& c = check.copies[i];
    bool managed =
        c.existing != nullptr && IsManaged(*c.existing) && !api::IsBeingDeleted(*c.existing);
    locals.push_back({.cluster = c.cluster(),
                      .local = managed ? c.existing.get() : nullptr,
                      .full = state->placement.views[i].full,
                      .tmpl = i < templates.size() ? &templates[i] : nullptr});
  }
  state->rollout = PlanDeploymentRollout(check.obj(), locals);
  state->rollout.cluster_templates = std::move(templates);
  SetDesired(check);
  reconciler().ApplyOverrides(check, &state->rollout.new_template);
  for (size_t i = 0; i < check.copies.size(); ++i) {
    // A local Deployment created now rolls out its first pods.
    if (check.copies[i].existing == nullptr && check.copies[i].create) {
      state->rollout.states[i] = ClusterRollout::kUpdating;
    }
  }
  return Status::Ok();
}

bool DeploymentController::UpToDate(const Copy& c) const {
  return !NeedsUpdate(WithoutControllerAnnotations(*c.existing), *c.desired);
}

json::object DeploymentController::Updated(const Copy& c) const {
  json::object out = federation::Updated(*c.existing, *c.desired);
  // The member's Deployment controller keeps its own annotations.
  const json::value* have = Find(*c.existing, "metadata.annotations");
  if (have != nullptr && have->is_object()) {
    for (const auto& [k, v] : have->get_object()) {
      if (std::string_view(k).starts_with(kMemberAnnotationPrefix)) {
        EnsureObject(EnsureObject(out, "metadata"), "annotations")[k] = v;
      }
    }
  }
  return out;
}

Status DeploymentController::WriteStatus(Check& check, const State& state, const Shadows& shadows) {
  const json::object* tmpl = TemplateOf(check.obj());
  std::vector<ClusterStatus> clusters;
  for (size_t i = 0; i < check.copies.size(); ++i) {
    const Copy& c = check.copies[i];
    ClusterStatus s{.cluster = c.cluster(),
                    .planned = state.placement.ReplicasFor(c.cluster()),
                    .local = ManagedLocal(c),
                    .rollout = state.rollout.states[i],
                    .pending = state.placement.views[i].pending,
                    .unscheduled = state.placement.views[i].unscheduled,
                    .full = state.placement.views[i].full};
    if (auto cap = state.placement.targets.capacity.find(c.cluster());
        cap != state.placement.targets.capacity.end()) {
      s.estimated_capacity = cap->second;
    }
    if (s.local != nullptr) {
      const json::object* want = state.rollout.TemplateFor(i, check.obj());
      s.on_template = tmpl != nullptr && want != nullptr && RunsTemplate(*s.local, *want);
      for (const auto& [t, revision] : shadows.templates) {
        if (RunsTemplate(*s.local, reconciler().TemplateFor(check, c, t))) {
          s.revision = revision;
          break;
        }
      }
      s.observed = c.desired && reconciler().CopyUpToDate(check, c) &&
                   api::WorkloadView(*s.local).Observed();
    } else {
      s.observed = s.planned == 0;
    }
    clusters.push_back(std::move(s));
  }
  // The Deployment's revision is its current shadow's; the shadow
  // annotation a rollback copies from a shadow means nothing here.
  json::object status = AggregateStatus(check.obj(), clusters, shadows.current, check.now);
  SetAffinityCondition(check, status);
  return WriteStatusIfChanged(
      ctx_.fed(), kDeployments, check.obj(), std::move(status),
      {{std::string(apps::kRevisionAnnotation), shadows.revision},
       {api::kDeploymentStatusAnnotation, BreakdownAnnotation(shadows.revision, clusters)}},
      {api::kShadowReplicaSetAnnotation});
}

StatusOr<runtime::Result> DeploymentController::Finish(Check& check) {
  if (PlanOf(check).invalid) return runtime::Result{};
  const State& state = static_cast<const State&>(PlanOf(check));
  Settle(check);
  FLOTILLA_RETURN_IF_ERROR(FollowLocalReplicas(check));
  // The events first: they tell of writes this check made, whatever
  // happens to the shadows next.
  rollout_events_->Report(
      check, state.rollout,
      CurrentRevision(check.obj(), ShadowsOf(check.obj(), Candidates(check.obj()))));
  FLOTILLA_ASSIGN_OR_RETURN(Shadows shadows, SyncShadows(check, state));
  FLOTILLA_RETURN_IF_ERROR(WriteStatus(check, state, shadows));
  return NextCheck(check);
}

void DeploymentController::Forget(const std::string& key) {
  WorkloadStrategy::Forget(key);
  rollout_events_->Forget(key);
}

}  // namespace flotilla::federation::deployment

namespace flotilla::federation {

void RegisterDeployment(KindRegistry& kinds) {
  kinds.Add(
      {.controller = "deployment",
       .help = "federated Deployments: divided like ReplicaSets, rolled out one cluster "
               "at a time",
       .kind = "Deployment",
       .propagates = {kDeployments},
       .admission = {.preferences_annotation = api::kDeploymentPreferencesAnnotation,
                     .update_order = true},
       .applications = true,
       .listings = {WorkloadListing{.short_names = {"deploy"},
                                    .breakdown_annotation = api::kDeploymentStatusAnnotation}},
       .build = [](const KindEnv& env) {
         return std::make_shared<deployment::DeploymentController>(env.ctx, env.workloads);
       }});
}

}  // namespace flotilla::federation
