#include "member/statefulset/volume_binder.h"

#include "member/object_util.h"

namespace flotilla::member {
namespace {}  // namespace

VolumeBinder::VolumeBinder(ControllerContext& ctx)
    : client_(ctx.client), claims_(ctx.informers.For(kPersistentVolumeClaims)) {
  runtime::Controller& c = ctx.manager.AddController(
      "volume-binder", 1, [this](const std::string& key) { return Reconcile(key); });
  claims_.AddEventHandler(c.EnqueueHandler());
}

StatusOr<runtime::Result> VolumeBinder::Reconcile(const std::string& key) {
  runtime::ObjectPtr cached = claims_.cache().Get(key);
  if (cached == nullptr || !StringAt(*cached, "metadata.deletionTimestamp").empty()) {
    return runtime::Result{};
  }
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
  if (StringAt(claim, "status.phase") == "Bound") return runtime::Result{};
  json::object& status = EnsureObject(claim, "status");
  status["phase"] = "Bound";
  if (const json::value* modes = Find(claim, "spec.accessModes")) status["accessModes"] = *modes;
  if (const json::value* storage = Find(claim, "spec.resources.requests.storage")) {
    status["capacity"] = json::object{{"storage", *storage}};
  }
  StatusOr<json::object> written = client_.UpdateStatus(kPersistentVolumeClaims, "", claim);
  if (!written.ok() && !written.status().Is(Reason::kNotFound)) return written.status();
  return runtime::Result{};
}

}  // namespace flotilla::member
