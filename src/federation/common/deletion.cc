#include "federation/common/deletion.h"

#include "api/annotations.h"
#include "api/federated.h"
#include "api/views.h"

namespace flotilla::federation {
namespace {

const json::array* Finalizers(const json::object& obj) {
  const json::value* v = Find(obj, "metadata.finalizers");
  return v != nullptr && v->is_array() ? &v->get_array() : nullptr;
}

}  // namespace

bool HasFinalizer(const json::object& obj, std::string_view finalizer) {
  const json::array* finalizers = Finalizers(obj);
  if (finalizers == nullptr) return false;
  for (const json::value& f : *finalizers) {
    if (f.is_string() && f.get_string() == finalizer) return true;
  }
  return false;
}

bool DeletesMemberCopies(const json::object& obj) {
  std::string policy = api::AnnotationAt(obj, api::kDeletionPropagationAnnotation);
  return policy == "Background" || policy == "Foreground";
}

bool NeedsFederationFinalizer(const json::object& obj) {
  return !api::IsBeingDeleted(obj) &&
         !HasFinalizer(obj, api::kDeleteFromUnderlyingClustersFinalizer);
}

bool AddFederationFinalizer(json::object& obj) {
  if (!NeedsFederationFinalizer(obj)) return false;
  json::value& finalizers = EnsureObject(obj, "metadata")["finalizers"];
  if (!finalizers.is_array()) finalizers = json::array();
  finalizers.get_array().emplace_back(api::kDeleteFromUnderlyingClustersFinalizer);
  return true;
}

StatusOr<json::object> RemoveFederationFinalizer(client::Client& client,
                                                 const client::ResourceRef& resource,
                                                 const json::object& obj) {
  if (!HasFinalizer(obj, api::kDeleteFromUnderlyingClustersFinalizer)) return obj;
  json::object updated = obj;
  json::array kept;
  for (const json::value& f : *Finalizers(obj)) {
    if (!(f.is_string() && f.get_string() == api::kDeleteFromUnderlyingClustersFinalizer)) {
      kept.push_back(f);
    }
  }
  EnsureObject(updated, "metadata")["finalizers"] = std::move(kept);
  StatusOr<json::object> result = client.Update(resource, "", updated);
  if (!result.ok() && result.status().Is(Reason::kNotFound)) return obj;
  return result;
}

}  // namespace flotilla::federation
