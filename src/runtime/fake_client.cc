// FakeClient's objects: get, list, create, update, patch, delete, scale, and
// the bookkeeping (injected errors, actions, history). Watches are in
// fake_watch.cc.
#include "runtime/fake_client.h"

#include "api/fields.h"
#include "api/labels.h"
#include "api/patch.h"
#include "base/mutex.h"
#include "runtime/fake_client_internal.h"

namespace flotilla::runtime {

using client::ResourceRef;
using client::WatchEvent;

namespace {

std::string ObjectKey(const std::string& ns, const std::string& name) {
  return ns.empty() ? name : ns + "/" + name;
}

std::string Qualified(const ResourceRef& res) {
  return res.group.empty() ? res.resource : res.resource + "." + res.group;
}

Status NotFound(const ResourceRef& res, const std::string& name) {
  return Status::NotFound(Qualified(res) + " \"" + name + "\" not found");
}

Status ConflictOn(const ResourceRef& res, const std::string& name) {
  return Status::Conflict("Operation cannot be fulfilled on " + Qualified(res) + " \"" + name +
                          "\": the object has been modified; please apply your changes to the "
                          "latest version and try again");
}

std::string MetaString(const json::object& obj, std::string_view field) {
  const json::value* v = Find(obj, field);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

std::string_view PatchContentType(client::PatchType type) {
  switch (type) {
    case client::PatchType::kMerge:
      return api::kMergePatchContentType;
    case client::PatchType::kJson:
      return api::kJsonPatchContentType;
    case client::PatchType::kStrategic:
      return api::kStrategicMergePatchContentType;
  }
  return api::kMergePatchContentType;
}

}  // namespace

FakeClient::FakeClient(Clock& clock, size_t history_limit)
    : clock_(clock), history_limit_(history_limit) {}

FakeClient::~FakeClient() = default;

std::string FakeClient::ResourceKey(const ResourceRef& res) {
  return res.ApiVersion() + "/" + res.resource;
}

StatusOr<json::object> FakeClient::Get(const ResourceRef& res, const std::string& ns,
                                       const std::string& name) {
  Record(Verb::kGet, res, ns, name, "");
  FLOTILLA_RETURN_IF_ERROR(TakeInjected(Verb::kGet));
  MutexLock lock(mu_);
  const ObjectMap& objects = objects_[ResourceKey(res)];
  auto it = objects.find(ObjectKey(res.namespaced ? ns : "", name));
  if (it == objects.end()) return NotFound(res, name);
  return it->second;
}

StatusOr<client::ObjectList> FakeClient::List(const ResourceRef& res, const std::string& ns,
                                              const client::ListOptions& opts) {
  Record(Verb::kList, res, ns, "", "");
  FLOTILLA_RETURN_IF_ERROR(TakeInjected(Verb::kList));
  FLOTILLA_ASSIGN_OR_RETURN(auto filter,
                            fake_internal::Filter::Make(opts.label_selector, opts.field_selector));
  MutexLock lock(mu_);
  client::ObjectList list;
  list.resource_version = std::to_string(rv_);
  const ObjectMap& objects = objects_[ResourceKey(res)];
  auto it =
      opts.continue_token.empty() ? objects.begin() : objects.upper_bound(opts.continue_token);
  for (; it != objects.end(); ++it) {
    if (!ns.empty() && MetaString(it->second, "metadata.namespace") != ns) continue;
    if (!filter.Matches(it->second)) continue;
    if (opts.limit > 0 && static_cast<int64_t>(list.items.size()) == opts.limit) {
      list.continue_token = std::prev(it)->first;
      break;
    }
    list.items.push_back(it->second);
  }
  return list;
}

StatusOr<json::object> FakeClient::Create(const ResourceRef& res, const std::string& ns,
                                          const json::object& obj) {
  Record(Verb::kCreate, res, ns, MetaString(obj, "metadata.name"), ToJson(obj));
  FLOTILLA_RETURN_IF_ERROR(TakeInjected(Verb::kCreate));
  json::object copy = obj;
  json::object& meta = EnsureObject(copy, "metadata");
  if (res.namespaced && !ns.empty()) meta["namespace"] = ns;
  MutexLock lock(mu_);
  return WriteLocked(res, ns, std::move(copy), /*create=*/true);
}

StatusOr<json::object> FakeClient::Update(const ResourceRef& res, const std::string& ns,
                                          const json::object& obj) {
  Record(Verb::kUpdate, res, ns, MetaString(obj, "metadata.name"), ToJson(obj));
  FLOTILLA_RETURN_IF_ERROR(TakeInjected(Verb::kUpdate));
  MutexLock lock(mu_);
  return WriteLocked(res, ns, obj, /*create=*/false);
}

StatusOr<json::object> FakeClient::UpdateStatus(const ResourceRef& res, const std::string& ns,
                                                const json::object& obj) {
  return Update(res, ns, obj);
}

StatusOr<json::object> FakeClient::Patch(const ResourceRef& res, const std::string& ns,
                                         const std::string& name, client::PatchType type,
                                         const std::string& patch, const std::string&) {
  Record(Verb::kPatch, res, ns, name, patch);
  FLOTILLA_RETURN_IF_ERROR(TakeInjected(Verb::kPatch));
  // Read, patch and write under one lock: a resourceVersion in the patch is
  // a precondition, none means "whatever is current".
  MutexLock lock(mu_);
  const ObjectMap& objects = objects_[ResourceKey(res)];
  auto it = objects.find(ObjectKey(res.namespaced ? ns : "", name));
  if (it == objects.end()) return NotFound(res, name);
  FLOTILLA_ASSIGN_OR_RETURN(json::value patched,
                            api::ApplyPatch(PatchContentType(type), it->second, patch, {}));
  return WriteLocked(res, ns, std::move(patched.as_object()), /*create=*/false);
}

Status FakeClient::Delete(const ResourceRef& res, const std::string& ns, const std::string& name,
                          const client::DeleteOptions& opts) {
  Record(Verb::kDelete, res, ns, name, "");
  FLOTILLA_RETURN_IF_ERROR(TakeInjected(Verb::kDelete));
  MutexLock lock(mu_);
  ObjectMap& objects = objects_[ResourceKey(res)];
  auto it = objects.find(ObjectKey(res.namespaced ? ns : "", name));
  if (it == objects.end()) return NotFound(res, name);
  if ((opts.precondition_uid && *opts.precondition_uid != MetaString(it->second, "metadata.uid")) ||
      (opts.precondition_resource_version &&
       *opts.precondition_resource_version != MetaString(it->second, "metadata.resourceVersion"))) {
    return ConflictOn(res, name);
  }
  json::object gone = std::move(it->second);
  objects.erase(it);
  EnsureObject(gone, "metadata")["resourceVersion"] = std::to_string(++rv_);
  PublishLocked(ResourceKey(res), WatchEvent::Type::kDeleted, &gone, gone);
  return Status::Ok();
}

StatusOr<json::object> FakeClient::GetScale(const ResourceRef& res, const std::string& ns,
                                            const std::string& name) {
  FLOTILLA_ASSIGN_OR_RETURN(json::object obj, Get(res, ns, name));
  const json::value* spec = Find(obj, "spec.replicas");
  const json::value* status = Find(obj, "status.replicas");
  return json::object{
      {"apiVersion", "autoscaling/v1"},
      {"kind", "Scale"},
      {"metadata",
       {{"name", name},
        {"namespace", ns},
        {"resourceVersion", MetaString(obj, "metadata.resourceVersion")}}},
      {"spec", {{"replicas", spec != nullptr && spec->is_int64() ? spec->as_int64() : 0}}},
      {"status", {{"replicas", status != nullptr && status->is_int64() ? status->as_int64() : 0}}}};
}

StatusOr<json::object> FakeClient::UpdateScale(const ResourceRef& res, const std::string& ns,
                                               const std::string& name, int64_t replicas) {
  json::object patch{{"spec", {{"replicas", replicas}}}};
  FLOTILLA_RETURN_IF_ERROR(
      Patch(res, ns, name, client::PatchType::kMerge, ToJson(patch), "scale").status());
  return GetScale(res, ns, name);
}

StatusOr<json::object> FakeClient::WriteLocked(const ResourceRef& res, const std::string& ns,
                                               json::object obj, bool create) {
  std::string name = MetaString(obj, "metadata.name");
  if (name.empty()) return Status::Invalid("metadata.name: Required value: name is required");
  std::string obj_ns =
      res.namespaced ? (ns.empty() ? MetaString(obj, "metadata.namespace") : ns) : std::string();
  ObjectMap& objects = objects_[ResourceKey(res)];
  std::string key = ObjectKey(obj_ns, name);
  auto it = objects.find(key);
  json::object& meta = EnsureObject(obj, "metadata");
  if (create) {
    if (it != objects.end()) {
      return Status::AlreadyExists(Qualified(res) + " \"" + name + "\" already exists");
    }
    meta["uid"] = "fake-uid-" + std::to_string(++uid_counter_);
    meta["creationTimestamp"] = FormatRfc3339(clock_.Now());
  } else {
    if (it == objects.end()) return NotFound(res, name);
    std::string rv = MetaString(obj, "metadata.resourceVersion");
    if (!rv.empty() && rv != MetaString(it->second, "metadata.resourceVersion")) {
      return ConflictOn(res, name);
    }
    meta["uid"] = MetaString(it->second, "metadata.uid");
    meta["creationTimestamp"] = MetaString(it->second, "metadata.creationTimestamp");
  }
  if (res.namespaced) meta["namespace"] = obj_ns;
  meta["resourceVersion"] = std::to_string(++rv_);
  std::optional<json::object> old;
  if (it != objects.end()) old = std::move(it->second);
  objects[key] = obj;
  PublishLocked(ResourceKey(res), create ? WatchEvent::Type::kAdded : WatchEvent::Type::kModified,
                old ? &*old : nullptr, obj);
  return obj;
}

void FakeClient::InjectError(Verb verb, Status status, int times) {
  MutexLock lock(mu_);
  for (int i = 0; i < times; ++i) injected_[verb].push_back(status);
}

Status FakeClient::TakeInjected(Verb verb) {
  MutexLock lock(mu_);
  auto& queue = injected_[verb];
  if (queue.empty()) return Status::Ok();
  Status s = std::move(queue.front());
  queue.pop_front();
  return s;
}

void FakeClient::Record(Verb verb, const ResourceRef& res, const std::string& ns,
                        const std::string& name, std::string body) {
  MutexLock lock(mu_);
  actions_.push_back({verb, res.resource, ns, name, std::move(body)});
}

std::vector<FakeClient::Action> FakeClient::Actions() const {
  MutexLock lock(mu_);
  return actions_;
}

void FakeClient::ClearActions() {
  MutexLock lock(mu_);
  actions_.clear();
}

int64_t FakeClient::ResourceVersion() const {
  MutexLock lock(mu_);
  return rv_;
}

}  // namespace flotilla::runtime
