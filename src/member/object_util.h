// Small readers of JSON objects shared by the member's controllers. Pure,
// thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/json.h"

namespace flotilla::member {

// metadata.<key> as a string.
inline std::string MetaAt(const json::object& obj, std::string_view key) {
  const json::object* meta = GetObject(obj, "metadata");
  return meta == nullptr ? std::string() : std::string(GetString(*meta, key).value_or(""));
}

// o[key] as a string; "" when absent or of another type.
inline std::string FieldString(const json::object& o, std::string_view key) {
  return std::string(GetString(o, key).value_or(""));
}

// obj.status as an object; empty when absent.
inline json::object StatusOf(const json::object& obj) {
  const json::value* st = obj.if_contains("status");
  return st != nullptr && st->is_object() ? st->get_object() : json::object();
}

// "namespace/name" -> {namespace, name}.
inline std::pair<std::string, std::string> SplitKey(const std::string& key) {
  size_t slash = key.find('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

// The objects of the list at `path` (other elements skipped); empty when
// absent or not a list.
inline std::vector<const json::object*> ObjectsAt(const json::object& o, std::string_view path) {
  std::vector<const json::object*> out;
  const json::value* v = Find(o, path);
  if (v == nullptr || !v->is_array()) return out;
  for (const json::value& e : v->get_array()) {
    if (e.is_object()) out.push_back(&e.get_object());
  }
  return out;
}

// A Node's InternalIP address; "" when it has none.
inline std::string InternalIp(const json::object& node) {
  for (const json::object* a : ObjectsAt(node, "status.addresses")) {
    if (GetString(*a, "type") == "InternalIP") return FieldString(*a, "address");
  }
  return "";
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
