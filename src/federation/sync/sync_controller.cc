// The sync controller (sync_controller.h).
#include "federation/sync/sync_controller.h"

#include <algorithm>

#include "api/federated.h"
#include "api/views.h"
#include "federation/common/federated_kind.h"
#include "federation/common/object_writes.h"
#include "federation/sync/custom_kinds.h"
#include "federation/sync/dependencies.h"
#include "federation/sync/interpreted.h"

namespace flotilla::federation::sync {

// One plain kind: the copy is the same everywhere (kinds.h).
class SyncController::KindStrategy : public Strategy {
 public:
  KindStrategy(FederationContext& ctx, SyncController& owner, SyncKind spec, int workers)
      : ctx_(ctx),
        owner_(owner),
        spec_(std::move(spec)),
        reconciler_(ctx, *this, {.name = ControllerName(spec_), .workers = workers}) {}

  const client::ResourceRef& resource() const override { return spec_.resource; }
  std::string kind() const override { return spec_.kind; }
  bool Federates(const json::object& obj) const override { return Propagates(spec_, obj); }

  Status Plan(Check& check) override {
    json::object desired = DesiredCopy(spec_, check.obj);
    std::optional<interpreter::Customization> custom = Customization();
    if (spec_.whole && custom.has_value() &&
        custom->Has(interpreter::Operation::kInterpretReplica) &&
        custom->Has(interpreter::Operation::kReviseReplica)) {
      FLOTILLA_RETURN_IF_ERROR(Interpreted(check, PlanDivided(*custom, check, desired)));
    } else {
      for (Copy& c : check.copies) c.desired = desired;
    }
    return Interpreted(check, RecordDependencies(check, custom));
  }
  // Where objects that depend on this one have their copies.
  bool AlsoAdmits(const Check& check, const std::string& cluster) const override {
    return owner_.dependencies_.NeededIn(
        {spec_.resource.ApiVersion(), spec_.kind, check.ns, check.name}, cluster);
  }
  void Forget(const std::string& key) override {
    owner_.EnqueueDependencies(owner_.dependencies_.Remove(DependentId(key)));
  }
  // What Retain keeps of the member's copy is part of what the copy should
  // be: a copy that differs from the federation's object only there is up
  // to date.
  bool UpToDate(const Copy& c) const override {
    std::optional<interpreter::Customization> custom = Customization();
    if (custom.has_value() && custom->Has(interpreter::Operation::kRetain)) {
      return CopyUpToDate(spec_, Retained(*custom, *c.desired, *c.existing), *c.existing);
    }
    return CopyUpToDate(spec_, *c.desired, *c.existing);
  }
  json::object Updated(const Copy& c) const override {
    json::object updated = UpdatedCopy(spec_, *c.desired, *c.existing);
    std::optional<interpreter::Customization> custom = Customization();
    return custom.has_value() ? Retained(*custom, std::move(updated), *c.existing) : updated;
  }
  // A Namespace that exists already is simply used.
  Unmanaged OnUnmanaged(const Copy&) const override {
    return spec_.resource.namespaced ? Unmanaged::kWarn : Unmanaged::kLeaveQuietly;
  }
  StatusOr<runtime::Result> Finish(Check& check) override {
    if (spec_.whole) {
      FLOTILLA_ASSIGN_OR_RETURN(json::object stored, GatherStatus(check));
      std::optional<interpreter::Customization> custom = Customization();
      if (!spec_.status_subresource || !custom.has_value() ||
          !custom->Has(interpreter::Operation::kAggregateStatus)) {
        return runtime::Result{};
      }
      StatusOr<json::object> status = AggregatedStatus(*custom, check);
      FLOTILLA_RETURN_IF_ERROR(Interpreted(check, status.status()));
      // On the object as the annotation's write left it (its resourceVersion).
      FLOTILLA_RETURN_IF_ERROR(
          WriteStatusIfChanged(ctx_.fed(), spec_.resource, stored, *std::move(status)));
      return runtime::Result{};
    }
    if (spec_.resource.resource != "services") return runtime::Result{};
    // A Service's load-balancer ingress is what its copies were given,
    // unless a customization aggregates its status (it overrides only the
    // operations it defines).
    std::optional<interpreter::Customization> custom = Customization();
    if (custom.has_value() && custom->Has(interpreter::Operation::kAggregateStatus)) {
      StatusOr<json::object> status = AggregatedStatus(*custom, check);
      FLOTILLA_RETURN_IF_ERROR(Interpreted(check, status.status()));
      FLOTILLA_RETURN_IF_ERROR(
          WriteStatusIfChanged(ctx_.fed(), spec_.resource, check.obj, *std::move(status)));
      return runtime::Result{};
    }
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

  // The kind's interpreter customization, if any.
  std::optional<interpreter::Customization> Customization() const {
    if (spec_.customizations == nullptr) return std::nullopt;
    return spec_.customizations->For(spec_.resource.ApiVersion(), spec_.kind);
  }

  // `s`, the outcome of a script; a failure is also a Warning event on the
  // object (the check fails, so nothing is written).
  Status Interpreted(const Check& check, Status s) {
    if (!s.ok()) {
      reconciler_.events().Event(check.obj, runtime::kEventTypeWarning, "InterpreterFailed",
                                 std::string(s.message()));
    }
    return s;
  }

  // What the object names with GetDependencies (when its customization
  // defines it) and where its copies go, for those objects to follow.
  Status RecordDependencies(const Check& check,
                            const std::optional<interpreter::Customization>& custom) {
    std::vector<DependencyRef> refs;
    std::set<std::string> clusters;
    if (custom.has_value() && custom->Has(interpreter::Operation::kInterpretDependency)) {
      FLOTILLA_ASSIGN_OR_RETURN(json::array named,
                                interpreter::GetDependencies(*custom, check.obj));
      refs = DependencyRefs(named, check.ns);
      for (const Copy& c : check.copies) {
        if (c.desired && !c.remove) clusters.insert(c.cluster());
      }
    }
    owner_.EnqueueDependencies(
        owner_.dependencies_.Set(DependentId(check.key), std::move(refs), std::move(clusters)));
    return Status::Ok();
  }
  std::string DependentId(const std::string& key) const {
    return spec_.resource.group + "/" + spec_.resource.resource + ":" + key;
  }

  // "sync-configmaps"; "sync-crontabs.stable.example.com" for a custom kind.
  static std::string ControllerName(const SyncKind& spec) {
    const client::ResourceRef& r = spec.resource;
    return "sync-" + (spec.whole ? r.resource + "." + r.group : r.resource);
  }

  // The status of every managed copy into the annotation (none: removed);
  // the object as stored afterwards.
  StatusOr<json::object> GatherStatus(const Check& check) {
    std::map<std::string, json::value> statuses;
    for (const Copy& c : check.copies) {
      if (!c.Managed()) continue;
      const json::value* status = c.Current()->if_contains("status");
      if (status != nullptr) statuses[c.cluster()] = *status;
    }
    std::string annotation = StatusByCluster(statuses);
    if (annotation.empty()) {
      return SetAnnotations(ctx_.fed(), spec_.resource, check.obj, {},
                            {api::kStatusByClusterAnnotation});
    }
    return SetAnnotation(ctx_.fed(), spec_.resource, check.obj, api::kStatusByClusterAnnotation,
                         annotation);
  }

  FederationContext& ctx_;
  SyncController& owner_;
  const SyncKind spec_;
  Reconciler reconciler_;
};

SyncController::SyncController(FederationContext& ctx, SyncControllerOptions options)
    : ctx_(ctx), options_(options) {
  if (options.custom_kinds) {
    runtime::Informer& informer = ctx.informers().For(kResourceInterpreterCustomizations);
    customizations_ = std::make_unique<Customizations>(informer);
    informer.AddEventHandler(
        {.on_add = [this](const runtime::ObjectPtr& c) { RecheckTarget(*c); },
         .on_update =
             [this](const runtime::ObjectPtr& old, const runtime::ObjectPtr& c) {
               RecheckTarget(*old);
               RecheckTarget(*c);
             },
         .on_delete = [this](const runtime::ObjectPtr& c) { RecheckTarget(*c); }});
  }
  for (const SyncKind& spec : SyncKinds()) AddKind(spec);
  if (options.custom_kinds) custom_ = std::make_unique<CustomKinds>(ctx, *this);
  // A Namespace that appears in a member lets the copies that wait for it
  // be created at once instead of after their backoff.
  ctx.members().AddHandler(kNamespaces, [this](const std::string&) {
    return runtime::EventHandler{.on_add = [this](const runtime::ObjectPtr& ns) {
      EnqueueNamespace(std::string(api::ObjectView(*ns).name()));
    }};
  });
}

SyncController::~SyncController() = default;

bool SyncController::AddKind(SyncKind kind) {
  if (kind.customizations == nullptr) kind.customizations = customizations_.get();
  MutexLock lock(mu_);
  for (const auto& k : kinds_) {
    const client::ResourceRef& r = k->spec().resource;
    if (r.group == kind.resource.group && r.resource == kind.resource.resource) return false;
  }
  kinds_.push_back(std::make_shared<KindStrategy>(ctx_, *this, std::move(kind), options_.workers));
  return true;
}

void SyncController::RecheckTarget(const json::object& customization) {
  std::string_view api_version = StringViewAt(customization, "spec.target.apiVersion");
  std::string_view kind = StringViewAt(customization, "spec.target.kind");
  std::vector<std::shared_ptr<KindStrategy>> kinds;
  {
    MutexLock lock(mu_);
    kinds = kinds_;
  }
  for (const auto& k : kinds) {
    if (k->spec().kind == kind && k->spec().resource.ApiVersion() == api_version) {
      k->reconciler().EnqueueAll();
    }
  }
}

void SyncController::EnqueueDependencies(const std::vector<DependencyRef>& refs) {
  if (refs.empty()) return;
  std::vector<std::shared_ptr<KindStrategy>> kinds;
  {
    MutexLock lock(mu_);
    kinds = kinds_;
  }
  for (const DependencyRef& r : refs) {
    for (const auto& k : kinds) {
      if (k->spec().kind != r.kind || k->spec().resource.ApiVersion() != r.api_version) continue;
      k->reconciler().Enqueue(k->spec().resource.namespaced ? r.ns + "/" + r.name : r.name);
    }
  }
}

void SyncController::EnqueueNamespace(const std::string& ns) {
  std::vector<std::shared_ptr<KindStrategy>> kinds;
  {
    MutexLock lock(mu_);
    kinds = kinds_;
  }
  for (const auto& k : kinds) {
    if (!k->spec().resource.namespaced) continue;
    for (const runtime::ObjectPtr& obj :
         k->reconciler().objects().cache().ByIndex(runtime::kNamespaceIndex, ns)) {
      k->reconciler().Enqueue(runtime::ObjectKey(*obj));
    }
  }
}

}  // namespace flotilla::federation::sync

namespace flotilla::federation {

void RegisterSync(KindRegistry& kinds) {
  std::vector<client::ResourceRef> propagates;
  for (const sync::SyncKind& k : sync::SyncKinds()) propagates.push_back(k.resource);
  kinds.Add({.controller = "sync",
             .help = "Namespaces, ConfigMaps, Secrets, Services, CustomResourceDefinitions and "
                     "every custom kind propagated to the members (docs/federation.md)",
             .propagates = std::move(propagates),
             .build = [](const KindEnv& env) {
               return std::make_shared<sync::SyncController>(
                   env.ctx, env.options.Get<sync::SyncControllerOptions>());
             }});
}

}  // namespace flotilla::federation
