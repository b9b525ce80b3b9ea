// Wiring, the sync entry point and the new ReplicaSet of the Deployment
// controller; rollouts are in rollout.cc, status in deployment_status.cc.
#include "member/deployment/deployment_controller.h"

#include <algorithm>

#include "api/owner.h"
#include "api/views.h"
#include "member/object_util.h"
#include "member/replicaset/controller_ref.h"

namespace flotilla::member {

using deployment::Rs;

namespace {

constexpr std::string_view kApiVersion = "apps/v1";
constexpr std::string_view kKind = "Deployment";

// The revision annotation as written ("" when absent).
std::string RevisionOf(const json::object& obj) {
  const json::value* a = Find(obj, "metadata.annotations");
  if (a == nullptr || !a->is_object()) return "";
  return std::string(GetString(a->get_object(), deployment::kRevisionAnnotation).value_or(""));
}

std::optional<int64_t> CollisionCount(const json::object& d) {
  const json::value* c = Find(d, "status.collisionCount");
  if (c == nullptr || !c->is_int64()) return std::nullopt;
  return c->get_int64();
}

// The new ReplicaSet for `d` (0 replicas, no annotations yet): its
// template, selector and labels carry the pod-template-hash.
json::object ReplicaSetFor(const json::object& d, const std::string& hash) {
  const json::object& spec = d.at("spec").as_object();
  json::object tmpl = spec.at("template").as_object();
  json::object& labels = EnsureObject(EnsureObject(tmpl, "metadata"), "labels");
  labels[deployment::kHashLabel] = hash;
  json::object meta = {
      {"name", MetaAt(d, "name") + "-" + hash},
      {"namespace", MetaAt(d, "namespace")},
      {"labels", labels},
      {"ownerReferences", json::array{api::NewControllerRef(d, kApiVersion, kKind)}}};
  json::object selector = spec.at("selector").as_object();
  EnsureObject(selector, "matchLabels")[deployment::kHashLabel] = hash;
  json::object rs_spec = {
      {"replicas", 0}, {"selector", std::move(selector)}, {"template", std::move(tmpl)}};
  if (int64_t m = IntAt(d, "spec.minReadySeconds"); m > 0) rs_spec["minReadySeconds"] = m;
  return {{"apiVersion", "apps/v1"},
          {"kind", "ReplicaSet"},
          {"metadata", std::move(meta)},
          {"spec", std::move(rs_spec)}};
}

}  // namespace

DeploymentController::DeploymentController(ControllerContext& ctx)
    : client_(ctx.client),
      clock_(ctx.clock),
      events_(ctx.events),
      deployments_(ctx.informers.For(kDeployments)),
      replicasets_(ctx.informers.For(kReplicaSets)),
      pods_(ctx.informers.For(kPods)) {
  replicasets_.AddIndex(kControllerlessIndex, ControllerlessValues);
  controller_ = &ctx.manager.AddController(
      kControllerName, 2, [this](const std::string& key) { return Reconcile(key); });
  deployments_.AddEventHandler(controller_->EnqueueHandler());
  replicasets_.AddEventHandler(
      {[this](const runtime::ObjectPtr& rs) { OnReplicaSetUpdate(nullptr, rs); },
       [this](const runtime::ObjectPtr& o, const runtime::ObjectPtr& rs) {
         OnReplicaSetUpdate(o, rs);
       },
       [this](const runtime::ObjectPtr& rs) { EnqueueOwner(*rs); }});
  pods_.AddEventHandler(
      {nullptr, nullptr, [this](const runtime::ObjectPtr& p) { OnPodDelete(p); }});
}

void DeploymentController::EnqueueOwner(const json::object& rs) {
  const json::object* ref = api::ControllerRef(rs);
  if (ref == nullptr || GetString(*ref, "kind") != kKind) return;
  std::string ns = MetaAt(rs, "namespace");
  std::string name(GetString(*ref, "name").value_or(""));
  runtime::ObjectPtr d = deployments_.lister().Get(ns, name);
  if (d != nullptr && MetaAt(*d, "uid") == GetString(*ref, "uid")) {
    controller_->queue().Add(runtime::ObjectKey(ns, name));
  }
}

// An orphan ReplicaSet wakes every Deployment that may adopt it.
void DeploymentController::EnqueueMatching(const json::object& rs) {
  for (const runtime::ObjectPtr& d : deployments_.lister().List(MetaAt(rs, "namespace"))) {
    auto selector = api::LabelSelector::FromJson(Find(*d, "spec.selector"), "spec.selector");
    if (selector.ok() && !selector->Empty() && selector->MatchesObject(rs)) {
      controller_->queue().Add(runtime::ObjectKey(*d));
    }
  }
}

void DeploymentController::OnReplicaSetUpdate(const runtime::ObjectPtr& old_rs,
                                              const runtime::ObjectPtr& rs) {
  if (old_rs != nullptr) {
    if (runtime::ResourceVersionOf(*old_rs) == runtime::ResourceVersionOf(*rs)) return;
    const json::object* old_ref = api::ControllerRef(*old_rs);
    const json::object* ref = api::ControllerRef(*rs);
    if (old_ref != nullptr && (ref == nullptr || *old_ref != *ref)) EnqueueOwner(*old_rs);
  }
  if (api::ControllerRef(*rs) != nullptr) return EnqueueOwner(*rs);
  EnqueueMatching(*rs);
}

// Recreate waits for old pods to be gone: a deleted pod may unblock it.
void DeploymentController::OnPodDelete(const runtime::ObjectPtr& pod) {
  const json::object* ref = api::ControllerRef(*pod);
  if (ref == nullptr || GetString(*ref, "kind") != "ReplicaSet") return;
  runtime::ObjectPtr rs =
      replicasets_.lister().Get(MetaAt(*pod, "namespace"), GetString(*ref, "name").value_or(""));
  if (rs == nullptr) return;
  const json::object* rs_ref = api::ControllerRef(*rs);
  if (rs_ref == nullptr) return;
  runtime::ObjectPtr d =
      deployments_.lister().Get(MetaAt(*rs, "namespace"), GetString(*rs_ref, "name").value_or(""));
  if (d != nullptr && StringAt(*d, "spec.strategy.type") == "Recreate") EnqueueOwner(*rs);
}

StatusOr<runtime::Result> DeploymentController::Reconcile(const std::string& key) {
  auto [ns, name] = SplitKey(key);
  runtime::ObjectPtr cached = deployments_.lister().Get(ns, name);
  if (cached == nullptr) return runtime::Result{};
  Sync s;
  s.d = *cached;
  auto selector = api::LabelSelector::FromJson(Find(s.d, "spec.selector"), "spec.selector");
  if (!selector.ok()) return runtime::Result{};  // validation keeps these out
  if (selector->Empty()) {
    Record(s, runtime::kEventTypeWarning, "SelectingAll",
           "This deployment is selecting all pods. A non-empty selector is required.");
    json::object status = StatusOf(s.d);
    status["observedGeneration"] = IntAt(s.d, "metadata.generation");
    FLOTILLA_RETURN_IF_ERROR(WriteStatus(s, std::move(status)));
    return runtime::Result{};
  }
  FLOTILLA_RETURN_IF_ERROR(ClaimReplicaSets(s, *selector));
  MapPods(s, *selector);
  if (api::IsBeingDeleted(s.d)) {
    FLOTILLA_ASSIGN_OR_RETURN(Split split, AllReplicaSets(s, false));
    FLOTILLA_RETURN_IF_ERROR(SyncDeploymentStatus(s, split));
    return runtime::Result{};
  }
  FLOTILLA_RETURN_IF_ERROR(CheckPausedConditions(s));
  if (GetBool(s.d["spec"].as_object(), "paused").value_or(false)) return SyncScaling(s);
  if (IsScalingEvent(s)) return SyncScaling(s);
  if (StringAt(s.d, "spec.strategy.type") == "Recreate") return RolloutRecreate(s);
  return RolloutRolling(s);
}

Status DeploymentController::ClaimReplicaSets(Sync& s, const api::LabelSelector& selector) {
  std::string ns = MetaAt(s.d, "namespace");
  std::string name = MetaAt(s.d, "name");
  std::string uid = MetaAt(s.d, "uid");
  ClaimRequest req{
      &kReplicaSets,
      &s.d,
      std::string(kApiVersion),
      std::string(kKind),
      &selector,
      [&]() -> Status {
        auto fresh = client_.Get(kDeployments, ns, name);
        if (!fresh.ok()) return fresh.status();
        if (MetaAt(*fresh, "uid") != uid || api::IsBeingDeleted(*fresh)) {
          return Status::Conflict("deployment " + ns + "/" + name + " is being deleted");
        }
        return Status::Ok();
      }};
  ClaimResult claimed = ClaimObjects(client_, req, ClaimCandidates(replicasets_.lister(), s.d));
  for (const runtime::ObjectPtr& rs : claimed.claimed) {
    s.rs_list.push_back(std::make_shared<json::object>(*rs));
  }
  return claimed.error;
}

// The pods of the namespace that the selector matches, by the ReplicaSet that
// controls them, as kube's deployment controller maps them; read through the
// owner index, so a sync costs the Deployment's own pods, not a pass over
// every pod of its namespace.
void DeploymentController::MapPods(Sync& s, const api::LabelSelector& selector) {
  const std::string ns = MetaAt(s.d, "namespace");
  for (const Rs& rs : s.rs_list) {
    const std::string uid = MetaAt(*rs, "uid");
    std::vector<runtime::ObjectPtr>& pods = s.pods_by_rs[uid];
    for (runtime::ObjectPtr& pod : ControlledBy(pods_.lister(), ns, uid)) {
      if (selector.MatchesObject(*pod)) pods.push_back(std::move(pod));
    }
  }
}

Status DeploymentController::CheckPausedConditions(Sync& s) {
  if (!deployment::HasProgressDeadline(s.d)) return Status::Ok();
  json::object status = StatusOf(s.d);
  const json::object* cond = deployment::GetCondition(status, "Progressing");
  std::string reason = cond ? std::string(GetString(*cond, "reason").value_or("")) : "";
  if (reason == deployment::kTimedOutReason) return Status::Ok();
  bool paused = GetBool(s.d["spec"].as_object(), "paused").value_or(false);
  bool paused_cond = reason == deployment::kPausedReason;
  if (paused && !paused_cond) {
    deployment::SetCondition(
        status, deployment::NewCondition("Progressing", "Unknown", deployment::kPausedReason,
                                         "Deployment is paused", clock_.Now()));
  } else if (!paused && paused_cond) {
    deployment::SetCondition(
        status, deployment::NewCondition("Progressing", "Unknown", deployment::kResumedReason,
                                         "Deployment is resumed", clock_.Now()));
  } else {
    return Status::Ok();
  }
  return WriteStatus(s, std::move(status));
}

// A replica count that differs from what an active ReplicaSet was sized for.
bool DeploymentController::IsScalingEvent(Sync& s) {
  auto split = AllReplicaSets(s, false);
  if (!split.ok()) return false;
  std::vector<Rs> all = split->old_rss;
  if (split->new_rs) all.push_back(split->new_rs);
  for (const Rs& rs : all) {
    if (IntAt(*rs, "spec.replicas") <= 0) continue;
    auto desired = deployment::IntAnnotation(*rs, deployment::kDesiredReplicasAnnotation);
    if (desired && *desired != deployment::Replicas(s.d)) return true;
  }
  return false;
}

StatusOr<DeploymentController::Split> DeploymentController::AllReplicaSets(Sync& s, bool create) {
  Split split;
  std::sort(s.rs_list.begin(), s.rs_list.end(), deployment::CreatedBefore);
  const json::object* tmpl = GetObject(s.d["spec"].as_object(), "template");
  Rs found;
  for (const Rs& rs : s.rs_list) {
    const json::value* t = Find(*rs, "spec.template");
    if (!found && tmpl && t && t->is_object() &&
        deployment::EqualIgnoreHash(t->get_object(), *tmpl)) {
      found = rs;
      continue;
    }
    split.old_rss.push_back(rs);
  }
  FLOTILLA_ASSIGN_OR_RETURN(split.new_rs, NewReplicaSet(s, split.old_rss, create));
  return split;
}

StatusOr<Rs> DeploymentController::NewReplicaSet(Sync& s, const std::vector<Rs>& old_rss,
                                                 bool create) {
  int64_t max_old = 0;
  for (const Rs& rs : old_rss) max_old = std::max(max_old, deployment::Revision(*rs));
  std::string revision = std::to_string(max_old + 1);
  Rs existing;
  const json::object* tmpl = GetObject(s.d["spec"].as_object(), "template");
  for (const Rs& rs : s.rs_list) {
    const json::value* t = Find(*rs, "spec.template");
    if (tmpl && t && t->is_object() && deployment::EqualIgnoreHash(t->get_object(), *tmpl)) {
      existing = rs;
      break;
    }
  }
  if (existing == nullptr) {
    if (!create) return Rs();
    return CreateNewReplicaSet(s, old_rss, revision);
  }
  // The annotations first on their own: a sync rarely changes them, and the
  // ReplicaSet is copied only to be written.
  json::object annotations;
  if (const json::value* a = Find(*existing, "metadata.annotations"); a && a->is_object()) {
    annotations = a->get_object();
  }
  json::object probe{{"metadata", {{"annotations", std::move(annotations)}}}};
  bool changed = deployment::SetNewReplicaSetAnnotations(s.d, probe, revision, true);
  int64_t min_ready = IntAt(s.d, "spec.minReadySeconds");
  if (changed || IntAt(*existing, "spec.minReadySeconds") != min_ready) {
    json::object copy = *existing;
    EnsureObject(copy, "metadata")["annotations"] =
        std::move(probe["metadata"].as_object()["annotations"]);
    copy["spec"].as_object()["minReadySeconds"] = min_ready;
    FLOTILLA_ASSIGN_OR_RETURN(*existing, client_.Update(kReplicaSets, "", copy));
  }
  FLOTILLA_RETURN_IF_ERROR(SetDeploymentRevision(s, RevisionOf(*existing)));
  if (!deployment::GetCondition(StatusOf(s.d), "Progressing")) {
    FLOTILLA_RETURN_IF_ERROR(
        WriteCondition(s, "Progressing", "True", deployment::kFoundNewRSReason,
                       "Found new replica set \"" + MetaAt(*existing, "name") + "\""));
  }
  return existing;
}

Status DeploymentController::SetDeploymentRevision(Sync& s, const std::string& revision) {
  if (RevisionOf(s.d) == revision) return Status::Ok();
  json::object patch = {
      {"metadata", {{"annotations", {{deployment::kRevisionAnnotation, revision}}}}}};
  FLOTILLA_ASSIGN_OR_RETURN(
      s.d, client_.Patch(kDeployments, MetaAt(s.d, "namespace"), MetaAt(s.d, "name"),
                         client::PatchType::kMerge, ToJson(patch)));
  return Status::Ok();
}

// A new ReplicaSet for the Deployment's template: named and labelled with
// the template's hash, sized as a rollout allows (all replicas for
// Recreate). A name taken by a ReplicaSet with another template is a hash
// collision: status.collisionCount grows and the next sync hashes anew.
StatusOr<Rs> DeploymentController::CreateNewReplicaSet(Sync& s, const std::vector<Rs>& old_rss,
                                                       const std::string& revision) {
  std::optional<int64_t> collisions = CollisionCount(s.d);
  const json::object& tmpl = s.d["spec"].as_object().at("template").as_object();
  auto rs =
      std::make_shared<json::object>(ReplicaSetFor(s.d, deployment::ComputeHash(tmpl, collisions)));
  std::string name = MetaAt(*rs, "name");
  std::vector<Rs> all = old_rss;
  all.push_back(rs);
  int64_t replicas = deployment::NewRSNewReplicas(s.d, all, *rs);
  (*rs)["spec"].as_object()["replicas"] = replicas;
  deployment::SetNewReplicaSetAnnotations(s.d, *rs, revision, false);

  auto created = client_.Create(kReplicaSets, MetaAt(s.d, "namespace"), *rs);
  bool already_exists = created.status().Is(Reason::kAlreadyExists);
  if (already_exists) {
    // Ours from an earlier sync whose informer event has not arrived (so
    // read it from the server, not the cache), or a hash collision: count
    // it, and the next sync hashes anew.
    FLOTILLA_ASSIGN_OR_RETURN(json::object current,
                              client_.Get(kReplicaSets, MetaAt(s.d, "namespace"), name));
    const json::object* ref = api::ControllerRef(current);
    const json::value* t = Find(current, "spec.template");
    if (!ref || GetString(*ref, "uid") != MetaAt(s.d, "uid") || !t || !t->is_object() ||
        !deployment::EqualIgnoreHash(t->get_object(), tmpl)) {
      json::object status = StatusOf(s.d);
      status["collisionCount"] = collisions.value_or(0) + 1;
      FLOTILLA_RETURN_IF_ERROR(WriteStatus(s, std::move(status)));
      return created.status();
    }
    created = std::move(current);
  }
  if (!created.ok()) {
    std::string msg =
        "Failed to create new replica set \"" + name + "\": " + created.status().message();
    (void)WriteCondition(s, "Progressing", "False", deployment::kFailedRSCreateReason, msg);
    Record(s, runtime::kEventTypeWarning, deployment::kFailedRSCreateReason, msg);
    return created.status();
  }
  *rs = std::move(*created);
  if (!already_exists && replicas > 0) {
    Record(s, runtime::kEventTypeNormal, "ScalingReplicaSet",
           "Scaled up replica set " + name + " from 0 to " + std::to_string(replicas));
  }
  FLOTILLA_RETURN_IF_ERROR(SetDeploymentRevision(s, revision));
  if (already_exists) return rs;
  FLOTILLA_RETURN_IF_ERROR(WriteCondition(s, "Progressing", "True", deployment::kNewRSReason,
                                          "Created new replica set \"" + name + "\""));
  return rs;
}

// Sets one condition (when the Deployment has a progress deadline, as kube
// only then tracks Progressing) and writes the status if it changed.
Status DeploymentController::WriteCondition(Sync& s, std::string_view type, std::string_view status,
                                            std::string_view reason, const std::string& message) {
  if (!deployment::HasProgressDeadline(s.d)) return Status::Ok();
  json::object st = StatusOf(s.d);
  deployment::SetCondition(st,
                           deployment::NewCondition(type, status, reason, message, clock_.Now()));
  return WriteStatus(s, std::move(st));
}

}  // namespace flotilla::member
