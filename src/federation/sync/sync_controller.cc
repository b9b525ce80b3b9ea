// The sync controller (sync_controller.h).
#include "federation/sync/sync_controller.h"

#include <algorithm>
#include <any>
#include <set>

#include "api/claims.h"
#include "api/federated.h"
#include "api/views.h"
#include "federation/common/federated_kind.h"
#include "federation/common/object_writes.h"
#include "federation/sync/custom_kinds.h"
#include "federation/sync/interpreted.h"

namespace flotilla::federation::sync {

// One plain kind: the copy is the same everywhere (kinds.h).
class SyncController::KindStrategy : public Strategy {
 public:
  KindStrategy(FederationContext& ctx, SyncKind spec, int workers)
      : ctx_(ctx),
        spec_(std::move(spec)),
        reconciler_(ctx, *this, {.name = ControllerName(spec_), .workers = workers}) {
    // A claim kept in a cluster for the pods there that use it is checked
    // again when one of them goes.
    if (spec_.follows_dependents) {
      pods_handler_ = ctx.members().AddHandler(kPods, [this](const std::string&) {
        return runtime::EventHandler{
            .on_delete = [this](const runtime::ObjectPtr& pod) { EnqueueClaimsOf(*pod); }};
      });
    }
  }
  ~KindStrategy() override {
    if (pods_handler_) ctx_.members().RemoveHandler(*pods_handler_);
  }

  const client::ResourceRef& resource() const override { return spec_.resource; }
  std::string kind() const override { return spec_.kind; }
  bool Federates(const json::object& obj) const override { return Propagates(spec_, obj); }
  // A kind divided by its customization counts its copies' pods; a claim
  // stays where pods use it.
  std::vector<client::ResourceRef> MemberReads() const override {
    if (spec_.whole || spec_.follows_dependents) return {kPods};
    return {};
  }
  bool FollowsDependentsOnly() const override { return spec_.follows_dependents; }
  bool MustReplace(const Copy& c) const override {
    return MustReplaceCopy(spec_, *c.desired, *c.existing);
  }
  // A claim is not deleted from a cluster while a pod there uses it.
  bool KeepNotAdmitted(const Check& check, const std::string& cluster) const override {
    const auto* in_use = std::any_cast<std::set<std::string>>(&check.state);
    return in_use != nullptr && in_use->contains(cluster);
  }

  Status Plan(Check& check) override {
    if (spec_.follows_dependents) check.state = ClustersUsing(check);
    const CustomizationPtr& custom = check.custom;
    const bool divided = spec_.whole && custom != nullptr &&
                         custom->Has(interpreter::Operation::kInterpretReplica) &&
                         custom->Has(interpreter::Operation::kReviseReplica);
    // No cluster, no copy to build.
    if (check.copies.empty() && !divided) return Status::Ok();
    json::object desired = DesiredCopy(spec_, check.obj());
    if (divided) {
      StatusOr<int64_t> unplaced = PlanDivided(*custom, ctx_.members(), check, desired);
      FLOTILLA_RETURN_IF_ERROR(reconciler_.Interpreted(check, unplaced.status()));
      if (*unplaced > 0) {
        reconciler_.events().Event(
            check.obj(), runtime::kEventTypeWarning, "NotEnoughRoom",
            std::to_string(*unplaced) +
                " replicas fit in no admitted cluster (their free cpu, memory and pods)");
        check.state = *unplaced;
      }
      return Status::Ok();
    }
    for (Copy& c : check.copies) {
      if (&c == &check.copies.back()) {
        c.desired = std::move(desired);
      } else {
        c.desired = desired;
      }
    }
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
    if (spec_.whole) {
      // Replicas without room: their room is not an event.
      runtime::Result next;
      if (check.state.has_value()) next.requeue_after = reconciler_.options().room_recheck;
      FLOTILLA_ASSIGN_OR_RETURN(std::optional<json::object> stored, GatherStatus(check));
      const CustomizationPtr& custom = check.custom;
      if (!spec_.status_subresource || custom == nullptr ||
          !custom->Has(interpreter::Operation::kAggregateStatus)) {
        return next;
      }
      StatusOr<json::object> status = AggregatedStatus(*custom, check);
      FLOTILLA_RETURN_IF_ERROR(reconciler_.Interpreted(check, status.status()));
      // On the object as the annotation's write left it (its resourceVersion).
      FLOTILLA_RETURN_IF_ERROR(WriteStatusIfChanged(
          ctx_.fed(), spec_.resource, stored ? *stored : check.obj(), *std::move(status)));
      return next;
    }
    if (spec_.resource.resource == "resourcequotas") {
      FLOTILLA_RETURN_IF_ERROR(WriteStatusIfChanged(
          ctx_.fed(), spec_.resource, check.obj(), QuotaStatus(check.obj(), ManagedCopies(check))));
      return runtime::Result{};
    }
    if (spec_.kind == "PersistentVolumeClaim") {
      // A copy is ready once Bound.
      std::string breakdown = CopyBreakdown(check.copies, [](const json::object* copy) {
        bool bound = copy != nullptr && StringViewAt(*copy, "status.phase") == "Bound";
        return BreakdownCell{.planned = 1, .ready = bound ? 1 : 0};
      });
      FLOTILLA_RETURN_IF_ERROR(
          WriteStatusIfChanged(ctx_.fed(), spec_.resource, check.obj(),
                               PersistentVolumeClaimStatus(check.obj(), ManagedCopies(check)),
                               {{api::kClaimStatusAnnotation, std::move(breakdown)}}));
      return runtime::Result{};
    }
    if (spec_.resource.resource != "services") return runtime::Result{};
    // A Service's load-balancer ingress is what its copies were given,
    // unless a customization aggregates its status (it overrides only the
    // operations it defines).
    const CustomizationPtr& custom = check.custom;
    if (custom != nullptr && custom->Has(interpreter::Operation::kAggregateStatus)) {
      StatusOr<json::object> status = AggregatedStatus(*custom, check);
      FLOTILLA_RETURN_IF_ERROR(reconciler_.Interpreted(check, status.status()));
      FLOTILLA_RETURN_IF_ERROR(
          WriteStatusIfChanged(ctx_.fed(), spec_.resource, check.obj(), *std::move(status)));
      return runtime::Result{};
    }
    FLOTILLA_RETURN_IF_ERROR(
        WriteStatusIfChanged(ctx_.fed(), spec_.resource, check.obj(), ServiceStatus(check)));
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
    const json::value* previous = Find(check.obj(), "status");
    if (previous != nullptr && previous->is_object()) status = previous->get_object();
    status["loadBalancer"] = std::move(lb);
    return status;
  }

  // The managed copies as this check left them.
  static std::vector<const json::object*> ManagedCopies(const Check& check) {
    std::vector<const json::object*> out;
    for (const Copy& c : check.copies) {
      if (c.Managed()) out.push_back(c.Current());
    }
    return out;
  }

  // The clusters the object's placement no longer admits where a pod of
  // its namespace uses it (a claim).
  std::set<std::string> ClustersUsing(const Check& check) const {
    std::set<std::string> out;
    for (const std::string& cluster : check.not_admitted) {
      std::shared_ptr<runtime::Informer> pods = ctx_.members().Get(cluster, kPods);
      if (pods == nullptr) continue;
      for (const runtime::ObjectPtr& pod :
           pods->cache().ByIndex(runtime::kNamespaceIndex, check.ns)) {
        if (api::PodUsesClaim(*pod, check.name)) {
          out.insert(cluster);
          break;
        }
      }
    }
    return out;
  }

  // Checks the claims `pod` names again.
  void EnqueueClaimsOf(const json::object& pod) {
    std::string ns(StringViewAt(pod, "metadata.namespace"));
    for (const std::string& claim : api::ClaimNames(pod)) reconciler_.Enqueue(ns + "/" + claim);
  }

  // "sync-configmaps"; "sync-crontabs.stable.example.com" for a custom kind.
  static std::string ControllerName(const SyncKind& spec) {
    const client::ResourceRef& r = spec.resource;
    return "sync-" + (spec.whole ? r.resource + "." + r.group : r.resource);
  }

  // The status of every managed copy into the annotation (none: removed);
  // the object as stored afterwards, nullopt when it had them already.
  StatusOr<std::optional<json::object>> GatherStatus(const Check& check) {
    std::map<std::string, json::value> statuses;
    for (const Copy& c : check.copies) {
      if (!c.Managed()) continue;
      const json::value* status = c.Current()->if_contains("status");
      if (status != nullptr) statuses[c.cluster()] = *status;
    }
    std::string annotation = StatusByCluster(statuses);
    if (annotation.empty()) {
      return SetAnnotations(ctx_.fed(), spec_.resource, check.obj(), {},
                            {api::kStatusByClusterAnnotation});
    }
    return SetAnnotation(ctx_.fed(), spec_.resource, check.obj(), api::kStatusByClusterAnnotation,
                         annotation);
  }

  FederationContext& ctx_;
  const SyncKind spec_;
  Reconciler reconciler_;
  std::optional<MemberInformers::HandlerId> pods_handler_;
};

SyncController::SyncController(FederationContext& ctx, SyncControllerOptions options)
    : ctx_(ctx), options_(options) {
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
  MutexLock lock(mu_);
  for (const auto& k : kinds_) {
    const client::ResourceRef& r = k->spec().resource;
    if (r.group == kind.resource.group && r.resource == kind.resource.resource) return false;
  }
  kinds_.push_back(std::make_unique<KindStrategy>(ctx_, std::move(kind), options_.workers));
  return true;
}

bool SyncController::RemoveKind(const client::ResourceRef& resource) {
  std::unique_ptr<KindStrategy> removed;
  {
    MutexLock lock(mu_);
    auto it = std::find_if(kinds_.begin(), kinds_.end(), [&](const auto& k) {
      const client::ResourceRef& r = k->spec().resource;
      return r.group == resource.group && r.resource == resource.resource;
    });
    if (it == kinds_.end()) return false;
    removed = std::move(*it);
    kinds_.erase(it);
  }
  // Its reconciler unregisters and stops (outside the lock: a check under
  // way may be enqueuing namespaces' objects).
  removed.reset();
  return true;
}

// Under the lock, which keeps every kind alive: each only enqueues.
void SyncController::EnqueueNamespace(const std::string& ns) {
  MutexLock lock(mu_);
  for (const auto& k : kinds_) {
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
             .help = "Namespaces, ConfigMaps, Secrets, ServiceAccounts, Services, LimitRanges, "
                     "ResourceQuotas, PersistentVolumeClaims, NetworkPolicies, IngressClasses, "
                     "Roles, RoleBindings, CustomResourceDefinitions and every custom kind "
                     "propagated to the members (docs/federation.md)",
             .propagates = std::move(propagates),
             .listings = {WorkloadListing{.short_names = {"pvc"},
                                          .breakdown_annotation = api::kClaimStatusAnnotation,
                                          .resource = client::kPersistentVolumeClaims,
                                          .kind = "PersistentVolumeClaim"}},
             .build = [](const KindEnv& env) {
               return std::make_shared<sync::SyncController>(
                   env.ctx, env.options.Get<sync::SyncControllerOptions>());
             }});
}

}  // namespace flotilla::federation
