#include "member/statefulset/volume_binder.h"

#include <algorithm>
#include <optional>
#include <vector>

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

json::object DefaultClass() {
  return json::object{
      {"apiVersion", "storage.k8s.io/v1"},
      {"kind", "StorageClass"},
      {"metadata",
       json::object{
           {"name", kDefaultStorageClass},
           {"annotations", json::object{{"storageclass.kubernetes.io/is-default-class", "true"}}}}},
      {"provisioner", kSimulatedProvisioner},
      {"reclaimPolicy", "Delete"},
      {"volumeBindingMode", "Immediate"},
      {"allowVolumeExpansion", true}};
}

}  // namespace

VolumeBinder::VolumeBinder(ControllerContext& ctx)
    : client_(ctx.client),
      events_(ctx.events),
      claims_(ctx.informers.For(kPersistentVolumeClaims)),
      pods_(ctx.informers.For(kPods)),
      classes_(ctx.informers.For(kStorageClasses)) {
  controller_ = &ctx.manager.AddController(
      "volume-binder", 1, [this](const std::string& key) { return Reconcile(key); });
  claims_.AddEventHandler(controller_->EnqueueHandler());
  // A pod that is scheduled may be a claim's first consumer; one that ends
  // or goes may let a claim being deleted go.
  auto claims_of = [this](const runtime::ObjectPtr& pod) {
    std::string ns = MetaAt(*pod, "namespace");
    for (const std::string& claim : api::ClaimNames(*pod))
      controller_->queue().Add(ns + "/" + claim);
  };
  pods_.AddEventHandler(
      {.on_add = claims_of,
       .on_update = [claims_of](const runtime::ObjectPtr&,
                                const runtime::ObjectPtr& pod) { claims_of(pod); },
       .on_delete = claims_of});
  // A class that comes, or becomes the default, may provision the claims
  // waiting for it.
  auto waiting_for = [this](const runtime::ObjectPtr& cls) {
    std::string name = MetaAt(*cls, "name");
    bool is_default = api::IsDefaultStorageClass(*cls);
    for (const runtime::ObjectPtr& claim : claims_.cache().List()) {
      if (!StringAt(*claim, "spec.volumeName").empty()) continue;
      std::optional<std::string> wants = api::ClaimClass(*claim);
      if (wants == name || (!wants && is_default)) {
        controller_->queue().Add(MetaAt(*claim, "namespace") + "/" + MetaAt(*claim, "name"));
      }
    }
  };
  classes_.AddEventHandler(
      {.on_add = waiting_for,
       .on_update = [waiting_for](const runtime::ObjectPtr&, const runtime::ObjectPtr& cls) {
         waiting_for(cls);
       }});
  runtime::Controller& addon = ctx.manager.AddController(
      "storage-addon", 1, [this](const std::string&) -> StatusOr<runtime::Result> {
        FLOTILLA_RETURN_IF_ERROR(CreateDefaultClass());
        return runtime::Result{};
      });
  addon.queue().Add(kDefaultStorageClass);
}

Status VolumeBinder::CreateDefaultClass() {
  StatusOr<json::object> created = client_.Create(kStorageClasses, "", DefaultClass());
  if (!created.ok() && !created.status().Is(Reason::kAlreadyExists)) return created.status();
  return Status::Ok();
}

StatusOr<runtime::Result> VolumeBinder::Reconcile(const std::string& key) {
  runtime::ObjectPtr cached = claims_.cache().Get(key);
  if (cached == nullptr) return runtime::Result{};
  if (!StringAt(*cached, "metadata.deletionTimestamp").empty()) return Release(*cached);
  json::object claim = *cached;
  if (StringAt(claim, "spec.volumeName").empty()) {
    StatusOr<json::object> bound = Bind(std::move(claim));
    if (bound.status().Is(Reason::kNotFound)) return runtime::Result{};
    if (!bound.ok()) return bound.status();
    claim = std::move(*bound);
    if (StringAt(claim, "spec.volumeName").empty()) return runtime::Result{};  // waits
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

StatusOr<json::object> VolumeBinder::Bind(json::object claim) {
  json::object ref = WithKind(claim, "v1", "PersistentVolumeClaim");
  std::optional<std::string> class_name = api::ClaimClass(claim);
  if (!class_name) {
    // Retroactive default class: a claim created before any default class
    // existed gets the one there is now.
    std::vector<runtime::ObjectPtr> classes = classes_.cache().List();
    std::vector<const json::object*> all;
    for (const runtime::ObjectPtr& c : classes) all.push_back(c.get());
    class_name = api::DefaultClassName(all);
    if (class_name) EnsureObject(claim, "spec")["storageClassName"] = *class_name;
  }
  if (!class_name || class_name->empty()) {
    events_.Event(ref, runtime::kEventTypeNormal, "FailedBinding",
                  "no persistent volumes available for this claim and no storage class is set");
    return claim;
  }
  runtime::ObjectPtr cls = classes_.cache().Get(*class_name);
  if (cls == nullptr) {
    events_.Event(ref, runtime::kEventTypeWarning, "ProvisioningFailed",
                  "storageclass.storage.k8s.io \"" + *class_name + "\" not found");
    return claim;
  }
  std::string node;
  if (StringAt(*cls, "volumeBindingMode") == "WaitForFirstConsumer") {
    std::string name = MetaAt(claim, "name");
    for (const runtime::ObjectPtr& pod :
         pods_.cache().ByIndex(runtime::kNamespaceIndex, MetaAt(claim, "namespace"))) {
      if (api::PodUsesClaim(*pod, name)) {
        node = StringAt(*pod, "spec.nodeName");
        break;
      }
    }
    if (node.empty()) {
      events_.Event(ref, runtime::kEventTypeNormal, "WaitForFirstConsumer",
                    "waiting for first consumer to be created before binding");
      return claim;
    }
  }
  std::string provisioner = StringAt(*cls, "provisioner");
  std::string volume = "pvc-" + StringAt(claim, "metadata.uid");
  json::object& annotations = EnsureObject(EnsureObject(claim, "metadata"), "annotations");
  annotations["pv.kubernetes.io/bind-completed"] = "yes";
  annotations["pv.kubernetes.io/bound-by-controller"] = "yes";
  annotations["volume.beta.kubernetes.io/storage-provisioner"] = provisioner;
  annotations["volume.kubernetes.io/storage-provisioner"] = provisioner;
  if (!node.empty()) annotations["volume.kubernetes.io/selected-node"] = node;
  EnsureObject(claim, "spec")["volumeName"] = volume;
  StatusOr<json::object> updated = client_.Update(kPersistentVolumeClaims, "", claim);
  if (updated.ok()) {
    events_.Event(ref, runtime::kEventTypeNormal, "ProvisioningSucceeded",
                  "Successfully provisioned volume " + volume);
  }
  return updated;
}

StatusOr<runtime::Result> VolumeBinder::Release(const json::object& claim) {
  if (!Finalized(claim)) return runtime::Result{};
  std::string name = MetaAt(claim, "name");
  for (const runtime::ObjectPtr& pod :
       pods_.cache().ByIndex(runtime::kNamespaceIndex, MetaAt(claim, "namespace"))) {
    if (api::PodUsesClaim(*pod, name)) return runtime::Result{};
  }
  // The pods' cache may not have seen a pod created a moment ago: as kube's
  // pvc-protection controller does, the API server has the last word.
  StatusOr<client::ObjectList> live = client_.List(kPods, MetaAt(claim, "namespace"), {});
  if (!live.ok()) return live.status();
  for (const json::object& pod : live->items) {
    if (api::PodUsesClaim(pod, name)) return runtime::Result{};
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
