#include "member/statefulset/volume_binder.h"

#include <algorithm>

#include "api/claims.h"
#include "api/resources.h"
#include "member/object_util.h"

namespace flotilla::member {
namespace {

bool Finalized(const json::object& claim) {
  const json::value* finalizers = Find(claim, "metadata.finalizers");
  if (finalizers == nullptr || !finalizers->is_array()) return false;
  const json::array& list = finalizers->get_array();
  return std::find(list.begin(), list.end(), json::value(api::kClaimProtectionFinalizer)) !=
         list.end();
}

}  // namespace

VolumeBinder::VolumeBinder(ControllerContext& ctx)
    : client_(ctx.client),
      claims_(ctx.informers.For(kPersistentVolumeClaims)),
      pods_(ctx.informers.For(kPods)) {
  controller_ = &ctx.manager.AddController(
      "volume-binder", 1, [this](const std::string& key) { return Reconcile(key); });
  claims_.AddEventHandler(controller_->EnqueueHandler());
  // A pod that ends or goes may let a claim being deleted go.
  auto claims_of = [this](const runtime::ObjectPtr& pod) {
    std::string ns = MetaAt(*pod, "namespace");
    for (const std::string& claim : api::ClaimNames(*pod))
      controller_->queue().Add(ns + "/" + claim);
  };
  pods_.AddEventHandler(
      {.on_update = [claims_of](const runtime::ObjectPtr&,
                                const runtime::ObjectPtr& pod) { claims_of(pod); },
       .on_delete = claims_of});
}

StatusOr<runtime::Result> VolumeBinder::Reconcile(const std::string& key) {
  runtime::ObjectPtr cached = claims_.cache().Get(key);
  if (cached == nullptr) return runtime::Result{};
  if (!StringAt(*cached, "metadata.deletionTimestamp").empty()) return Release(*cached);
  json::object claim = *cached;
  if (StringAt(claim, "spec.volumeName").empty()) {
    json::object& annotations = EnsureObject(EnsureObject(claim, "metadata"), "annotations");
    annotations["pv.kubernetes.io/bind-completed"] = "yes";
    annotations["pv.kubernetes.io/bound-by-controller"] = "yes";
    EnsureObject(claim, "spec")["volumeName"] = "pvc-" + StringAt(claim, "metadata.uid");
    StatusOr<json::object> updated = client_.Update(kPersistentVolumeClaims, "", claim);
    if (updated.status().Is(Reason::kNotFound)) return runtime::Result{};
    if (!updated.ok()) return updated.status();
    claim = std::move(*updated);
  }
  const json::value* storage = Find(claim, "spec.resources.requests.storage");
  const json::value* capacity = Find(claim, "status.capacity.storage");
  bool grown = storage != nullptr && capacity != nullptr &&
               api::QuantityValue(*storage, 1000) > api::QuantityValue(*capacity, 1000);
  if (StringAt(claim, "status.phase") == "Bound" && !grown) return runtime::Result{};
  json::object& status = EnsureObject(claim, "status");
  status["phase"] = "Bound";
  if (const json::value* modes = Find(claim, "spec.accessModes")) status["accessModes"] = *modes;
  if (storage != nullptr) status["capacity"] = json::object{{"storage", *storage}};
  StatusOr<json::object> written = client_.UpdateStatus(kPersistentVolumeClaims, "", claim);
  if (!written.ok() && !written.status().Is(Reason::kNotFound)) return written.status();
  return runtime::Result{};
}

StatusOr<runtime::Result> VolumeBinder::Release(const json::object& claim) {
  if (!Finalized(claim)) return runtime::Result{};
  std::string name = MetaAt(claim, "name");
  for (const runtime::ObjectPtr& pod :
       pods_.cache().ByIndex(runtime::kNamespaceIndex, MetaAt(claim, "namespace"))) {
    if (api::PodUsesClaim(*pod, name)) return runtime::Result{};
  }
  json::object released = claim;
  json::array kept;
  for (const json::value& f : EnsureObject(released, "metadata")["finalizers"].as_array()) {
    if (f != json::value(api::kClaimProtectionFinalizer)) kept.push_back(f);
  }
  EnsureObject(released, "metadata")["finalizers"] = std::move(kept);
  StatusOr<json::object> updated = client_.Update(kPersistentVolumeClaims, "", released);
  if (!updated.ok() && !updated.status().Is(Reason::kNotFound)) return updated.status();
  return runtime::Result{};
}

}  // namespace flotilla::member
