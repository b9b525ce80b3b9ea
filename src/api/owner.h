// Reading an object's owner references (metadata.ownerReferences), for the
// controllers that follow ownership. Pure.
#pragma once

#include "api/views.h"
#include "base/json.h"

namespace flotilla::api {

// The ownerReference with controller: true; null when there is none (or
// ownerReferences is not a list of objects).
inline const json::object* ControllerRef(const json::object& obj) {
  const json::value* refs = Find(obj, "metadata.ownerReferences");
  if (refs == nullptr || !refs->is_array()) return nullptr;
  for (const json::value& r : refs->get_array()) {
    if (!r.is_object()) continue;
    const json::value* controller = r.get_object().if_contains("controller");
    if (controller != nullptr && controller->is_bool() && controller->get_bool()) {
      return &r.get_object();
    }
  }
  return nullptr;
}

// An ownerReference naming `owner` its controller, with
// blockOwnerDeletion, as Kubernetes' controllers write it (apiVersion and
// kind given: an object read from an informer may lack them).
inline json::object NewControllerRef(const json::object& owner, std::string_view api_version,
                                     std::string_view kind) {
  ObjectView o(owner);
  return {{"apiVersion", api_version}, {"kind", kind},
          {"name", o.name()},          {"uid", o.uid()},
          {"controller", true},        {"blockOwnerDeletion", true}};
}

// The name of the controller of `obj` when it is of `kind`; "" otherwise.
inline std::string ControllerName(const json::object& obj, std::string_view kind) {
  const json::object* ref = ControllerRef(obj);
  if (ref == nullptr || GetString(*ref, "kind") != kind) return "";
  return std::string(GetString(*ref, "name").value_or(""));
}

}  // namespace flotilla::api
