// The sync controller (sync_controller.h).
#include "federation/sync/sync_controller.h"

#include "api/federated.h"
#include "federation/cluster/cluster_controller.h"
#include "federation/common/deletion.h"
#include "federation/common/member_copy.h"

namespace flotilla::federation::sync {
namespace {

using runtime::kEventTypeNormal;
using runtime::kEventTypeWarning;

std::vector<client::ResourceRef> Resources() {
  std::vector<client::ResourceRef> out;
  for (const SyncKind& k : SyncKinds()) out.push_back(k.resource);
  return out;
}

// The policy the API server recorded; DeletesMemberCopies said it is
// Background or Foreground.
std::string DeletionPolicyOf(const json::object& obj) {
  const json::object* meta = GetObject(obj, "metadata");
  const json::object* annotations = meta ? GetObject(*meta, "annotations") : nullptr;
  if (annotations == nullptr) return "";
  return std::string(GetString(*annotations, api::kDeletionPropagationAnnotation).value_or(""));
}

// `obj` with its apiVersion and kind, which list items may lack and events
// need.
json::object Typed(const SyncKind& kind, json::object obj) {
  obj["apiVersion"] = kind.resource.ApiVersion();
  obj["kind"] = kind.kind;
  return obj;
}

// A write to the federated object that conflicts (the cache is behind) is
// no failure: the newer object's event enqueues the key again.
StatusOr<runtime::Result> Quiet(const Status& s) {
  if (s.ok() || s.Is(Reason::kConflict)) return runtime::Result{};
  return s;
}

bool LabelsChanged(const runtime::ObjectPtr& a, const runtime::ObjectPtr& b) {
  const json::value* la = Find(*a, "metadata.labels");
  const json::value* lb = Find(*b, "metadata.labels");
  return (la == nullptr) != (lb == nullptr) || (la != nullptr && *la != *lb);
}

}  // namespace

struct SyncController::Kind {
  const SyncKind* spec = nullptr;
  std::unique_ptr<runtime::Informer> informer;  // the federated objects
  runtime::Controller* controller = nullptr;

  // "ConfigMap shop/web"
  std::string Describe(const json::object& obj) const {
    return spec->kind + " " + FederatedObjectKey(obj);
  }
};

struct SyncController::Target {
  std::string cluster;
  std::shared_ptr<client::Client> client;
  std::shared_ptr<runtime::Informer> informer;  // the copies
};

SyncController::SyncController(client::Client& fed, runtime::ControllerManager& manager,
                               Clock& clock, ClusterClients& clusters,
                               SyncControllerOptions options)
    : fed_(fed),
      clusters_(clusters),
      options_(options),
      cluster_objects_(fed, kClusters, clock),
      members_(clusters, Resources(), clock),
      events_(fed, clock, runtime::EventSource{.component = "flotilla-sync"}) {
  for (const SyncKind& spec : SyncKinds()) {
    auto k = std::make_unique<Kind>();
    k->spec = &spec;
    k->informer = std::make_unique<runtime::Informer>(fed, spec.resource, clock);
    Kind* raw = k.get();
    k->controller = &manager.AddController(
        "sync-" + spec.resource.resource, std::max(1, options_.workers),
        [this, raw](const std::string& key) { return Reconcile(*raw, key); }, options_.retry);
    k->informer->AddEventHandler(k->controller->EnqueueHandler());
    manager.AddInformer(k->informer.get());
    kinds_.push_back(std::move(k));
  }
  cluster_objects_.AddEventHandler(
      {.on_add = [this](const runtime::ObjectPtr&) { EnqueueAll(); },
       .on_update =
           [this](const runtime::ObjectPtr& a, const runtime::ObjectPtr& b) {
             if (LabelsChanged(a, b)) EnqueueAll();
           },
       .on_delete = [this](const runtime::ObjectPtr&) { EnqueueAll(); }});
  manager.AddInformer(&cluster_objects_);
  members_.AddHandlerFactory(
      [this](const std::string&, const client::ResourceRef& r) { return MemberHandler(r); });
  members_.Start();
}

SyncController::~SyncController() {
  Stop();
  for (auto& k : kinds_) k->informer->Stop();
  cluster_objects_.Stop();
}

void SyncController::Stop() { members_.Stop(); }

SyncController::Kind* SyncController::KindOf(const std::string& resource) const {
  for (const auto& k : kinds_) {
    if (k->spec->resource.resource == resource) return k.get();
  }
  return nullptr;
}

runtime::EventHandler SyncController::MemberHandler(const client::ResourceRef& resource) {
  Kind* k = KindOf(resource.resource);
  // A change to a copy (or to a same-named object) re-checks its federated
  // object; a new namespace lets what waits for it be created.
  auto changed = [this, k](const runtime::ObjectPtr& obj) {
    std::string key = runtime::ObjectKey(*obj);
    if (k->informer->cache().Get(key) != nullptr) k->controller->queue().Add(key);
  };
  runtime::EventHandler h{.on_add = changed,
                          .on_update = [changed](const runtime::ObjectPtr&,
                                                 const runtime::ObjectPtr& obj) { changed(obj); },
                          .on_delete = changed,
                          .on_synced =
                              [k] {
                                for (const std::string& key : k->informer->cache().Keys()) {
                                  k->controller->queue().Add(key);
                                }
                              }};
  if (!k->spec->resource.namespaced) {
    h.on_add = [this, changed](const runtime::ObjectPtr& ns) {
      changed(ns);
      EnqueueNamespace(StringAt(*ns, "metadata.name"));
    };
  }
  return h;
}

void SyncController::EnqueueAll() {
  for (const auto& k : kinds_) {
    for (const std::string& key : k->informer->cache().Keys()) k->controller->queue().Add(key);
  }
}

void SyncController::EnqueueNamespace(const std::string& ns) {
  for (const auto& k : kinds_) {
    if (!k->spec->resource.namespaced) continue;
    for (const runtime::ObjectPtr& obj :
         k->informer->cache().ByIndex(runtime::kNamespaceIndex, ns)) {
      k->controller->queue().Add(runtime::ObjectKey(*obj));
    }
  }
}

std::vector<SyncController::Target> SyncController::Targets(const Kind& k, bool* unsynced) const {
  std::vector<Target> targets;
  for (const std::string& cluster : members_.Clusters()) {
    Target t{cluster, clusters_.Get(cluster), members_.Get(cluster, k.spec->resource.resource)};
    if (t.client == nullptr || t.informer == nullptr) continue;  // no longer ready
    if (!t.informer->HasSynced()) {
      *unsynced = true;  // its on_synced enqueues everything again
      continue;
    }
    targets.push_back(std::move(t));
  }
  return targets;
}

std::optional<bool> SyncController::Admits(const ClusterSelector& selector,
                                           const std::string& cluster) const {
  runtime::ObjectPtr c = cluster_objects_.cache().Get(cluster);
  if (c == nullptr) return std::nullopt;
  return selector.Matches(*c);
}

void SyncController::Event(const json::object& obj, std::string_view type, std::string_view reason,
                           const std::string& message) {
  events_.Event(obj, type, reason, message);
}

StatusOr<runtime::Result> SyncController::Reconcile(Kind& k, const std::string& key) {
  runtime::ObjectPtr cached = k.informer->cache().Get(key);
  if (cached == nullptr || !Propagates(*k.spec, *cached)) return runtime::Result{};
  json::object obj = Typed(*k.spec, *cached);
  if (IsBeingDeleted(obj)) return Finalize(k, obj);
  bool unsynced = false;
  std::vector<Target> targets = Targets(k, &unsynced);
  // No member to write to: nothing to hold the object for either (a
  // federation without members pays no extra write per object). The
  // finalizer comes before the first copy does.
  if (targets.empty()) return runtime::Result{};
  StatusOr<json::object> held = EnsureFederationFinalizer(fed_, k.spec->resource, obj);
  if (!held.ok()) return Quiet(held.status());
  obj = Typed(*k.spec, std::move(*held));
  StatusOr<ClusterSelector> selector = ClusterSelector::Of(obj);
  if (!selector.ok()) {
    // Admission refuses these; one stored before it existed places nothing new.
    Event(obj, kEventTypeWarning, "InvalidClusterSelector", selector.status().message());
    return runtime::Result{};
  }
  json::object desired = DesiredCopy(*k.spec, obj);
  Status first_error;
  for (const Target& t : targets) {
    Status s = SyncCluster(k, obj, desired, *selector, t);
    if (!s.ok() && first_error.ok()) first_error = s;
  }
  return first_error.ok() ? StatusOr<runtime::Result>(runtime::Result{}) : first_error;
}

Status SyncController::SyncCluster(Kind& k, const json::object& obj, const json::object& desired,
                                   const ClusterSelector& selector, const Target& t) {
  runtime::ObjectPtr existing = t.informer->cache().Get(runtime::ObjectKey(obj));
  bool managed = existing != nullptr && IsManaged(*existing);
  std::optional<bool> admitted = Admits(selector, t.cluster);
  // A Cluster just unjoined (or not seen yet): its copies are not ours to move.
  if (!admitted) return Status::Ok();
  if (!*admitted) {
    if (!managed || IsBeingDeleted(*existing)) return Status::Ok();
    return DeleteCopy(k, obj, t, "Background");
  }
  if (existing == nullptr) return CreateCopy(k, obj, desired, t);
  if (!managed) {
    if (k.spec->resource.namespaced) {
      Event(obj, kEventTypeWarning, "NotManagedInCluster",
            k.Describe(obj) + " in cluster " + t.cluster + " exists and is not managed by the " +
                "federation (no " + api::kManagedByLabel + "=" + api::kManagedByValue +
                " label): left alone");
    }
    return Status::Ok();
  }
  if (IsBeingDeleted(*existing) || CopyUpToDate(*k.spec, desired, *existing)) return Status::Ok();
  return UpdateCopy(k, obj, desired, *existing, t);
}

Status SyncController::CreateCopy(Kind& k, const json::object& obj, const json::object& desired,
                                  const Target& t) {
  StatusOr<json::object> created = t.client->Create(k.spec->resource, "", desired);
  const std::string& resource = k.spec->resource.resource;
  metrics_.Record(t.cluster, resource, "create", created.ok());
  if (created.ok()) {
    Event(obj, kEventTypeNormal, "CreateInCluster",
          "Created " + k.Describe(obj) + " in cluster " + t.cluster);
    return Status::Ok();
  }
  // The member cache is behind (a copy just created, or an object someone
  // else made): its add event brings the key back.
  if (created.status().Is(Reason::kAlreadyExists)) return Status::Ok();
  Event(obj, kEventTypeWarning, "FailedCreateInCluster",
        "Failed to create " + k.Describe(obj) + " in cluster " + t.cluster + ": " +
            created.status().message());
  return created.status();
}

Status SyncController::UpdateCopy(Kind& k, const json::object& obj, const json::object& desired,
                                  const json::object& existing, const Target& t) {
  StatusOr<json::object> updated =
      t.client->Update(k.spec->resource, "", UpdatedCopy(*k.spec, desired, existing));
  metrics_.Record(t.cluster, k.spec->resource.resource, "update", updated.ok());
  if (updated.ok()) {
    Event(obj, kEventTypeNormal, "UpdateInCluster",
          "Updated " + k.Describe(obj) + " in cluster " + t.cluster);
    return Status::Ok();
  }
  if (!updated.status().Is(Reason::kConflict)) {
    Event(obj, kEventTypeWarning, "FailedUpdateInCluster",
          "Failed to update " + k.Describe(obj) + " in cluster " + t.cluster + ": " +
              updated.status().message());
  }
  return updated.status();
}

Status SyncController::DeleteCopy(Kind& k, const json::object& obj, const Target& t,
                                  std::string policy) {
  client::DeleteOptions opts{.propagation_policy = std::move(policy)};
  std::string ns = k.spec->resource.namespaced ? StringAt(obj, "metadata.namespace") : "";
  Status s = t.client->Delete(k.spec->resource, ns, StringAt(obj, "metadata.name"), opts);
  if (s.Is(Reason::kNotFound)) return Status::Ok();
  metrics_.Record(t.cluster, k.spec->resource.resource, "delete", s.ok());
  if (s.ok()) {
    Event(obj, kEventTypeNormal, "DeleteInCluster",
          "Deleted " + k.Describe(obj) + " in cluster " + t.cluster);
  } else {
    Event(obj, kEventTypeWarning, "FailedDeleteInCluster",
          "Failed to delete " + k.Describe(obj) + " in cluster " + t.cluster + ": " + s.message());
  }
  return s;
}

StatusOr<runtime::Result> SyncController::Finalize(Kind& k, const json::object& obj) {
  if (!HasFinalizer(obj, api::kDeleteFromUnderlyingClustersFinalizer)) return runtime::Result{};
  if (DeletesMemberCopies(obj)) {
    std::string policy = DeletionPolicyOf(obj);
    bool unsynced = false;
    bool remaining = false;
    Status first_error;
    for (const Target& t : Targets(k, &unsynced)) {
      runtime::ObjectPtr copy = t.informer->cache().Get(runtime::ObjectKey(obj));
      if (copy == nullptr) {
        // The cache may lag a copy created just now: ask the member.
        auto live = t.client->Get(k.spec->resource, StringAt(obj, "metadata.namespace"),
                                  StringAt(obj, "metadata.name"));
        if (live.ok()) {
          copy = std::make_shared<const json::object>(*std::move(live));
        } else if (!live.status().Is(Reason::kNotFound)) {
          if (first_error.ok()) first_error = live.status();
          continue;
        }
      }
      if (copy == nullptr || !IsManaged(*copy)) continue;
      remaining = true;
      if (IsBeingDeleted(*copy)) continue;
      Status s = DeleteCopy(k, obj, t, policy);
      if (!s.ok() && first_error.ok()) first_error = s;
    }
    if (!first_error.ok()) return first_error;
    // The member caches' delete events bring the key back sooner.
    if (remaining || unsynced) return runtime::Result{.requeue_after = options_.deletion_recheck};
  }
  return Quiet(RemoveFederationFinalizer(fed_, k.spec->resource, obj).status());
}

}  // namespace flotilla::federation::sync
