// Writes to federated objects (object_writes.h).
#include "federation/common/object_writes.h"

#include "api/annotations.h"
#include "api/views.h"

namespace flotilla::federation {

client::DeleteOptions DeleteOptionsFor(const json::object& obj, std::string policy) {
  return client::DeleteOptions{.propagation_policy = std::move(policy),
                               .precondition_uid = std::string(api::ObjectView(obj).uid())};
}

Status DeleteExactly(client::Client& client, const client::ResourceRef& resource,
                     const json::object& obj, std::string policy) {
  api::ObjectView v(obj);
  return client.Delete(resource, std::string(v.ns()), std::string(v.name()),
                       DeleteOptionsFor(obj, std::move(policy)));
}

StatusOr<std::optional<json::object>> SetAnnotation(client::Client& client,
                                                    const client::ResourceRef& resource,
                                                    const json::object& obj, std::string_view key,
                                                    std::string_view value) {
  return SetAnnotations(client, resource, obj, {{std::string(key), std::string(value)}});
}

bool HasAnnotations(const json::object& obj, const std::map<std::string, std::string>& set,
                    const std::vector<std::string>& remove) {
  const json::value* found = Find(obj, "metadata.annotations");
  const json::object* a = found != nullptr && found->is_object() ? &found->get_object() : nullptr;
  for (const auto& [key, value] : set) {
    const json::value* have = a != nullptr ? a->if_contains(key) : nullptr;
    if (have == nullptr || !have->is_string() || have->get_string() != value) return false;
  }
  for (const std::string& key : remove) {
    if (a != nullptr && a->contains(key)) return false;
  }
  return true;
}

namespace {

// Sets each annotation of `set` on `obj` and removes each of `remove`.
void ApplyAnnotations(json::object& obj, const std::map<std::string, std::string>& set,
                      const std::vector<std::string>& remove) {
  if (set.empty() && remove.empty()) return;
  json::value& annotations = EnsureObject(obj, "metadata")["annotations"];
  if (!annotations.is_object()) annotations = json::object();
  json::object& a = annotations.as_object();
  for (const auto& [key, value] : set) a[key] = value;
  for (const std::string& key : remove) a.erase(key);
}

}  // namespace

StatusOr<std::optional<json::object>> SetAnnotations(client::Client& client,
                                                     const client::ResourceRef& resource,
                                                     const json::object& obj,
                                                     const std::map<std::string, std::string>& set,
                                                     const std::vector<std::string>& remove) {
  if (HasAnnotations(obj, set, remove)) return std::nullopt;
  json::object updated = obj;
  ApplyAnnotations(updated, set, remove);
  FLOTILLA_ASSIGN_OR_RETURN(json::object stored, client.Update(resource, "", updated));
  return stored;
}

Status WriteStatusIfChanged(client::Client& client, const client::ResourceRef& resource,
                            const json::object& obj, json::object status,
                            const std::map<std::string, std::string>& set,
                            const std::vector<std::string>& remove) {
  const json::object* current = GetObject(obj, "status");
  if (current != nullptr && *current == status && HasAnnotations(obj, set, remove)) {
    return Status::Ok();
  }
  json::object updated = obj;
  ApplyAnnotations(updated, set, remove);
  updated["status"] = std::move(status);
  return client.UpdateStatus(resource, "", updated).status();
}

}  // namespace flotilla::federation
