// The federated Deployment controller's shadow ReplicaSets
// (deployment_controller.h, shadows.h): kept in step with the Deployment and
// the members' local ReplicaSets each check, deleted with the Deployment.
#include <algorithm>
#include <map>

#include "api/annotations.h"
#include "api/deployment/deployment_util.h"
#include "api/federated.h"
#include "api/owner.h"
#include "api/views.h"
#include "federation/common/deletion.h"
#include "federation/common/object_writes.h"
#include "federation/deployment/deployment_controller.h"
#include "federation/deployment/rollout.h"

namespace flotilla::federation::deployment {

namespace apps = api::deployment;

std::vector<runtime::ObjectPtr> DeploymentController::Candidates(const json::object& d) const {
  std::vector<runtime::ObjectPtr> out = replicasets_.lister().ByOwner(api::ObjectView(d).uid());
  for (runtime::ObjectPtr& rs :
       replicasets_.lister().ByLabel(api::kShadowOfLabel, api::ObjectView(d).name())) {
    if (api::ControllerRef(*rs) == nullptr) out.push_back(std::move(rs));
  }
  return out;
}

StatusOr<DeploymentController::Shadows> DeploymentController::SyncShadows(Check& check,
                                                                          const State& state) {
  const json::object& d = check.obj();
  std::vector<runtime::ObjectPtr> shadows = ShadowsOf(d, Candidates(d));
  Shadows out;
  runtime::ObjectPtr current = CurrentShadow(d, shadows);
  if (current == nullptr) {
    std::string name = NewShadowName(d);
    for (const runtime::ObjectPtr& s : shadows) {
      // Ours, with its template edited by hand: put back.
      if (api::ObjectView(*s).name() == name) current = s;
    }
  }
  if (current == nullptr) {
    // Another ReplicaSet of the new shadow's name: a hash collision; the
    // next hash goes with a higher collisionCount.
    std::string name = NewShadowName(d);
    if (replicasets_.lister().Get(check.ns, name) != nullptr) {
      json::object status = Find(d, "status") != nullptr && Find(d, "status")->is_object()
                                ? Find(d, "status")->get_object()
                                : json::object();
      status["collisionCount"] = IntAt(d, "status.collisionCount") + 1;
      FLOTILLA_RETURN_IF_ERROR(WriteStatusIfChanged(ctx_.fed(), kDeployments, d, status));
      return Status::Conflict("hash collision for shadow " + name + "; trying the next hash");
    }
  }
  std::vector<runtime::ObjectPtr> old;
  for (const runtime::ObjectPtr& s : shadows) {
    if (s != current) old.push_back(s);
  }
  std::string revision = std::to_string(MaxRevision(old) + 1);
  std::string current_name =
      current ? std::string(api::ObjectView(*current).name()) : NewShadowName(d);
  std::map<std::string, ShadowCounts> counts = LocalCounts(check, current_name, old);
  json::object want = DesiredCurrentShadow(d, current.get(), revision, counts[current_name]);
  json::object stored;
  if (current == nullptr) {
    StatusOr<json::object> made = ctx_.fed().Create(kReplicaSets, check.ns, want);
    if (made.ok()) {
      stored = *std::move(made);
      reconciler().events().Event(d, runtime::kEventTypeNormal, "ShadowCreated",
                                  "Created shadow ReplicaSet " + current_name + " for revision " +
                                      api::AnnotationAt(stored, apps::kRevisionAnnotation));
    } else if (made.status().Is(Reason::kAlreadyExists)) {
      // Made by the check before, not in the cache yet: its event brings
      // the Deployment back.
      return Status::Conflict("shadow " + current_name + " is not in the cache yet");
    } else {
      return made.status();
    }
  } else if (ShadowNeedsUpdate(*current, want)) {
    FLOTILLA_ASSIGN_OR_RETURN(stored, ctx_.fed().Update(kReplicaSets, check.ns, want));
  } else {
    stored = *current;
  }
  FLOTILLA_RETURN_IF_ERROR(WriteStatusIfChanged(ctx_.fed(), kReplicaSets, stored,
                                                ShadowStatus(stored, counts[current_name])));
  out.current = current_name;
  out.revision = api::AnnotationAt(stored, apps::kRevisionAnnotation);
  out.templates.emplace_back(*TemplateOf(stored), out.revision);

  for (const runtime::ObjectPtr& s : old) {
    if (api::IsBeingDeleted(*s)) continue;
    const ShadowCounts& n = counts[std::string(api::ObjectView(*s).name())];
    json::object desired = DesiredOldShadow(d, *s, n);
    json::object kept = *s;
    if (ShadowNeedsUpdate(*s, desired)) {
      FLOTILLA_ASSIGN_OR_RETURN(kept, ctx_.fed().Update(kReplicaSets, check.ns, desired));
    }
    FLOTILLA_RETURN_IF_ERROR(
        WriteStatusIfChanged(ctx_.fed(), kReplicaSets, kept, ShadowStatus(kept, n)));
    if (const json::object* t = TemplateOf(kept)) {
      out.templates.emplace_back(*t, api::AnnotationAt(kept, apps::kRevisionAnnotation));
    }
  }
  // Old revisions beyond the history limit go once the rollout is done
  // (their local ReplicaSets are the members' to clean up).
  bool complete = std::all_of(state.rollout.states.begin(), state.rollout.states.end(),
                              [](ClusterRollout r) { return r == ClusterRollout::kComplete; });
  if (complete) {
    for (const runtime::ObjectPtr& s : ShadowsBeyondHistory(d, old)) {
      Status deleted = DeleteExactly(ctx_.fed(), kReplicaSets, *s);
      if (!deleted.ok() && !deleted.Is(Reason::kNotFound)) return deleted;
    }
  }
  return out;
}

std::map<std::string, ShadowCounts> DeploymentController::LocalCounts(
    const Check& check, const std::string& current,
    const std::vector<runtime::ObjectPtr>& old) const {
  // Which shadow a local ReplicaSet counts for: the one of its name, else
  // the one of its template (a member that hashes templates otherwise).
  std::vector<std::pair<std::string, const json::object*>> templates;
  templates.emplace_back(current, TemplateOf(check.obj()));
  for (const runtime::ObjectPtr& s : old) {
    templates.emplace_back(api::ObjectView(*s).name(), TemplateOf(*s));
  }
  auto shadow_of = [&](const json::object& rs) -> std::string {
    std::string name(api::ObjectView(rs).name());
    for (const auto& [shadow, t] : templates) {
      if (shadow == name) return shadow;
    }
    const json::object* have = TemplateOf(rs);
    for (const auto& [shadow, t] : templates) {
      if (have != nullptr && t != nullptr && apps::EqualIgnoreHash(*have, *t)) return shadow;
    }
    return "";
  };
  std::map<std::string, ShadowCounts> counts;
  for (const Copy& c : check.copies) {
    const json::object* local = ManagedLocal(c);
    auto rss = ctx_.members().Get(c.cluster(), kReplicaSets.resource);
    if (local == nullptr || rss == nullptr) continue;
    for (const runtime::ObjectPtr& rs : rss->lister().ByOwner(api::ObjectView(*local).uid())) {
      std::string shadow = shadow_of(*rs);
      if (!shadow.empty()) counts[shadow].Add(*rs);
    }
  }
  return counts;
}

StatusOr<bool> DeploymentController::Finalize(const json::object& obj) {
  bool remaining = false;
  for (const runtime::ObjectPtr& rs : ShadowsOf(obj, Candidates(obj))) {
    remaining = true;
    if (api::IsBeingDeleted(*rs)) continue;
    // Never into the members: the shadow has no finalizer of the
    // federation, and the members' local ReplicaSets are not its copies.
    Status s = DeleteExactly(ctx_.fed(), kReplicaSets, *rs);

    if (!s.ok() && !s.Is(Reason::kNotFound) && !s.Is(Reason::kConflict)) return s;
  }
  return !remaining;
}

}  // namespace flotilla::federation::deployment
