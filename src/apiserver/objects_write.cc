// Objects: update, patch, delete and scale (see objects.h).
#include <chrono>
#include <string_view>

#include "api/federated.h"
#include "api/patch.h"
#include "api/validation.h"
#include "api/views.h"
#include "apiserver/meta.h"
#include "apiserver/objects.h"
#include "apiserver/service_ports.h"
#include "base/yaml.h"

namespace flotilla::apiserver {
namespace {

constexpr int kMaxRetries = 32;

// Whether a marked object may now leave storage: no finalizers remain (and,
// for namespaces, no spec.finalizers).
bool ReadyToDelete(const api::Resource& res, const json::object& obj) {
  if (!api::IsBeingDeleted(obj)) return false;
  const json::object* meta = FindMeta(obj);
  const json::array* fins = meta ? GetArray(*meta, "finalizers") : nullptr;
  if (fins != nullptr && !fins->empty()) return false;
  // A pod in its grace period waits for its kubelet's final DELETE.
  if (GracefulKind(res) && meta != nullptr &&
      GetInt(*meta, "deletionGracePeriodSeconds").value_or(0) > 0) {
    return false;
  }
  if (res.group.empty() && res.plural == "namespaces") {
    const json::value* spec_fins = Find(obj, "spec.finalizers");
    if (spec_fins != nullptr && spec_fins->is_array() && !spec_fins->as_array().empty()) {
      return false;
    }
  }
  return true;
}

// Fields the server allocated stay when an update leaves them out, as
// kube-apiserver keeps a Service's cluster IPs on `kubectl replace`.
void KeepAllocatedFields(const api::Resource& res, const json::object& current,
                         json::object& updated) {
  if (!res.group.empty() || res.plural != "services") return;
  const json::value* ip = Find(updated, "spec.clusterIP");
  if (ip != nullptr && ip->is_string() && !ip->get_string().empty()) return;
  json::object& spec = EnsureObject(updated, "spec");
  for (const char* field : {"clusterIP", "clusterIPs"}) {
    const json::value* old = Find(current, std::string("spec.") + field);
    if (old != nullptr) spec[field] = *old;
  }
}

// A federated object's member copies follow the DELETE's policy; one that
// names none orphans them (DESIGN §3), and the federation's controllers read
// which it was from an annotation written in the same step as the
// deletionTimestamp. A later DELETE that names a policy changes it.
void RecordFederatedDeletion(json::object& obj, Propagation propagation, bool first) {
  if (!HasFinalizer(obj, api::kDeleteFromUnderlyingClustersFinalizer)) return;
  const char* policy = nullptr;
  switch (propagation) {
    case Propagation::kDefault:
      if (!first) return;
      AddFinalizer(obj, "orphan");
      policy = "Orphan";
      break;
    case Propagation::kOrphan:
      policy = "Orphan";
      break;
    case Propagation::kBackground:
      policy = "Background";
      break;
    case Propagation::kForeground:
      policy = "Foreground";
      break;
  }
  json::value& annotations = MetaOf(obj)["annotations"];
  if (!annotations.is_object()) annotations = json::object();
  annotations.as_object()[api::kDeletionPropagationAnnotation] = policy;
}

// Sets each of `fields` (strings) of `meta` to its value in `stored`
// (removing it where `stored` lacks it).
template <typename Fields>
void KeepStoredMeta(const json::object* stored, json::object& meta, const Fields& fields) {
  for (std::string_view f : fields) {
    const json::value* v = stored ? stored->if_contains(f) : nullptr;
    if (v != nullptr) {
      meta[f] = *v;
    } else {
      meta.erase(f);
    }
  }
}

// Metadata no update changes: the server sets it, or it names the object.
constexpr std::string_view kImmutableMeta[] = {"uid",
                                               "creationTimestamp",
                                               "deletionTimestamp",
                                               "deletionGracePeriodSeconds",
                                               "generation",
                                               "namespace",
                                               "name"};

// The body of an apply: YAML (JSON is YAML) holding one object.
StatusOr<json::object> DecodeApplyPatch(std::string_view body) {
  auto parsed = ParseYaml(body);
  if (!parsed.ok()) return Status::BadRequest("error decoding patch: " + parsed.status().message());
  if (!parsed->is_object()) {
    return Status::BadRequest(
        "error decoding patch: the applied configuration must be an object, got " +
        std::string(JsonTypeName(*parsed)));
  }
  return std::move(parsed->as_object());
}

Status FieldManagerRequired() {
  return Status::Invalid(
      "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for "
      "apply patch",
      {{"FieldValueRequired", "Required value: is required for apply patch", "fieldManager"}});
}

// Whether members `key` of `a` and `b` are equal (both absent counts).
bool SameMember(const json::object& a, const json::object& b, std::string_view key) {
  const json::value* x = a.if_contains(key);
  const json::value* y = b.if_contains(key);
  return x == nullptr ? y == nullptr : y != nullptr && *x == *y;
}

// Whether two objects are the same write, resourceVersion aside. Compared
// in place: every update asks, so copying both objects to drop one field
// cost more than the rest of the check.
bool SameIgnoringResourceVersion(const json::object& a, const json::object& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [key, value] : a) {
    const json::value* other = b.if_contains(key);
    if (other == nullptr) return false;
    if (key != "metadata" || !value.is_object() || !other->is_object()) {
      if (value != *other) return false;
      continue;
    }
    const json::object& m = value.get_object();
    const json::object& n = other->get_object();
    size_t rv = (m.contains("resourceVersion") ? 1 : 0);
    if (m.size() - rv != n.size() - (n.contains("resourceVersion") ? 1 : 0)) return false;
    for (const auto& [field, v] : m) {
      if (field != "resourceVersion" && !SameMember(m, n, field)) return false;
    }
  }
  return true;
}

}  // namespace

StatusOr<json::object> Objects::PrepareUpdate(const api::Resource& res, const json::object& current,
                                              json::object obj, const std::string& subresource,
                                              const WriteOptions& opts,
                                              const Ownership& ownership) {
  // An apply's object was checked as the applied configuration, and its
  // managedFields are the field manager's.
  json::value applied_fields;
  if (ownership.applied) {
    if (const json::value* m = Find(obj, "metadata.managedFields")) applied_fields = *m;
  } else {
    FLOTILLA_RETURN_IF_ERROR(CheckSchema(res, obj, opts));
  }
  std::string name = MetaString(current, "name");
  std::string body_name = MetaString(obj, "name");
  if (!body_name.empty() && body_name != name) {
    return Status::BadRequest("the name of the object (" + body_name +
                              ") does not match the name on the URL (" + name + ")");
  }
  json::object result;
  if (subresource == "status") {
    result = current;
    if (const json::value* st = obj.if_contains("status")) {
      result["status"] = *st;
    } else {
      result.erase("status");
    }
    // A body without metadata leaves it as stored.
    json::value* meta = obj.if_contains("metadata");
    if (res.status_takes_metadata && meta != nullptr && meta->is_object()) {
      json::object& taken = (result["metadata"] = std::move(*meta)).as_object();
      KeepStoredMeta(FindMeta(current), taken, kImmutableMeta);
      KeepStoredMeta(FindMeta(current), taken, res.status_keeps_metadata);
    }
  } else {
    result = std::move(obj);
    result["apiVersion"] = res.ApiVersion();
    result["kind"] = res.kind;
    json::object& meta = MetaOf(result);
    KeepStoredMeta(FindMeta(current), meta, kImmutableMeta);
    if (res.has_status) {
      if (const json::value* st = current.if_contains("status")) {
        result["status"] = *st;
      } else {
        result.erase("status");
      }
    }
    KeepAllocatedFields(res, current, result);
    if (res.default_fn) res.default_fn(result);
    if (res.group.empty() && res.plural == "services") {
      AllocateNodePorts(store_, Prefix(res, ""), &current, result,
                        std::hash<std::string>{}(MetaString(current, "resourceVersion")));
    }
    if (TracksGeneration(res) && SpecChanged(current, result)) {
      const json::object* m = FindMeta(current);
      meta["generation"] = (m ? GetInt(*m, "generation").value_or(0) : 0) + 1;
    }
  }
  if (!ownership.applied) {
    result = FieldManagerFor(res).Update(current, std::move(result),
                                         ManagerRequest(res, ownership.endpoint, opts));
  } else if (applied_fields.is_array()) {
    MetaOf(result)["managedFields"] = std::move(applied_fields);
  } else {
    MetaOf(result).erase("managedFields");
  }
  if (MetaString(result, "resourceVersion").empty()) {
    MetaOf(result)["resourceVersion"] = MetaString(current, "resourceVersion");
  }
  std::vector<StatusCause> causes =
      api::ValidateObjectMetaUpdate(result, current, MetaOptions(res));
  if (res.validate_fn) {
    auto more = res.validate_fn(result, &current);
    causes.insert(causes.end(), more.begin(), more.end());
  }
  if (!causes.empty()) return InvalidError(res, name, std::move(causes));
  if (res.warn_fn && opts.warnings != nullptr && subresource.empty()) {
    for (std::string& w : res.warn_fn(result)) opts.warnings->push_back(std::move(w));
  }
  if (opts.admit && subresource.empty()) FLOTILLA_RETURN_IF_ERROR(opts.admit(result, &current));
  if (claims_ && subresource.empty() && res.group.empty() &&
      res.plural == "persistentvolumeclaims") {
    FLOTILLA_RETURN_IF_ERROR(AdmissionRefused(res, name, claims_->AdmitUpdate(result, current)));
  }
  // (A scale write comes here as a write of the object.)
  if (res.admit_fn && subresource.empty()) {
    FLOTILLA_RETURN_IF_ERROR(AdmissionRefused(res, name, res.admit_fn(result, &current)));
  }
  return result;
}

StatusOr<json::object> Objects::StoreUpdate(const api::Resource& res, const std::string& key,
                                            int64_t expected_revision, json::object obj,
                                            StoredJson* stored_json) {
  if (res.StorageVersion() != res.version && res.convert) {
    FLOTILLA_ASSIGN_OR_RETURN(obj, res.convert(std::move(obj), res.StorageVersion()));
  }
  int64_t encoded = 0;
  const bool share = store_.SharesObjects(key);
  storage::Mutation encode = [&](int64_t rev, const std::optional<storage::KeyValue>&) {
    MetaOf(obj)["resourceVersion"] = std::to_string(rev);
    encoded = rev;
    return StatusOr<storage::Encoded>(Encode(obj, share));
  };
  FLOTILLA_ASSIGN_OR_RETURN(storage::KeyValue written,
                            store_.Update(key, expected_revision, encode, TtlOf(res)));
  // The revision etcd gave, which may differ from the one `encode` got.
  MetaOf(obj)["resourceVersion"] = std::to_string(written.mod_revision);
  KeepStoredJson(res, written, encoded, stored_json);
  return FromStorage(res, std::move(obj));
}

StatusOr<Objects::Current> Objects::ReadCurrent(const api::Resource& res, const std::string& key,
                                                const std::string& name) {
  auto kv = store_.Get(key);
  if (!kv.ok()) return kv.status().Is(Reason::kNotFound) ? NotFoundError(res, name) : kv.status();
  FLOTILLA_ASSIGN_OR_RETURN(json::object obj, FromStorage(res, ParseStored(kv->value)));
  return Current{std::move(obj), kv->mod_revision};
}

StatusOr<json::object> Objects::GuaranteedUpdate(const api::Resource& res, const std::string& ns,
                                                 const std::string& name,
                                                 const Transform& transform, bool retry,
                                                 const WriteOptions& opts) {
  const std::string key = Key(res, ns, name);
  for (int attempt = 0;; ++attempt) {
    FLOTILLA_ASSIGN_OR_RETURN(Current stored, ReadCurrent(res, key, name));
    const json::object& current = stored.obj;
    FLOTILLA_ASSIGN_OR_RETURN(json::object updated, transform(current));
    if (SameIgnoringResourceVersion(current, updated) || opts.dry_run) {
      return opts.dry_run ? updated : current;
    }
    if (ReadyToDelete(res, updated)) {
      auto deleted = store_.Delete(key, stored.mod_revision);
      if (deleted.ok()) return updated;
      if (deleted.status().Is(Reason::kConflict) && retry && attempt < kMaxRetries) continue;
      return deleted.status();
    }
    auto written = StoreUpdate(res, key, stored.mod_revision, std::move(updated), opts.stored_json);
    if (written.ok()) return written;
    if (written.status().Is(Reason::kConflict) && retry && attempt < kMaxRetries) continue;
    if (written.status().Is(Reason::kConflict)) {
      return ConflictError(res, name,
                           "the object has been modified; please apply your changes "
                           "to the latest version and try again");
    }
    return written.status().Is(Reason::kNotFound) ? NotFoundError(res, name) : written.status();
  }
}

StatusOr<json::object> Objects::Update(const api::Resource& res, const std::string& ns,
                                       const std::string& name, const std::string& subresource,
                                       json::object obj, const WriteOptions& opts) {
  int64_t want_rv = ResourceVersionOf(obj);
  std::string raw_rv = MetaString(obj, "resourceVersion");
  if (!raw_rv.empty() && want_rv == 0) {
    return InvalidError(
        res, name,
        {{"FieldValueInvalid", "Invalid value: \"" + raw_rv + "\": must be a valid resourceVersion",
          "metadata.resourceVersion"}});
  }
  Transform transform = [&](const json::object& current) -> StatusOr<json::object> {
    if (want_rv != 0 && want_rv != ResourceVersionOf(current)) {
      return ConflictError(res, name,
                           "the object has been modified; please apply your changes "
                           "to the latest version and try again");
    }
    return PrepareUpdate(res, current, obj, subresource, opts, {subresource});
  };
  return GuaranteedUpdate(res, ns, name, transform, want_rv == 0, opts);
}

StatusOr<json::object> Objects::Patch(const api::Resource& res, const std::string& ns,
                                      const std::string& name, const std::string& subresource,
                                      const PatchRequest& patch, const WriteOptions& opts,
                                      bool* created) {
  if (created != nullptr) *created = false;
  if (api::IsApplyPatch(patch.content_type)) {
    FLOTILLA_ASSIGN_OR_RETURN(json::object config, DecodeApplyPatch(patch.body));
    return Apply(res, ns, name, subresource, std::move(config), opts, created);
  }
  bool precondition = false;
  Transform transform = [&](const json::object& current) -> StatusOr<json::object> {
    api::PatchInfoLookup lookup = patch_info_ ? patch_info_(res) : api::PatchInfoLookup();
    FLOTILLA_ASSIGN_OR_RETURN(json::value patched,
                              api::ApplyPatch(patch.content_type, current, patch.body, lookup));
    if (!patched.is_object()) return Status::BadRequest("patch did not produce an object");
    json::object obj = std::move(patched.as_object());
    int64_t rv = ResourceVersionOf(obj);
    if (rv != ResourceVersionOf(current)) {
      precondition = true;
      return ConflictError(res, name,
                           "the object has been modified; please apply your changes "
                           "to the latest version and try again");
    }
    return PrepareUpdate(res, current, std::move(obj), subresource, opts, {subresource});
  };
  return GuaranteedUpdate(res, ns, name, transform, !precondition, opts);
}

StatusOr<json::object> Objects::Apply(const api::Resource& res, const std::string& ns,
                                      const std::string& name, const std::string& endpoint,
                                      json::object config, const WriteOptions& opts,
                                      bool* created) {
  if (created != nullptr) *created = false;
  if (opts.field_manager.empty()) return FieldManagerRequired();
  FLOTILLA_RETURN_IF_ERROR(CheckSchema(res, config, opts));
  std::string body_name = MetaString(config, "name");
  if (!body_name.empty() && body_name != name) {
    return Status::BadRequest("the name of the object (" + body_name +
                              ") does not match the name on the URL (" + name + ")");
  }
  std::string body_ns = MetaString(config, "namespace");
  if (res.namespaced && !body_ns.empty() && body_ns != ns) {
    return Status::BadRequest(
        "the namespace of the provided object does not match the namespace sent on the request");
  }
  const int64_t want_rv = ResourceVersionOf(config);
  const api::FieldManager manager = FieldManagerFor(res);
  const api::FieldManagerRequest req = ManagerRequest(res, endpoint, opts);
  const std::string subresource = endpoint == "status" ? "status" : "";
  Transform transform = [&](const json::object& current) -> StatusOr<json::object> {
    if (want_rv != 0 && want_rv != ResourceVersionOf(current)) {
      return ConflictError(res, name,
                           "the object has been modified; please apply your changes "
                           "to the latest version and try again");
    }
    FLOTILLA_ASSIGN_OR_RETURN(json::object merged, manager.Apply(current, config, req));
    return PrepareUpdate(res, current, std::move(merged), subresource, opts, {endpoint, true});
  };
  // An object that is not there is created by its first apply; one that
  // appears meanwhile is applied to.
  for (int attempt = 0;; ++attempt) {
    auto updated = GuaranteedUpdate(res, ns, name, transform, want_rv == 0, opts);
    if (!updated.status().Is(Reason::kNotFound) || !endpoint.empty() || want_rv != 0) {
      return updated;
    }
    json::object fresh = config;
    MetaOf(fresh)["name"] = name;
    FLOTILLA_ASSIGN_OR_RETURN(json::object merged, manager.Apply(json::object(), fresh, req));
    auto made = CreateObject(res, ns, std::move(merged), opts, true);
    if (made.ok() && created != nullptr) *created = true;
    if (!made.status().Is(Reason::kAlreadyExists) || attempt > 0) return made;
  }
}

StatusOr<json::object> Objects::Delete(const api::Resource& res, const std::string& ns,
                                       const std::string& name, const DeleteOptions& opts) {
  const std::string key = Key(res, ns, name);
  for (int attempt = 0;; ++attempt) {
    FLOTILLA_ASSIGN_OR_RETURN(Current stored, ReadCurrent(res, key, name));
    json::object current = std::move(stored.obj);
    std::string uid = MetaString(current, "uid");
    if (opts.precondition_uid && *opts.precondition_uid != uid) {
      return ConflictError(res, name,
                           "Precondition failed: UID in precondition: " + *opts.precondition_uid +
                               ", UID in object meta: " + uid);
    }
    std::string rv = MetaString(current, "resourceVersion");
    if (opts.precondition_resource_version && *opts.precondition_resource_version != rv) {
      return ConflictError(res, name,
                           "Precondition failed: ResourceVersion in precondition: " +
                               *opts.precondition_resource_version +
                               ", ResourceVersion in object meta: " + rv);
    }
    json::object marked = current;
    switch (opts.propagation) {
      case Propagation::kOrphan:
        AddFinalizer(marked, "orphan");
        RemoveFinalizer(marked, "foregroundDeletion");
        break;
      case Propagation::kForeground:
        AddFinalizer(marked, "foregroundDeletion");
        RemoveFinalizer(marked, "orphan");
        break;
      case Propagation::kBackground:
        RemoveFinalizer(marked, "orphan");
        RemoveFinalizer(marked, "foregroundDeletion");
        break;
      case Propagation::kDefault:
        break;
    }
    RecordFederatedDeletion(marked, opts.propagation, !api::IsBeingDeleted(current));
    std::optional<int64_t> grace = GracefulDeletePeriod(res, current, opts);
    if (!api::IsBeingDeleted(marked)) {
      int64_t period = grace ? *grace : opts.grace_period_seconds.value_or(0);
      MetaOf(marked)["deletionTimestamp"] =
          FormatRfc3339(clock_.Now() + std::chrono::seconds(grace.value_or(0)));
      MetaOf(marked)["deletionGracePeriodSeconds"] = period;
      if (res.group.empty() && res.plural == "namespaces") {
        EnsureObject(marked, "status")["phase"] = "Terminating";
      }
    } else if (grace) {
      ShortenGracePeriod(marked, *grace);
    }
    if (opts.dry_run) return marked;
    if (ReadyToDelete(res, marked)) {
      auto deleted = store_.Delete(key, stored.mod_revision);
      if (deleted.ok()) return current;
      if (deleted.status().Is(Reason::kConflict) && attempt < kMaxRetries) continue;
      return deleted.status().Is(Reason::kNotFound) ? NotFoundError(res, name) : deleted.status();
    }
    if (SameIgnoringResourceVersion(current, marked)) return current;
    auto written = StoreUpdate(res, key, stored.mod_revision, std::move(marked));
    if (written.ok()) return written;
    if (written.status().Is(Reason::kConflict) && attempt < kMaxRetries) continue;
    return written.status().Is(Reason::kNotFound) ? NotFoundError(res, name) : written.status();
  }
}

}  // namespace flotilla::apiserver
