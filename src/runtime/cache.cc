#include "runtime/cache.h"

#include "base/mutex.h"

namespace flotilla::runtime {
namespace {

std::string_view MetaView(const json::object& obj, std::string_view field) {
  const json::object* meta = GetObject(obj, "metadata");
  if (meta == nullptr) return {};
  return GetString(*meta, field).value_or(std::string_view());
}

std::string MetaString(const json::object& obj, std::string_view field) {
  return std::string(MetaView(obj, field));
}

std::vector<std::string> NamespaceValues(const json::object& obj) {
  return {MetaString(obj, "namespace")};
}

std::vector<std::string> OwnerValues(const json::object& obj) {
  std::vector<std::string> out;
  const json::value* refs = Find(obj, "metadata.ownerReferences");
  if (refs == nullptr || !refs->is_array()) return out;
  for (const auto& ref : refs->as_array()) {
    if (!ref.is_object()) continue;
    auto uid = GetString(ref.as_object(), "uid");
    if (uid) out.emplace_back(*uid);
  }
  return out;
}

std::vector<std::string> LabelValues(const json::object& obj) {
  std::vector<std::string> out;
  const json::value* labels = Find(obj, "metadata.labels");
  if (labels == nullptr || !labels->is_object()) return out;
  for (const auto& [key, value] : labels->as_object()) {
    if (value.is_string()) out.push_back(std::string(key) + "=" + std::string(value.as_string()));
  }
  return out;
}

}  // namespace

std::string ObjectKey(std::string_view ns, std::string_view name) {
  if (ns.empty()) return std::string(name);
  std::string key;
  key.reserve(ns.size() + 1 + name.size());
  return key.append(ns).append("/").append(name);
}

std::string ObjectKey(const json::object& obj) {
  return ObjectKey(MetaView(obj, "namespace"), MetaView(obj, "name"));
}

std::string ResourceVersionOf(const json::object& obj) {
  return MetaString(obj, "resourceVersion");
}

std::string_view ResourceVersionView(const json::object& obj) {
  return MetaView(obj, "resourceVersion");
}

Cache::Cache() {
  indexes_[std::string(kNamespaceIndex)].fn = NamespaceValues;
  indexes_[std::string(kOwnerIndex)].fn = OwnerValues;
  indexes_[std::string(kLabelIndex)].fn = LabelValues;
}

void Cache::AddIndex(const std::string& name, IndexFunc fn) {
  WriterLock lock(mu_);
  Index& index = indexes_[name];
  index = Index{std::move(fn), {}};
  for (const auto& [key, obj] : items_) IndexLocked(index, key, nullptr, obj.get());
}

ObjectPtr Cache::Upsert(ObjectPtr obj) {
  std::string key = ObjectKey(*obj);
  return Upsert(key, std::move(obj));
}

ObjectPtr Cache::Upsert(const std::string& key, ObjectPtr obj) {
  WriterLock lock(mu_);
  ObjectPtr& slot = items_[key];
  ObjectPtr old = std::move(slot);
  for (auto& [name, index] : indexes_) IndexLocked(index, key, old.get(), obj.get());
  slot = std::move(obj);
  return old;
}

ObjectPtr Cache::Remove(const std::string& key) {
  WriterLock lock(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return nullptr;
  ObjectPtr old = std::move(it->second);
  items_.erase(it);
  for (auto& [name, index] : indexes_) IndexLocked(index, key, old.get(), nullptr);
  return old;
}

void Cache::IndexLocked(Index& index, const std::string& key, const json::object* old,
                        const json::object* now) {
  std::vector<std::string> was = old != nullptr ? index.fn(*old) : std::vector<std::string>{};
  std::vector<std::string> is = now != nullptr ? index.fn(*now) : std::vector<std::string>{};
  if (was == is) return;  // most updates change none of an object's index values
  for (const auto& value : was) {
    auto it = index.keys_by_value.find(value);
    if (it == index.keys_by_value.end()) continue;
    it->second.erase(key);
    if (it->second.empty()) index.keys_by_value.erase(it);
  }
  for (auto& value : is) index.keys_by_value[std::move(value)].insert(key);
}

ObjectPtr Cache::Get(const std::string& key) const {
  ReaderLock lock(mu_);
  auto it = items_.find(key);
  return it == items_.end() ? nullptr : it->second;
}

std::vector<ObjectPtr> Cache::List() const {
  ReaderLock lock(mu_);
  std::vector<ObjectPtr> out;
  out.reserve(items_.size());
  for (const auto& [key, obj] : items_) out.push_back(obj);
  return out;
}

std::vector<std::string> Cache::Keys() const {
  ReaderLock lock(mu_);
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const auto& [key, obj] : items_) out.push_back(key);
  return out;
}

std::vector<ObjectPtr> Cache::ByIndex(std::string_view index, const std::string& value) const {
  ReaderLock lock(mu_);
  std::vector<ObjectPtr> out;
  auto idx = indexes_.find(index);
  if (idx == indexes_.end()) return out;
  auto keys = idx->second.keys_by_value.find(value);
  if (keys == idx->second.keys_by_value.end()) return out;
  for (const auto& key : keys->second) out.push_back(items_.at(key));
  return out;
}

size_t Cache::CountByIndex(std::string_view index, const std::string& value) const {
  ReaderLock lock(mu_);
  auto idx = indexes_.find(index);
  if (idx == indexes_.end()) return 0;
  auto keys = idx->second.keys_by_value.find(value);
  return keys == idx->second.keys_by_value.end() ? 0 : keys->second.size();
}

size_t Cache::Size() const {
  ReaderLock lock(mu_);
  return items_.size();
}

ObjectPtr Lister::Get(std::string_view ns, std::string_view name) const {
  return cache_->Get(ObjectKey(ns, name));
}

std::vector<ObjectPtr> Lister::List(std::string_view ns, const api::LabelSelector& selector) const {
  std::vector<ObjectPtr> all =
      ns.empty() ? cache_->List() : cache_->ByIndex(kNamespaceIndex, std::string(ns));
  if (selector.Empty()) return all;
  std::vector<ObjectPtr> out;
  for (auto& obj : all) {
    if (selector.MatchesObject(*obj)) out.push_back(std::move(obj));
  }
  return out;
}

std::vector<ObjectPtr> Lister::ByOwner(std::string_view uid) const {
  return cache_->ByIndex(kOwnerIndex, std::string(uid));
}

std::vector<ObjectPtr> Lister::ByLabel(std::string_view key, std::string_view value) const {
  return cache_->ByIndex(kLabelIndex, std::string(key) + "=" + std::string(value));
}

std::vector<ObjectPtr> Lister::ByIndex(std::string_view index, const std::string& value) const {
  return cache_->ByIndex(index, value);
}

}  // namespace flotilla::runtime
