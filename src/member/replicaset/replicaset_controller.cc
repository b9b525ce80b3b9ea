// Wiring and the sync loop of the ReplicaSet controller; the actions
// (creating and deleting pods, status) are in replicaset_sync.cc.
#include "member/replicaset/replicaset_controller.h"

#include "api/labels.h"
#include "api/owner.h"
#include "api/views.h"
#include "member/object_util.h"
#include "member/replicaset/controller_ref.h"
#include "member/replicaset/pod_util.h"

namespace flotilla::member {

ReplicaSetController::ReplicaSetController(ControllerContext& ctx)
    : client_(ctx.client),
      clock_(ctx.clock),
      events_(ctx.events),
      replicasets_(ctx.informers.For(kReplicaSets)),
      pods_(ctx.informers.For(kPods)),
      expectations_(ctx.clock) {
  pods_.AddIndex(kControllerlessIndex, ControllerlessValues);
  controller_ = &ctx.manager.AddController(
      kControllerName, 2, [this](const std::string& key) { return Reconcile(key); });
  runtime::EventHandler rs_handler = controller_->EnqueueHandler();
  rs_handler.on_delete = [this](const runtime::ObjectPtr& rs) {
    std::string key = runtime::ObjectKey(*rs);
    expectations_.Forget(key);
    controller_->queue().Add(key);
  };
  replicasets_.AddEventHandler(std::move(rs_handler));
  pods_.AddEventHandler(
      {[this](const runtime::ObjectPtr& p) { OnPodAdd(p); },
       [this](const runtime::ObjectPtr& o, const runtime::ObjectPtr& p) { OnPodUpdate(o, p); },
       [this](const runtime::ObjectPtr& p) { OnPodDelete(p); }});
}

std::string ReplicaSetController::OwnerKey(const json::object& pod) const {
  const json::object* ref = api::ControllerRef(pod);
  if (ref == nullptr || GetString(*ref, "kind") != "ReplicaSet") return "";
  std::string ns = MetaAt(pod, "namespace");
  std::string name(GetString(*ref, "name").value_or(""));
  runtime::ObjectPtr rs = replicasets_.lister().Get(ns, name);
  if (rs == nullptr || MetaAt(*rs, "uid") != GetString(*ref, "uid")) return "";
  return runtime::ObjectKey(ns, name);
}

// An orphan wakes every ReplicaSet that may adopt it.
void ReplicaSetController::EnqueueMatching(const json::object& pod) {
  for (const runtime::ObjectPtr& rs : replicasets_.lister().List(MetaAt(pod, "namespace"))) {
    auto selector = api::LabelSelector::FromJson(Find(*rs, "spec.selector"), "spec.selector");
    if (selector.ok() && !selector->Empty() && selector->MatchesObject(pod)) {
      controller_->queue().Add(runtime::ObjectKey(*rs));
    }
  }
}

void ReplicaSetController::OnPodAdd(const runtime::ObjectPtr& pod) {
  if (api::IsBeingDeleted(*pod)) return OnPodDelete(pod);
  std::string key = OwnerKey(*pod);
  if (!key.empty()) {
    expectations_.CreationObserved(key);
    controller_->queue().Add(key);
  } else if (api::ControllerRef(*pod) == nullptr) {
    EnqueueMatching(*pod);
  }
}

void ReplicaSetController::OnPodUpdate(const runtime::ObjectPtr& old_pod,
                                       const runtime::ObjectPtr& pod) {
  if (runtime::ResourceVersionOf(*old_pod) == runtime::ResourceVersionOf(*pod)) return;
  const json::value* old_labels = Find(*old_pod, "metadata.labels");
  const json::value* labels = Find(*pod, "metadata.labels");
  bool labels_changed = (old_labels == nullptr) != (labels == nullptr) ||
                        (old_labels != nullptr && *old_labels != *labels);
  std::string old_key = OwnerKey(*old_pod);
  std::string key = OwnerKey(*pod);
  if (api::IsBeingDeleted(*pod)) {
    OnPodDelete(pod);
    if (old_key != key && !old_key.empty()) controller_->queue().Add(old_key);
    return;
  }
  if (old_key != key && !old_key.empty()) controller_->queue().Add(old_key);
  if (!key.empty()) {
    controller_->queue().Add(key);
    // A pod that just turned ready becomes available minReadySeconds later.
    runtime::ObjectPtr rs = replicasets_.lister().Get(SplitKey(key).first, SplitKey(key).second);
    int64_t min_ready = rs ? IntAt(*rs, "spec.minReadySeconds") : 0;
    if (min_ready > 0 && !IsPodReady(*old_pod) && IsPodReady(*pod)) {
      controller_->queue().AddAfter(key, std::chrono::seconds(min_ready + 1));
    }
    return;
  }
  if (api::ControllerRef(*pod) == nullptr &&
      (labels_changed || api::ControllerRef(*old_pod) != nullptr)) {
    EnqueueMatching(*pod);
  }
}

void ReplicaSetController::OnPodDelete(const runtime::ObjectPtr& pod) {
  std::string key = OwnerKey(*pod);
  if (key.empty()) return;
  expectations_.DeletionObserved(key, runtime::ObjectKey(*pod));
  controller_->queue().Add(key);
}

StatusOr<runtime::Result> ReplicaSetController::Reconcile(const std::string& key) {
  // Not a structured binding: the claim's lambda captures both, which
  // Clang 14 (scripts/thread_safety) does not allow of one.
  const std::pair<std::string, std::string> split = SplitKey(key);
  const std::string& ns = split.first;
  const std::string& name = split.second;
  runtime::ObjectPtr rs = replicasets_.lister().Get(ns, name);
  if (rs == nullptr) {
    expectations_.Forget(key);
    return runtime::Result{};
  }
  auto selector = api::LabelSelector::FromJson(Find(*rs, "spec.selector"), "spec.selector");
  if (!selector.ok()) return runtime::Result{};  // validation keeps these out
  bool needs_sync = expectations_.Satisfied(key);

  std::vector<runtime::ObjectPtr> active;
  for (const runtime::ObjectPtr& pod : ClaimCandidates(pods_.lister(), *rs)) {
    if (IsPodActive(*pod)) active.push_back(pod);
  }
  ClaimRequest claim{
      &kPods, rs.get(), "apps/v1", "ReplicaSet", &*selector, [&]() -> Status {
        auto fresh = client_.Get(kReplicaSets, ns, name);
        if (!fresh.ok()) return fresh.status();
        if (MetaAt(*fresh, "uid") != MetaAt(*rs, "uid") || api::IsBeingDeleted(*fresh)) {
          return Status::Conflict("replicaset " + key + " is being deleted");
        }
        return Status::Ok();
      }};
  ClaimResult claimed = ClaimObjects(client_, claim, active);
  if (!claimed.error.ok()) return claimed.error;

  Outcome outcome;
  if (needs_sync && !api::IsBeingDeleted(*rs)) outcome = ManageReplicas(key, *rs, claimed.claimed);
  FLOTILLA_RETURN_IF_ERROR(WriteStatus(*rs, CalculateStatus(*rs, claimed.claimed, outcome)));
  if (!outcome.error.ok()) return outcome.error;
  return runtime::Result{UntilNextAvailable(*rs, claimed.claimed)};
}

}  // namespace flotilla::member
