// Writes to federated objects (object_writes.h).
#include "federation/common/object_writes.h"

#include "api/annotations.h"

namespace flotilla::federation {

StatusOr<json::object> SetAnnotation(client::Client& client, const client::ResourceRef& resource,
                                     const json::object& obj, std::string_view key,
                                     std::string_view value) {
  return SetAnnotations(client, resource, obj, {{std::string(key), std::string(value)}});
}

namespace {

// Sets each annotation of `set` on `obj` and removes each of `remove`;
// returns whether anything changed.
bool ApplyAnnotations(json::object& obj, const std::map<std::string, std::string>& set,
                      const std::vector<std::string>& remove) {
  if (set.empty() && remove.empty()) return false;
  json::value& annotations = EnsureObject(obj, "metadata")["annotations"];
  if (!annotations.is_object()) annotations = json::object();
  json::object& a = annotations.as_object();
  bool changed = false;
  for (const auto& [key, value] : set) {
    const json::value* have = a.if_contains(key);
    if (have != nullptr && have->is_string() && have->get_string() == value) continue;
    a[key] = value;
    changed = true;
  }
  for (const std::string& key : remove) changed = a.erase(key) > 0 || changed;
  return changed;
}

}  // namespace

StatusOr<json::object> SetAnnotations(client::Client& client, const client::ResourceRef& resource,
                                      const json::object& obj,
                                      const std::map<std::string, std::string>& set,
                                      const std::vector<std::string>& remove) {
  json::object updated = obj;
  if (!ApplyAnnotations(updated, set, remove)) return obj;
  return client.Update(resource, "", updated);
}

Status WriteStatusIfChanged(client::Client& client, const client::ResourceRef& resource,
                            const json::object& obj, json::object status,
                            const std::map<std::string, std::string>& set,
                            const std::vector<std::string>& remove) {
  json::object updated = obj;
  bool changed = ApplyAnnotations(updated, set, remove);
  const json::object* current = GetObject(obj, "status");
  if (current == nullptr || *current != status) {
    updated["status"] = std::move(status);
    changed = true;
  }
  if (!changed) return Status::Ok();
  return client.UpdateStatus(resource, "", updated).status();
}

}  // namespace flotilla::federation
