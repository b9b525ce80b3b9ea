// The sync controller (sync_controller.h).
#include "federation/sync/sync_controller.h"

#include <algorithm>

#include "api/views.h"
#include "federation/common/object_writes.h"

namespace flotilla::federation::sync {

// One plain kind: the copy is the same everywhere (kinds.h).
class SyncController::KindStrategy : public Strategy {
 public:
  KindStrategy(FederationContext& ctx, const SyncKind& spec, int workers)
      : ctx_(ctx),
        spec_(spec),
        reconciler_(ctx, *this, {.name = "sync-" + spec.resource.resource, .workers = workers}) {}

  const client::ResourceRef& resource() const override { return spec_.resource; }
  std::string kind() const override { return spec_.kind; }
  bool Federates(const json::object& obj) const override { return Propagates(spec_, obj); }

  Status Plan(Check& check) override {
    json::object desired = DesiredCopy(spec_, check.obj);
    for (Copy& c : check.copies) c.desired = desired;
    return Status::Ok();
  }
  bool UpToDate(const Copy& c) const override {
    return CopyUpToDate(spec_, *c.desired, *c.existing);
  }
  json::object Updated(const Copy& c) const override {
    return UpdatedCopy(spec_, *c.desired, *c.existing);
  }
  // A Namespace that exists already is simply used.
  Unmanaged OnUnmanaged(const Copy&) const override {
    return spec_.resource.namespaced ? Unmanaged::kWarn : Unmanaged::kLeaveQuietly;
  }
  StatusOr<runtime::Result> Finish(Check& check) override {
    if (spec_.resource.resource != "services") return runtime::Result{};
    // A Service's load-balancer ingress is what its copies were given.
    FLOTILLA_RETURN_IF_ERROR(
        WriteStatusIfChanged(ctx_.fed(), spec_.resource, check.obj, ServiceStatus(check)));
    return runtime::Result{};
  }

  const SyncKind& spec() const { return spec_; }
  Reconciler& reconciler() { return reconciler_; }

 private:
  // The federated Service's status: every managed copy's load-balancer
  // ingress, in cluster order, without repeats.
  static json::object ServiceStatus(const Check& check) {
    json::array ingress;
    for (const Copy& c : check.copies) {
      if (!c.Managed()) continue;
      const json::value* in = Find(*c.Current(), "status.loadBalancer.ingress");
      if (in == nullptr || !in->is_array()) continue;
      for (const json::value& i : in->get_array()) {
        if (std::find(ingress.begin(), ingress.end(), i) == ingress.end()) ingress.push_back(i);
      }
    }
    json::object lb;
    if (!ingress.empty()) lb["ingress"] = std::move(ingress);
    json::object status;
    const json::value* previous = Find(check.obj, "status");
    if (previous != nullptr && previous->is_object()) status = previous->get_object();
    status["loadBalancer"] = std::move(lb);
    return status;
  }

  FederationContext& ctx_;
  const SyncKind& spec_;
  Reconciler reconciler_;
};

SyncController::SyncController(FederationContext& ctx, SyncControllerOptions options) {
  for (const SyncKind& spec : SyncKinds()) {
    kinds_.push_back(std::make_unique<KindStrategy>(ctx, spec, options.workers));
  }
  // A Namespace that appears in a member lets the copies that wait for it
  // be created at once instead of after their backoff.
  ctx.members().AddHandler(kNamespaces, [this](const std::string&) {
    return runtime::EventHandler{.on_add = [this](const runtime::ObjectPtr& ns) {
      EnqueueNamespace(std::string(api::ObjectView(*ns).name()));
    }};
  });
}

SyncController::~SyncController() = default;

void SyncController::EnqueueNamespace(const std::string& ns) {
  for (const auto& k : kinds_) {
    if (!k->spec().resource.namespaced) continue;
    for (const runtime::ObjectPtr& obj :
         k->reconciler().objects().cache().ByIndex(runtime::kNamespaceIndex, ns)) {
      k->reconciler().Enqueue(runtime::ObjectKey(*obj));
    }
  }
}

}  // namespace flotilla::federation::sync
