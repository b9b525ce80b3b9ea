#include "apiserver/meta.h"

#include <random>

namespace flotilla::apiserver {
namespace {

std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng;
}

}  // namespace

json::object& MetaOf(json::object& obj) { return EnsureObject(obj, "metadata"); }

const json::object* FindMeta(const json::object& obj) { return GetObject(obj, "metadata"); }

std::string MetaString(const json::object& obj, std::string_view field) {
  const json::object* meta = FindMeta(obj);
  if (meta == nullptr) return "";
  auto s = GetString(*meta, field);
  return s ? std::string(*s) : "";
}

int64_t ResourceVersionOf(const json::object& obj) {
  std::string rv = MetaString(obj, "resourceVersion");
  if (rv.empty()) return 0;
  char* end = nullptr;
  long long v = std::strtoll(rv.c_str(), &end, 10);
  return (end != nullptr && *end == '\0') ? v : 0;
}

bool HasFinalizer(const json::object& obj, std::string_view finalizer) {
  const json::object* meta = FindMeta(obj);
  const json::array* list = meta ? GetArray(*meta, "finalizers") : nullptr;
  if (list == nullptr) return false;
  for (const auto& f : *list) {
    if (f.is_string() && f.get_string() == finalizer) return true;
  }
  return false;
}

void AddFinalizer(json::object& obj, std::string_view finalizer) {
  if (HasFinalizer(obj, finalizer)) return;
  json::value& list = MetaOf(obj)["finalizers"];
  if (!list.is_array()) list = json::array();
  list.as_array().emplace_back(finalizer);
}

void RemoveFinalizer(json::object& obj, std::string_view finalizer) {
  json::object& meta = MetaOf(obj);
  json::value* list = meta.if_contains("finalizers");
  if (list == nullptr || !list->is_array()) return;
  json::array kept;
  for (auto& f : list->as_array()) {
    if (!(f.is_string() && f.get_string() == finalizer)) kept.push_back(f);
  }
  if (kept.empty()) {
    meta.erase("finalizers");
  } else {
    *list = std::move(kept);
  }
}

std::string NewUid() {
  uint64_t a = Rng()();
  uint64_t b = Rng()();
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // variant 10
  // xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx: a's 16 hex digits, then b's.
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(36, '-');
  size_t at = 0;
  for (int i = 0; i < 32; ++i) {
    if (at == 8 || at == 13 || at == 18 || at == 23) ++at;
    uint64_t word = i < 16 ? a : b;
    out[at++] = kHex[(word >> (60 - 4 * (i % 16))) & 0xf];
  }
  return out;
}

std::string RandomSuffix(int n) {
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  for (int i = 0; i < n; ++i) out.push_back(kAlphabet[Rng()() % kAlphabet.size()]);
  return out;
}

bool SpecChanged(const json::object& old_obj, const json::object& new_obj) {
  auto skip = [](std::string_view k) {
    return k == "metadata" || k == "status" || k == "kind" || k == "apiVersion";
  };
  size_t old_count = 0;
  for (const auto& [k, v] : old_obj) {
    if (skip(k)) continue;
    ++old_count;
    const json::value* nv = new_obj.if_contains(k);
    if (nv == nullptr || *nv != v) return true;
  }
  size_t new_count = 0;
  for (const auto& [k, v] : new_obj) {
    if (!skip(k)) ++new_count;
  }
  return old_count != new_count;
}

bool TracksGeneration(const api::Resource& res) {
  return res.group == "apps" || res.group == "autoscaling" || res.group == "batch" ||
         res.group == "policy" || res.group == "networking.k8s.io" || res.group == "federation" ||
         res.group == "apiextensions.k8s.io" || !res.crd.empty();
}

}  // namespace flotilla::apiserver
