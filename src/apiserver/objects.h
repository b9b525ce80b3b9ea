// Objects: create, read, update, patch, delete and list API objects in the
// Store with Kubernetes semantics (metadata, generation, optimistic
// concurrency, status and scale subresources, finalizers and deletion
// propagation, namespace lifecycle). The HTTP handlers and the in-process
// client both call this; it knows nothing about HTTP.
//
// Thread-safe. Objects returned are copies the caller owns.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/managed_fields.h"
#include "api/patch.h"
#include "api/registry.h"
#include "api/validation.h"
#include "apiserver/claim_admission.h"
#include "apiserver/limit_ranger.h"
#include "apiserver/quota_admission.h"
#include "base/clock.h"
#include "base/json.h"
#include "storage/store.h"

namespace flotilla::apiserver {

enum class FieldValidation { kIgnore, kWarn, kStrict };

// The stored bytes of a write (WriteOptions::stored_json); revision 0:
// none were left.
struct StoredJson {
  std::string json;
  int64_t revision = 0;
};

struct WriteOptions {
  bool dry_run = false;
  // The field manager the write is recorded under in metadata.managedFields
  // (the request's fieldManager, else its User-Agent's product name). Empty:
  // the API server's own writes, recorded as "flotilla-apiserver".
  std::string field_manager;
  // Server-side apply only: take fields other managers own (force=true).
  bool force = false;
  FieldValidation field_validation = FieldValidation::kWarn;
  std::vector<std::string>* warnings = nullptr;  // filled under kWarn
  // Called with the object about to be stored by a create, update or patch
  // (after defaults and validation, before the write) and, for an update,
  // the object as stored; an error refuses the write with that error. The
  // API server's per-user admission (RBAC escalation checks) goes here.
  // Null: none.
  std::function<Status(const json::object& obj, const json::object* old)> admit;
  // Where a create, update or patch of a kind stored as served leaves the
  // JSON it stored (the object it returns, serialized, resourceVersion
  // included), so that the response need not serialize it again. Null:
  // not wanted.
  StoredJson* stored_json = nullptr;
};

enum class Propagation { kDefault, kOrphan, kBackground, kForeground };

struct DeleteOptions {
  Propagation propagation = Propagation::kDefault;
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  std::optional<int64_t> grace_period_seconds;
  bool dry_run = false;
};

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  int64_t limit = 0;
  std::string continue_token;
  // Hand out the stored bytes (ListPage::raw_items) instead of objects when
  // nothing needs decoding: no selector and no version conversion.
  bool allow_raw = false;
};

struct ListPage {
  std::vector<json::object> items;
  bool raw = false;  // items are in raw_items instead
  // The stored records (their values are the JSON, resourceVersion included).
  std::vector<std::shared_ptr<const storage::KeyValue>> raw_items;
  int64_t revision = 0;
  std::string continue_token;  // "" when complete
  // metadata.remainingItemCount: the objects after this page, when a limit
  // cut it short and no selector filtered it; -1 otherwise.
  int64_t remaining = -1;
};

// Checks an incoming object against the kind's schema as kube-apiserver's
// decoder does: type errors and, under kStrict, unknown fields are a
// BadRequest; otherwise unknown fields are dropped from `obj` (and under
// kWarn reported in `warnings`). Null = no schema checks.
using SchemaChecker =
    std::function<Status(const api::Resource& res, json::object& obj, FieldValidation validation,
                         std::vector<std::string>* warnings)>;

// Removes the fields at `paths` ("spec.x", "spec.containers[0].y") from obj.
void PruneFields(json::object& obj, const std::vector<std::string>& paths);

// Strategic merge patch metadata for a resource (see api/patch.h).
using PatchInfoProvider = std::function<api::PatchInfoLookup(const api::Resource& res)>;
// How server-side apply reads a resource's objects (api/typed.h). Null, or
// a resource it knows nothing of: every shape is deduced from the values.
using TypingProvider = std::function<api::Typed(const api::Resource& res)>;

struct PatchRequest {
  std::string content_type;
  std::string body;
};

// A stored object with metadata.resourceVersion set to `revision`: the
// etcd backend's EtcdOptions::set_revision, for a write that got another
// revision than its mutation was given.
StatusOr<std::string> WithResourceVersion(std::string_view stored, int64_t revision);

class Objects {
 public:
  Objects(const api::Registry& registry, storage::Store& store, Clock& clock);

  void SetSchemaChecker(SchemaChecker checker) { schema_checker_ = std::move(checker); }
  void SetPatchInfo(PatchInfoProvider provider) { patch_info_ = std::move(provider); }
  void SetTyping(TypingProvider provider) { typing_ = std::move(provider); }
  // How StorageResource finds the kinds the server serves beyond the
  // registry's (its CustomResourceDefinitions'). Set before serving.
  using KindResolver = std::function<std::shared_ptr<const api::Resource>(std::string_view group,
                                                                          std::string_view plural)>;
  void SetKindResolver(KindResolver resolver) { resolve_kind_ = std::move(resolver); }
  // The resource whose version stores group/plural (what a storage key
  // names): the registry's or a served custom kind; null when none.
  std::shared_ptr<const api::Resource> StorageResource(std::string_view group,
                                                       std::string_view plural) const;
  // How long an Event lives after its last write (kube-apiserver's
  // --event-ttl); zero: for ever. Set before serving.
  void SetEventTtl(Duration ttl) { event_ttl_ = ttl; }
  // The TTL every write of `res` gives its object: the event TTL for v1
  // Events, none for every other kind.
  Duration TtlOf(const api::Resource& res) const;

  // Storage key of an object, and the prefix of a resource's (namespace's) objects.
  static std::string Key(const api::Resource& res, std::string_view ns, std::string_view name);
  static std::string Prefix(const api::Resource& res, std::string_view ns);

  StatusOr<json::object> Get(const api::Resource& res, const std::string& ns,
                             const std::string& name);
  // The object's stored JSON, in the storage version. When the resource is
  // stored as served it is what Get returns, serialized: a GET answers with
  // it without parsing and re-encoding (as a list splices it).
  StatusOr<std::string> GetStored(const api::Resource& res, const std::string& ns,
                                  const std::string& name);
  StatusOr<ListPage> List(const api::Resource& res, const std::string& ns, const ListOptions& opts);
  StatusOr<json::object> Create(const api::Resource& res, const std::string& ns, json::object obj,
                                const WriteOptions& opts);
  // subresource: "" (main resource: status kept), "status" (only status kept
  // from `obj`).
  StatusOr<json::object> Update(const api::Resource& res, const std::string& ns,
                                const std::string& name, const std::string& subresource,
                                json::object obj, const WriteOptions& opts);
  // Every PATCH flavour; `application/apply-patch+yaml` is Apply of the
  // body (YAML or JSON). *created (when given) says whether an apply
  // created the object.
  StatusOr<json::object> Patch(const api::Resource& res, const std::string& ns,
                               const std::string& name, const std::string& subresource,
                               const PatchRequest& patch, const WriteOptions& opts,
                               bool* created = nullptr);
  // Server-side apply of `config` as opts.field_manager (required), with
  // kube-apiserver's semantics (api/managed_fields.h): merged by the
  // schema, conflicts (409) unless opts.force, fields the manager stopped
  // applying removed. A missing object is created (*created = true) unless
  // `endpoint` is a subresource. `endpoint`: "" (the object; status is
  // kept), "status" (only status is taken) or "scale" (`config` is the
  // object's own kind setting spec.replicas, as the scale subresource's
  // apply becomes).
  StatusOr<json::object> Apply(const api::Resource& res, const std::string& ns,
                               const std::string& name, const std::string& endpoint,
                               json::object config, const WriteOptions& opts,
                               bool* created = nullptr);
  // Returns the deleted object, or the object now marked for deletion when
  // finalizers or a grace period hold it. A pod bound to a node and not
  // terminal is deleted gracefully, as kube-apiserver does: the first DELETE
  // sets deletionTimestamp (now + grace) and deletionGracePeriodSeconds
  // (the request's gracePeriodSeconds, else spec.terminationGracePeriodSeconds)
  // and keeps the pod for its kubelet; a later DELETE may only shorten the
  // period, and one with gracePeriodSeconds=0 removes it. Unbound or
  // terminal pods, and every other kind, have no grace period.
  StatusOr<json::object> Delete(const api::Resource& res, const std::string& ns,
                                const std::string& name, const DeleteOptions& opts);

  // pods/binding: assigns the unbound pod `name` to the node a v1 Binding
  // names (spec.nodeName, PodScheduled=True, the Binding's annotations), as
  // kube-apiserver's BindingREST does. Conflict when the pod is already
  // assigned or being deleted; NotFound without the pod. Returns the
  // Success Status kube-apiserver answers.
  StatusOr<json::object> Bind(const api::Resource& res, const std::string& ns,
                              const std::string& name, const json::object& binding,
                              const WriteOptions& opts);

  // pods/eviction: deletes pod `name` with `opts` (an Eviction's
  // deleteOptions) when the PodDisruptionBudget that selects it allows, as
  // kube-apiserver's EvictionREST does:
  // - a pod Pending, Succeeded, Failed or being deleted, a pod no budget
  //   selects, and a not-Ready pod whose budget is AlwaysAllow, or is
  //   IfHealthyBudget (the default) and met, is deleted at once;
  // - otherwise the budget's status.disruptionsAllowed is taken down by one
  //   and the pod recorded in its status.disruptedPods (the disruption
  //   controller counts it out until it is gone) before the pod is
  //   deleted; a budget that allows none refuses with TooManyRequests (429,
  //   "Cannot evict pod as it would violate the pod's disruption budget.",
  //   with a DisruptionBudget cause), as does a budget whose controller has
  //   not observed its generation;
  // - two budgets selecting the pod: 500, unsupported.
  // The deleted pod gets the DisruptionTarget condition (reason
  // EvictionByEvictionAPI) first. Returns the Success Status.
  StatusOr<json::object> Evict(const api::Resource& res, const std::string& ns,
                               const std::string& name, const json::object& eviction,
                               const DeleteOptions& opts);
  // autoscaling/v1 Scale of a resource with a scale subresource.
  StatusOr<json::object> GetScale(const api::Resource& res, const std::string& ns,
                                  const std::string& name);
  StatusOr<json::object> UpdateScale(const api::Resource& res, const std::string& ns,
                                     const std::string& name, json::object scale,
                                     const WriteOptions& opts);

  // Converts a stored object (storage version) to `res`'s version.
  StatusOr<json::object> FromStorage(const api::Resource& res, json::object obj) const;

  // The schema check every write makes (SchemaChecker), for bodies that are
  // answered rather than stored.
  Status CheckSchema(const api::Resource& res, json::object& obj, const WriteOptions& opts);

  const api::Registry& registry() const { return registry_; }
  storage::Store& store() { return store_; }
  Clock& clock() { return clock_; }

 private:
  // A stored object as `res` serves it, with the revision a conditional
  // write of it compares.
  struct Current {
    json::object obj;
    int64_t mod_revision = 0;
  };
  // The object at storage `key` (NotFound naming `name` when none).
  StatusOr<Current> ReadCurrent(const api::Resource& res, const std::string& key,
                                const std::string& name);

  using Transform = std::function<StatusOr<json::object>(const json::object& current)>;
  // Read-modify-write with retries on conflict when `retry` is true.
  StatusOr<json::object> GuaranteedUpdate(const api::Resource& res, const std::string& ns,
                                          const std::string& name, const Transform& transform,
                                          bool retry, const WriteOptions& opts);
  // How PrepareUpdate records a write in managedFields.
  struct Ownership {
    std::string endpoint;  // "", "status" or "scale"
    bool applied = false;  // an apply: managedFields are already set
  };
  StatusOr<json::object> PrepareUpdate(const api::Resource& res, const json::object& current,
                                       json::object obj, const std::string& subresource,
                                       const WriteOptions& opts, const Ownership& ownership);
  StatusOr<json::object> CreateObject(const api::Resource& res, const std::string& ns,
                                      json::object obj, const WriteOptions& opts, bool applied);
  // The field manager of `res`'s objects, and what a write through
  // `endpoint` is to it.
  api::FieldManager FieldManagerFor(const api::Resource& res) const;
  api::FieldManagerRequest ManagerRequest(const api::Resource& res, std::string_view endpoint,
                                          const WriteOptions& opts) const;
  // A create in `ns` needs it to exist and not be going (the
  // NamespaceLifecycle admission).
  Status CheckNamespace(const api::Resource& res, const std::string& ns, const std::string& name);
  // Stores `obj` (in the storage version) as new and returns it with its
  // resourceVersion; the stored bytes go to `stored_json` (if not null) as
  // StoreUpdate says.
  StatusOr<json::object> StoreCreate(const api::Resource& res, const std::string& ns,
                                     json::object obj, bool dry_run,
                                     StoredJson* stored_json = nullptr);
  // Writes `obj` over the stored revision `expected_revision` of `key` (in
  // the storage version, with the written revision as its resourceVersion)
  // and returns it as served. The store's error (Conflict, NotFound) as is.
  // For a kind stored as served, the bytes stored are left in `stored_json`
  // (if not null) when they are the object returned.
  StatusOr<json::object> StoreUpdate(const api::Resource& res, const std::string& key,
                                     int64_t expected_revision, json::object obj,
                                     StoredJson* stored_json = nullptr);
  // Leaves `kv`'s value in `out` when it is `obj` as served: the kind is
  // stored as served and `encoded` (the revision `obj` was serialized
  // with) is the one written (etcd may write another).
  static void KeepStoredJson(const api::Resource& res, storage::KeyValue& kv, int64_t encoded,
                             StoredJson* out);

  const api::Registry& registry_;
  KindResolver resolve_kind_;
  storage::Store& store_;
  Clock& clock_;
  SchemaChecker schema_checker_;
  PatchInfoProvider patch_info_;
  TypingProvider typing_;
  Duration event_ttl_{};
  // Set when the registry serves v1 ResourceQuota and pods (a cluster's
  // server, not the federation's).
  std::unique_ptr<QuotaAdmission> quotas_;
  std::unique_ptr<LimitRanger> limit_ranger_;  // a server of pods and LimitRanges
  // A server of pods and claims: a new claim gets kubernetes.io/pvc-protection.
  bool protects_claims_ = false;
  // A server of claims and StorageClasses: default class, resize check.
  std::unique_ptr<ClaimAdmission> claims_;
};

// An admission's refusal of a write of `name` as kube-apiserver words it
// (admission.NewForbidden): a Forbidden `s` becomes `pods "web-x" is
// forbidden: <its message>`; anything else is returned as is.
Status AdmissionRefused(const api::Resource& res, std::string_view name, Status s);

// Whether a kind is deleted gracefully (pods), and whether it has the
// binding subresource (pods).
bool GracefulKind(const api::Resource& res);
bool HasBinding(const api::Resource& res);
// Whether a kind has the eviction subresource (pods).
bool HasEviction(const api::Resource& res);
// Whether a kind has the log subresource (pods; ApiServerOptions::pod_logs).
bool HasLog(const api::Resource& res);
// The grace period a DELETE gives `obj`: nullopt for kinds without graceful
// deletion, 0 for pods not bound to a node or terminal.
std::optional<int64_t> GracefulDeletePeriod(const api::Resource& res, const json::object& obj,
                                            const DeleteOptions& opts);
// Moves an object already marked for deletion to a shorter grace period
// (a longer one is ignored, as in Kubernetes).
void ShortenGracePeriod(json::object& obj, int64_t period);

// How ObjectMeta is validated for a kind (name rules per kind).
api::ObjectMetaOptions MetaOptions(const api::Resource& res);

// Errors as kube-apiserver words them.
Status NotFoundError(const api::Resource& res, std::string_view name);
Status ConflictError(const api::Resource& res, std::string_view name, std::string_view why);
Status InvalidError(const api::Resource& res, std::string_view name,
                    std::vector<StatusCause> causes);

// A stored object's bytes parsed; an empty object when they are not one
// (storage holds what the server wrote, so only a damaged store gives that).
json::object ParseStored(const std::string& bytes);

// What a write stores of `obj`: its JSON and, with `share` (the store
// passes objects on: storage::Store::SharesObjects), a copy of it for the
// write's watchers in this process (storage::Encoded::object), which then
// need not parse the JSON again.
storage::Encoded Encode(const json::object& obj, bool share);

}  // namespace flotilla::apiserver
