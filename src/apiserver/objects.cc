#include "apiserver/objects.h"

#include <cstdlib>
#include <cstring>

#include "api/claims.h"
#include "api/patch.h"
#include "api/validation.h"
#include "api/views.h"
#include "apiserver/meta.h"
#include "apiserver/service_ports.h"

namespace flotilla::apiserver {

json::object ParseStored(const std::string& bytes) {
  auto parsed = ParseJsonObject(bytes);
  return parsed.ok() ? std::move(*parsed) : json::object();
}

storage::Encoded Encode(const json::object& obj, bool share) {
  if (!share) return storage::Encoded(json::serialize(obj));
  return storage::Encoded(json::serialize(obj), std::make_shared<const json::object>(obj));
}

namespace {

constexpr int kMaxConflictRetries = 16;

// "Deployment.apps" as the Invalid message names kinds.
std::string QualifiedKind(const api::Resource& res) {
  return res.group.empty() ? res.kind : res.kind + "." + res.group;
}

// Services get a cluster IP unless headless ("None") or ExternalName, as
// kube-apiserver's allocator gives them.
bool NeedsClusterIP(const api::Resource& res, const json::object& obj) {
  if (!res.group.empty() || res.plural != "services") return false;
  const json::value* type = Find(obj, "spec.type");
  if (type != nullptr && type->is_string() && type->get_string() == "ExternalName") return false;
  const json::value* ip = Find(obj, "spec.clusterIP");
  return ip == nullptr || !ip->is_string() || ip->get_string().empty();
}

// The address comes from the write's revision, unique per store, within the
// default service CIDR 10.96.0.0/12 (skipping .0 and the kubernetes service's .1).
void AssignClusterIP(json::object& obj, int64_t revision) {
  constexpr int64_t kSpan = (1 << 20) - 3;
  int64_t offset = 2 + revision % kSpan;
  std::string ip = "10." + std::to_string(96 + (offset >> 16)) + "." +
                   std::to_string((offset >> 8) & 255) + "." + std::to_string(offset & 255);
  json::object& spec = EnsureObject(obj, "spec");
  spec["clusterIP"] = ip;
  spec["clusterIPs"] = json::array{json::value(ip)};
}

}  // namespace

void PruneFields(json::object& obj, const std::vector<std::string>& paths) {
  for (const auto& path : paths) {
    json::value* cur = nullptr;
    json::object* parent = &obj;
    std::string_view rest = path;
    while (!rest.empty() && parent != nullptr) {
      size_t dot = rest.find('.');
      std::string_view seg = rest.substr(0, dot);
      rest = dot == std::string_view::npos ? "" : rest.substr(dot + 1);
      size_t bracket = seg.find('[');
      std::string_view key = seg.substr(0, bracket);
      if (rest.empty() && bracket == std::string_view::npos) {
        parent->erase(key);
        break;
      }
      cur = parent->if_contains(key);
      while (cur != nullptr && bracket != std::string_view::npos) {
        size_t close = seg.find(']', bracket);
        size_t index = std::strtoul(
            std::string(seg.substr(bracket + 1, close - bracket - 1)).c_str(), nullptr, 10);
        cur = cur->is_array() && index < cur->as_array().size() ? &cur->as_array()[index] : nullptr;
        bracket = seg.find('[', close);
      }
      parent = cur != nullptr && cur->is_object() ? &cur->as_object() : nullptr;
    }
  }
}

StatusOr<std::string> WithResourceVersion(std::string_view stored, int64_t revision) {
  FLOTILLA_ASSIGN_OR_RETURN(json::object obj, ParseJsonObject(stored));
  MetaOf(obj)["resourceVersion"] = std::to_string(revision);
  return json::serialize(obj);
}

api::ObjectMetaOptions MetaOptions(const api::Resource& res) {
  api::ObjectMetaOptions opts;
  opts.namespaced = res.namespaced;
  if (res.group.empty() && res.plural == "namespaces") opts.validate_name = api::NameIsDNSLabel;
  if (res.group.empty() && res.plural == "services") opts.validate_name = api::NameIsDNS1035Label;
  // RBAC names are path segments ("system:discovery"), as in Kubernetes.
  if (res.group == "rbac.authorization.k8s.io") opts.validate_name = api::ValidatePathSegmentName;
  // Custom kinds and CRDs (whose cleanup finalizer is a domain) take any
  // qualified finalizer name.
  opts.kube_finalizer_names =
      res.group != "federation" && res.group != "apiextensions.k8s.io" && res.crd.empty();
  return opts;
}

Status NotFoundError(const api::Resource& res, std::string_view name) {
  return Status::NotFound(res.GroupResource() + " \"" + std::string(name) + "\" not found");
}

Status ConflictError(const api::Resource& res, std::string_view name, std::string_view why) {
  return Status::Conflict("Operation cannot be fulfilled on " + res.GroupResource() + " \"" +
                          std::string(name) + "\": " + std::string(why));
}

Status InvalidError(const api::Resource& res, std::string_view name,
                    std::vector<StatusCause> causes) {
  std::string msg = QualifiedKind(res) + " \"" + std::string(name) + "\" is invalid: ";
  if (causes.size() > 1) msg += "[";
  for (size_t i = 0; i < causes.size(); ++i) {
    if (i > 0) msg += ", ";
    msg += causes[i].field.empty() ? causes[i].message : causes[i].field + ": " + causes[i].message;
  }
  if (causes.size() > 1) msg += "]";
  return Status::Invalid(std::move(msg), std::move(causes));
}

Objects::Objects(const api::Registry& registry, storage::Store& store, Clock& clock)
    : registry_(registry), store_(store), clock_(clock) {
  // A cluster's API server enforces its quotas; the federation's (no pods)
  // are what its members enforce.
  if (registry_.Find("", "v1", "resourcequotas") != nullptr &&
      registry_.Find("", "v1", "pods") != nullptr) {
    quotas_ = std::make_unique<QuotaAdmission>(store_);
  }
  if (registry_.Find("", "v1", "limitranges") != nullptr &&
      registry_.Find("", "v1", "pods") != nullptr) {
    limit_ranger_ = std::make_unique<LimitRanger>(store_);
  }
  // StorageObjectInUseProtection: where pods use claims.
  protects_claims_ = registry_.Find("", "v1", "persistentvolumeclaims") != nullptr &&
                     registry_.Find("", "v1", "pods") != nullptr;
  if (registry_.Find("", "v1", "persistentvolumeclaims") != nullptr &&
      registry_.Find("storage.k8s.io", "v1", "storageclasses") != nullptr) {
    claims_ = std::make_unique<ClaimAdmission>(store_);
  }
}

Status AdmissionRefused(const api::Resource& res, std::string_view name, Status s) {
  if (!s.Is(Reason::kForbidden)) return s;
  return Status::Forbidden(res.GroupResource() + " \"" + std::string(name) +
                           "\" is forbidden: " + s.message());
}

std::string Objects::Prefix(const api::Resource& res, std::string_view ns) {
  std::string key = "/";
  key += res.group.empty() ? "core" : res.group;
  key += "/";
  key += res.plural;
  key += "/";
  if (res.namespaced && !ns.empty()) {
    key += ns;
    key += "/";
  }
  return key;
}

std::string Objects::Key(const api::Resource& res, std::string_view ns, std::string_view name) {
  return Prefix(res, ns) + std::string(name);
}

std::shared_ptr<const api::Resource> Objects::StorageResource(std::string_view group,
                                                              std::string_view plural) const {
  for (const auto& r : registry_.All()) {
    if (r->group == group && r->plural == plural && r->version == r->StorageVersion()) return r;
  }
  return resolve_kind_ ? resolve_kind_(group, plural) : nullptr;
}

StatusOr<json::object> Objects::FromStorage(const api::Resource& res, json::object obj) const {
  if (res.StoredAsServed() || !res.convert) return obj;
  if (res.mixed_storage && StringViewAt(obj, "apiVersion") == res.ApiVersion()) return obj;
  return res.convert(std::move(obj), res.version);
}

StatusOr<json::object> Objects::Get(const api::Resource& res, const std::string& ns,
                                    const std::string& name) {
  FLOTILLA_ASSIGN_OR_RETURN(std::string stored, GetStored(res, ns, name));
  return FromStorage(res, ParseStored(stored));
}

StatusOr<std::string> Objects::GetStored(const api::Resource& res, const std::string& ns,
                                         const std::string& name) {
  auto kv = store_.Get(Key(res, ns, name));
  if (!kv.ok()) {
    if (kv.status().Is(Reason::kNotFound)) return NotFoundError(res, name);
    return kv.status();
  }
  return std::move(kv->value);
}

Status Objects::CheckSchema(const api::Resource& res, json::object& obj, const WriteOptions& opts) {
  if (!schema_checker_) return Status::Ok();
  return schema_checker_(res, obj, opts.field_validation, opts.warnings);
}

Status Objects::CheckNamespace(const api::Resource& res, const std::string& ns,
                               const std::string& name) {
  if (!res.namespaced) return Status::Ok();
  const api::Resource* ns_res = registry_.Find("", "v1", "namespaces");
  if (ns_res == nullptr) return Status::Ok();
  auto kv = store_.Get(Key(*ns_res, "", ns));
  if (!kv.ok()) {
    if (kv.status().Is(Reason::kNotFound)) return NotFoundError(*ns_res, ns);
    return kv.status();
  }
  // The stored JSON is this server's serialization, keys written as they
  // are: a Namespace whose record does not name deletionTimestamp is not
  // being deleted, and is not parsed (most creates stop here).
  // (memmem: the record is full of the needle's first character, on which
  // std::string::find stops each time.)
  constexpr std::string_view kDeletion = "\"deletionTimestamp\"";
  if (memmem(kv->value.data(), kv->value.size(), kDeletion.data(), kDeletion.size()) == nullptr) {
    return Status::Ok();
  }
  if (api::IsBeingDeleted(ParseStored(kv->value))) {
    return Status::Forbidden(res.GroupResource() + " \"" + name +
                             "\" is forbidden: unable to create new content in namespace " + ns +
                             " because it is being terminated");
  }
  return Status::Ok();
}

void Objects::KeepStoredJson(const api::Resource& res, storage::KeyValue& kv, int64_t encoded,
                             StoredJson* out) {
  if (out == nullptr || !res.StoredAsServed() || kv.mod_revision != encoded || kv.value.empty()) {
    return;
  }
  out->json = std::move(kv.value);
  out->revision = kv.mod_revision;
}

StatusOr<json::object> Objects::StoreCreate(const api::Resource& res, const std::string& ns,
                                            json::object obj, bool dry_run,
                                            StoredJson* stored_json) {
  std::string name = MetaString(obj, "name");
  if (dry_run) {
    auto existing = store_.Get(Key(res, ns, name));
    if (existing.ok())
      return Status::AlreadyExists(res.GroupResource() + " \"" + name + "\" already exists");
    return obj;
  }
  const bool allocate_ip = NeedsClusterIP(res, obj);
  int64_t encoded = 0;
  const std::string key = Key(res, ns, name);
  const bool share = store_.SharesObjects(key);
  // `obj` is left as the last call made it: what was stored.
  storage::Mutation encode = [&](int64_t rev, const std::optional<storage::KeyValue>&) {
    MetaOf(obj)["resourceVersion"] = std::to_string(rev);
    if (allocate_ip) AssignClusterIP(obj, rev);
    encoded = rev;
    return StatusOr<storage::Encoded>(Encode(obj, share));
  };
  auto kv = store_.Create(key, encode, TtlOf(res));
  if (!kv.ok()) {
    if (kv.status().Is(Reason::kAlreadyExists)) {
      return Status::AlreadyExists(res.GroupResource() + " \"" + name + "\" already exists");
    }
    return kv.status();
  }
  MetaOf(obj)["resourceVersion"] = std::to_string(kv->mod_revision);  // see Update
  KeepStoredJson(res, *kv, encoded, stored_json);
  return obj;
}

Duration Objects::TtlOf(const api::Resource& res) const {
  return res.group.empty() && res.plural == "events" ? event_ttl_ : Duration::zero();
}

api::FieldManager Objects::FieldManagerFor(const api::Resource& res) const {
  return api::FieldManager(typing_ ? typing_(res) : api::Typed(nullptr, nullptr));
}

api::FieldManagerRequest Objects::ManagerRequest(const api::Resource& res,
                                                 std::string_view endpoint,
                                                 const WriteOptions& opts) const {
  api::FieldManagerRequest req;
  req.manager = opts.field_manager.empty() ? "flotilla-apiserver" : opts.field_manager;
  req.api_version = res.ApiVersion();
  req.kind = res.kind;
  req.subresource = endpoint;
  req.now = FormatRfc3339(clock_.Now());
  req.force = opts.force;
  // What the endpoint resets is nobody's through it: status through the
  // object, the spec through /status.
  if (res.has_status) {
    req.ignored.Insert({api::fieldpath::Element::Field(endpoint == "status" ? "spec" : "status")});
  }
  return req;
}

StatusOr<json::object> Objects::Create(const api::Resource& res, const std::string& ns,
                                       json::object obj, const WriteOptions& opts) {
  return CreateObject(res, ns, std::move(obj), opts, false);
}

StatusOr<json::object> Objects::CreateObject(const api::Resource& res, const std::string& ns,
                                             json::object obj, const WriteOptions& opts,
                                             bool applied) {
  if (!applied) FLOTILLA_RETURN_IF_ERROR(CheckSchema(res, obj, opts));
  json::object& meta = MetaOf(obj);
  if (res.namespaced) {
    auto body_ns = GetString(meta, "namespace");
    if (body_ns && !body_ns->empty() && *body_ns != ns) {
      return Status::BadRequest(
          "the namespace of the provided object does not match the namespace sent on the request");
    }
    meta["namespace"] = ns;
  } else {
    meta.erase("namespace");
  }
  bool generated = false;
  if (MetaString(obj, "name").empty()) {
    std::string prefix = MetaString(obj, "generateName");
    if (prefix.empty()) {
      return InvalidError(res, "",
                          {{"FieldValueRequired",
                            "Required value: name or generateName is required", "metadata.name"}});
    }
    generated = true;
  }
  // Server-owned metadata.
  meta["uid"] = NewUid();
  meta["creationTimestamp"] = FormatRfc3339(clock_.Now());
  for (const char* f : {"deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion",
                        "selfLink", "generation"}) {
    meta.erase(f);
  }
  if (TracksGeneration(res)) meta["generation"] = 1;
  if (res.has_status && res.plural != "namespaces") obj.erase("status");
  obj["apiVersion"] = res.ApiVersion();
  obj["kind"] = res.kind;
  if (res.default_fn) res.default_fn(obj);
  if (res.group.empty() && res.plural == "services") {
    AllocateNodePorts(store_, Prefix(res, ""), nullptr, obj,
                      std::hash<std::string>{}(MetaString(obj, "uid")));
  }
  // A create is an update from nothing (an apply recorded its own fields).
  if (!applied)
    obj = FieldManagerFor(res).Update({}, std::move(obj), ManagerRequest(res, "", opts));
  for (int attempt = 0;; ++attempt) {
    // names.SimpleNameGenerator: the prefix is cut to 58 characters so that
    // a generated name fits in 63.
    if (generated) {
      MetaOf(obj)["name"] = MetaString(obj, "generateName").substr(0, 58) + RandomSuffix(5);
    }
    if (res.mutate_on_create) res.mutate_on_create(obj);
    std::string name = MetaString(obj, "name");
    if (limit_ranger_ && res.group.empty() && res.plural == "pods") {
      FLOTILLA_RETURN_IF_ERROR(AdmissionRefused(res, name, limit_ranger_->AdmitPod(ns, obj)));
    }
    if (protects_claims_ && res.group.empty() && res.plural == "persistentvolumeclaims") {
      AddFinalizer(obj, api::kClaimProtectionFinalizer);
    }
    if (claims_ && res.group.empty() && res.plural == "persistentvolumeclaims") {
      FLOTILLA_RETURN_IF_ERROR(AdmissionRefused(res, name, claims_->AdmitCreate(obj)));
    }
    std::vector<StatusCause> causes = api::ValidateObjectMeta(obj, MetaOptions(res));
    if (res.validate_fn) {
      auto more = res.validate_fn(obj, nullptr);
      causes.insert(causes.end(), more.begin(), more.end());
    }
    if (!causes.empty()) return InvalidError(res, name, std::move(causes));
    if (res.warn_fn && opts.warnings != nullptr && attempt == 0) {
      for (std::string& w : res.warn_fn(obj)) opts.warnings->push_back(std::move(w));
    }
    FLOTILLA_RETURN_IF_ERROR(CheckNamespace(res, ns, name));
    if (opts.admit) FLOTILLA_RETURN_IF_ERROR(opts.admit(obj, nullptr));
    if (res.admit_fn) {
      FLOTILLA_RETURN_IF_ERROR(AdmissionRefused(res, name, res.admit_fn(obj, nullptr)));
    }
    // Held until the object is stored: the quota's check and its write are one.
    std::unique_lock<std::mutex> quota_lock;
    if (quotas_) {
      auto admitted = quotas_->AdmitCreate(res, ns, obj);
      if (!admitted.ok()) return AdmissionRefused(res, name, admitted.status());
      quota_lock = *std::move(admitted);
    }
    // A generated name may be taken: the next attempt starts from `obj`.
    const bool may_retry = generated && attempt < 8;
    json::object to_store = may_retry ? obj : std::move(obj);
    if (res.StorageVersion() != res.version && res.convert) {
      FLOTILLA_ASSIGN_OR_RETURN(to_store, res.convert(std::move(to_store), res.StorageVersion()));
    }
    auto stored = StoreCreate(res, ns, std::move(to_store), opts.dry_run, opts.stored_json);
    if (!stored.ok() && may_retry && stored.status().Is(Reason::kAlreadyExists)) {
      continue;
    }
    if (!stored.ok()) return stored.status();
    return FromStorage(res, std::move(*stored));
  }
}

}  // namespace flotilla::apiserver
