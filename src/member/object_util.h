// Small readers of JSON objects shared by the member's controllers. Pure,
// thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "base/json.h"

namespace flotilla::member {

// The string at a dotted path, "" when absent or not a string.
inline std::string StrAt(const json::object& obj, std::string_view path) {
  const json::value* v = Find(obj, path);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

// The integer at a dotted path, `fallback` when absent or not an integer.
inline int64_t IntAt(const json::object& obj, std::string_view path, int64_t fallback = 0) {
  const json::value* v = Find(obj, path);
  if (v == nullptr) return fallback;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64()) return static_cast<int64_t>(v->get_uint64());
  return fallback;
}

// metadata.<key> as a string.
inline std::string MetaAt(const json::object& obj, std::string_view key) {
  const json::object* meta = GetObject(obj, "metadata");
  return meta == nullptr ? std::string() : std::string(GetString(*meta, key).value_or(""));
}

// "namespace/name" -> {namespace, name}.
inline std::pair<std::string, std::string> SplitKey(const std::string& key) {
  size_t slash = key.find('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

// A copy of `obj` with apiVersion and kind set (informer objects may lack
// them; events and owner references need them).
inline json::object WithKind(const json::object& obj, std::string_view api_version,
                             std::string_view kind) {
  json::object out = obj;
  out["apiVersion"] = api_version;
  out["kind"] = kind;
  return out;
}

}  // namespace flotilla::member
