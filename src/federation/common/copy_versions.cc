// What the federation last wrote to each member copy (copy_versions.h).
#include "federation/common/copy_versions.h"

#include <cstdio>

#include "api/federated.h"
#include "api/hash.h"
#include "base/mutex.h"

namespace flotilla::federation {
namespace {

const json::object* MetaMap(const json::object& obj, std::string_view field) {
  const json::object* meta = GetObject(obj, "metadata");
  return meta != nullptr ? GetObject(*meta, field) : nullptr;
}

}  // namespace

uint64_t OwnedHash(const json::object& obj, const json::object& desired) {
  // The canonical text of {"annotations": ..., "content": ..., "labels":
  // ...} with null, {} and [] left out, written from references into `obj`
  // (a copy's content is most of it: a fan-out hashes every copy it
  // writes).
  api::FieldRefs annotations, content, labels;
  const json::object* want = MetaMap(desired, "annotations");
  const json::object* have = MetaMap(obj, "annotations");
  if (want != nullptr && have != nullptr) {
    for (const auto& [k, v] : *want) {
      if (k == api::kDesiredHashAnnotation) continue;
      if (const json::value* h = have->if_contains(k)) annotations.emplace_back(k, h);
    }
  }
  for (const auto& [k, v] : desired) {
    if (k == "apiVersion" || k == "kind" || k == "metadata" || k == "status") continue;
    if (const json::value* h = obj.if_contains(k)) content.emplace_back(k, h);
  }
  if (const json::object* l = MetaMap(obj, "labels")) {
    for (const auto& [k, v] : *l) labels.emplace_back(k, &v);
  }
  std::string text = "{";
  auto field = [&](std::string_view key, api::FieldRefs& fields) {
    const size_t mark = text.size();
    if (text.size() > 1) text += ',';
    text += '"';
    text += key;
    text += "\":";
    if (!api::AppendPrunedCanonical(std::move(fields), text)) text.resize(mark);
  };
  field("annotations", annotations);
  field("content", content);
  field("labels", labels);
  text += '}';
  return api::Fnv1a64(text);
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
