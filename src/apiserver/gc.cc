#include "apiserver/gc.h"

#include "api/views.h"
#include "apiserver/meta.h"
#include "base/log.h"
#include "base/mutex.h"

namespace flotilla::apiserver {
namespace {

// The storage-version resource of a key ("/core/pods/ns/name",
// "/apps/replicasets/ns/name", "/core/namespaces/name").
std::shared_ptr<const api::Resource> ResourceForKey(const Objects& objects, std::string_view key) {
  if (!key.starts_with('/')) return nullptr;
  key.remove_prefix(1);
  size_t slash = key.find('/');
  if (slash == std::string_view::npos) return nullptr;
  std::string_view group = key.substr(0, slash);
  std::string_view rest = key.substr(slash + 1);
  slash = rest.find('/');
  if (slash == std::string_view::npos) return nullptr;
  std::string_view plural = rest.substr(0, slash);
  if (group == "core") group = "";
  return objects.StorageResource(group, plural);
}

}  // namespace

GarbageCollector::GarbageCollector(Objects& objects) : objects_(objects) {}

GarbageCollector::~GarbageCollector() { Stop(); }

Status GarbageCollector::Start() {
  FLOTILLA_ASSIGN_OR_RETURN(storage::ListResult all, objects_.store().List("/", {}));
  {
    MutexLock lock(mu_);
    for (const auto& kv : all.items) Index(kv.key, kv.value, nullptr);
    for (const auto& [key, node] : nodes_) pending_.insert(key);
  }
  FLOTILLA_ASSIGN_OR_RETURN(
      watcher_,
      objects_.store().Watch("/", all.revision, [this](const auto& batch) { OnEvents(batch); }));
  worker_.Kick();
  return Status::Ok();
}

void GarbageCollector::Stop() {
  if (watcher_) watcher_->Stop();
  worker_.Stop();
}

void GarbageCollector::Index(const std::string& key, const std::string& value,
                             const json::object* object) {
  std::shared_ptr<const api::Resource> res = ResourceForKey(objects_, key);
  if (res == nullptr) return;
  if (object != nullptr) return IndexObject(key, std::move(res), *object);
  // Only the metadata counts: parsing the rest (a pod's spec and status)
  // was most of the collector's cost.
  std::optional<std::string_view> meta_text = RawMember(value, "metadata");
  if (!meta_text) return;
  // Nor managedFields, most of the metadata's text and nothing the
  // collector reads: its value is parsed as null.
  std::string without_fields;
  if (std::optional<std::string_view> fields = RawMember(*meta_text, "managedFields")) {
    size_t at = static_cast<size_t>(fields->data() - meta_text->data());
    without_fields.reserve(meta_text->size() - fields->size() + 4);
    without_fields.append(meta_text->substr(0, at))
        .append("null")
        .append(meta_text->substr(at + fields->size()));
    meta_text = without_fields;
  }
  auto meta_object = ParseJsonObject(*meta_text);
  if (!meta_object.ok()) return;
  IndexObject(key, std::move(res), json::object{{"metadata", std::move(*meta_object)}});
}

void GarbageCollector::IndexObject(const std::string& key, std::shared_ptr<const api::Resource> res,
                                   const json::object& obj) {
  const json::object* meta = GetObject(obj, "metadata");
  if (meta == nullptr) return;
  Node node;
  node.ns = MetaString(obj, "namespace");
  node.name = MetaString(obj, "name");
  node.uid = MetaString(obj, "uid");
  node.deleting = api::IsBeingDeleted(obj);
  node.orphan = HasFinalizer(obj, "orphan");
  node.foreground = HasFinalizer(obj, "foregroundDeletion");
  node.is_namespace = res->group.empty() && res->plural == "namespaces";
  node.res = std::move(res);
  if (const json::array* refs = GetArray(*meta, "ownerReferences")) {
    for (const auto& ref : *refs) {
      if (!ref.is_object()) continue;
      if (auto uid = GetString(ref.as_object(), "uid")) node.owners.emplace_back(*uid);
    }
  }
  // A write that changed none of it (a status update) needs no new check.
  if (auto it = nodes_.find(key); it != nodes_.end() && it->second == node) return;
  Unindex(key);
  for (const auto& owner : node.owners) dependents_[owner].insert(key);
  uid_to_key_[node.uid] = key;
  if (node.is_namespace && node.deleting) pending_namespaces_.insert(node.name);
  if (!node.owners.empty() || node.orphan || node.foreground) pending_.insert(key);
  nodes_[key] = std::move(node);
}

void GarbageCollector::Unindex(const std::string& key) {
  auto it = nodes_.find(key);
  if (it == nodes_.end()) return;
  for (const auto& owner : it->second.owners) {
    auto d = dependents_.find(owner);
    if (d == dependents_.end()) continue;
    d->second.erase(key);
    if (d->second.empty()) dependents_.erase(d);
  }
  uid_to_key_.erase(it->second.uid);
  nodes_.erase(it);
}

void GarbageCollector::OnEvents(const std::vector<storage::Event>& batch) {
  MutexLock lock(mu_);
  for (const auto& ev : batch) {
    if (ev.type == storage::Event::Type::kPut) {
      Index(ev.kv.key, ev.kv.value, ev.object.get());
      continue;
    }
    auto it = nodes_.find(ev.kv.key);
    if (it == nodes_.end()) continue;
    Node gone = it->second;
    Unindex(ev.kv.key);
    if (auto d = dependents_.find(gone.uid); d != dependents_.end()) {
      pending_.insert(d->second.begin(), d->second.end());
    }
    for (const auto& owner : gone.owners) {
      if (auto o = uid_to_key_.find(owner); o != uid_to_key_.end()) pending_.insert(o->second);
    }
    if (!gone.ns.empty()) {
      std::string ns_key = "/core/namespaces/" + gone.ns;
      if (auto n = nodes_.find(ns_key); n != nodes_.end() && n->second.deleting) {
        pending_namespaces_.insert(gone.ns);
      }
    }
  }
  worker_.Kick();
}

std::optional<GarbageCollector::Node> GarbageCollector::Lookup(const std::string& key) {
  MutexLock lock(mu_);
  auto it = nodes_.find(key);
  if (it == nodes_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> GarbageCollector::DependentsOf(const std::string& uid) {
  MutexLock lock(mu_);
  auto it = dependents_.find(uid);
  if (it == dependents_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

void GarbageCollector::ProcessPending() {
  std::set<std::string> keys;
  std::set<std::string> namespaces;
  {
    MutexLock lock(mu_);
    keys.swap(pending_);
    namespaces.swap(pending_namespaces_);
  }
  for (const auto& key : keys) Process(key);
  for (const auto& ns : namespaces) ProcessNamespace(ns);
}

}  // namespace flotilla::apiserver
