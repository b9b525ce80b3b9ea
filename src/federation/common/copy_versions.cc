// What the federation last wrote to each member copy (copy_versions.h).
#include "federation/common/copy_versions.h"

#include <cstdio>

#include "api/federated.h"
#include "api/hash.h"
#include "base/mutex.h"

namespace flotilla::federation {
namespace {

// `v` without null, {} and [] anywhere (absent, as Go's omitempty writes
// them): a template the member wrote back with "creationTimestamp": null
// hashes as the one sent without it.
json::value Pruned(const json::value& v) {
  auto empty = [](const json::value& x) {
    return x.is_null() || (x.is_object() && x.get_object().empty()) ||
           (x.is_array() && x.get_array().empty());
  };
  if (v.is_object()) {
    json::object out;
    for (const auto& [k, x] : v.get_object()) {
      json::value p = Pruned(x);
      if (!empty(p)) out[k] = std::move(p);
    }
    return out;
  }
  if (v.is_array()) {
    json::array out;
    for (const json::value& x : v.get_array()) out.push_back(Pruned(x));
    return out;
  }
  return v;
}

const json::object* MetaMap(const json::object& obj, std::string_view field) {
  const json::object* meta = GetObject(obj, "metadata");
  return meta != nullptr ? GetObject(*meta, field) : nullptr;
}

}  // namespace

uint64_t OwnedHash(const json::object& obj, const json::object& desired) {
  json::object owned;
  if (const json::object* labels = MetaMap(obj, "labels"); labels && !labels->empty()) {
    owned["labels"] = *labels;
  }
  const json::object* want = MetaMap(desired, "annotations");
  const json::object* have = MetaMap(obj, "annotations");
  if (want != nullptr && have != nullptr) {
    json::object annotations;
    for (const auto& [k, v] : *want) {
      if (k == api::kDesiredHashAnnotation) continue;
      if (const json::value* h = have->if_contains(k)) annotations[k] = *h;
    }
    if (!annotations.empty()) owned["annotations"] = std::move(annotations);
  }
  json::object content;
  for (const auto& [k, v] : desired) {
    if (k == "apiVersion" || k == "kind" || k == "metadata" || k == "status") continue;
    if (const json::value* h = obj.if_contains(k)) content[k] = *h;
  }
  owned["content"] = std::move(content);
  return api::Fnv1a64(api::CanonicalJson(Pruned(owned)));
}

std::string HashText(uint64_t hash) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash));
  return buf;
}

uint64_t StampDesiredHash(json::object& desired) {
  uint64_t hash = OwnedHash(desired, desired);
  json::object& meta = EnsureObject(desired, "metadata");
  EnsureObject(meta, "annotations")[api::kDesiredHashAnnotation] = HashText(hash);
  return hash;
}

std::string_view DesiredHashOf(const json::object& copy) {
  const json::object* annotations = MetaMap(copy, "annotations");
  if (annotations == nullptr) return {};
  return GetString(*annotations, api::kDesiredHashAnnotation).value_or("");
}

void CopyVersions::Remember(const std::string& key, const std::string& cluster, Written w) {
  MutexLock lock(mu_);
  written_[key][cluster] = w;
}

std::optional<CopyVersions::Written> CopyVersions::Find(const std::string& key,
                                                        const std::string& cluster) const {
  MutexLock lock(mu_);
  auto k = written_.find(key);
  if (k == written_.end()) return std::nullopt;
  auto c = k->second.find(cluster);
  if (c == k->second.end()) return std::nullopt;
  return c->second;
}

void CopyVersions::Forget(const std::string& key) {
  MutexLock lock(mu_);
  written_.erase(key);
}

size_t CopyVersions::size() const {
  MutexLock lock(mu_);
  size_t n = 0;
  for (const auto& [key, clusters] : written_) n += clusters.size();
  return n;
}

}  // namespace flotilla::federation
