// Writes to federated objects (object_writes.h).
#include "federation/common/object_writes.h"

#include "api/annotations.h"

namespace flotilla::federation {

StatusOr<json::object> SetAnnotation(client::Client& client, const client::ResourceRef& resource,
                                     const json::object& obj, std::string_view key,
                                     std::string_view value) {
  const json::value* have = api::FindAnnotation(obj, key);
  if (have != nullptr && have->is_string() && have->get_string() == value) return obj;
  json::object annotated = obj;
  json::value& annotations = EnsureObject(annotated, "metadata")["annotations"];
  if (!annotations.is_object()) annotations = json::object();
  annotations.as_object()[key] = value;
  return client.Update(resource, "", annotated);
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
