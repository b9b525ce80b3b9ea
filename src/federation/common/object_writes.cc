// Writes to federated objects (object_writes.h).
#include "federation/common/object_writes.h"

#include "api/annotations.h"

namespace flotilla::federation {

StatusOr<json::object> SetAnnotation(client::Client& client, const client::ResourceRef& resource,
                                     const json::object& obj, std::string_view key,
                                     std::string_view value) {
  return SetAnnotations(client, resource, obj, {{std::string(key), std::string(value)}});
}

StatusOr<json::object> SetAnnotations(client::Client& client, const client::ResourceRef& resource,
                                      const json::object& obj,
                                      const std::map<std::string, std::string>& set,
                                      const std::vector<std::string>& remove) {
  json::object updated = obj;
  json::value& annotations = EnsureObject(updated, "metadata")["annotations"];
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
  if (!changed) return obj;
  return client.Update(resource, "", updated);
}

Status WriteStatusIfChanged(client::Client& client, const client::ResourceRef& resource,
                            const json::object& obj, json::object status) {
  const json::object* current = GetObject(obj, "status");
  if (current != nullptr && *current == status) return Status::Ok();
  json::object updated = obj;
  updated["status"] = std::move(status);
  return client.UpdateStatus(resource, "", updated).status();
}

}  // namespace flotilla::federation
