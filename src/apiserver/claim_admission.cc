// Claim admission (claim_admission.h).
#include "apiserver/claim_admission.h"

#include <optional>
#include <string>
#include <vector>

#include "api/claims.h"
#include "api/resources.h"

namespace flotilla::apiserver {
namespace {

constexpr char kClasses[] = "/storage.k8s.io/storageclasses/";

}  // namespace

Status ClaimAdmission::AdmitCreate(json::object& claim) {
  if (api::ClaimClass(claim).has_value()) return Status::Ok();
  FLOTILLA_ASSIGN_OR_RETURN(storage::ListResult listed, store_.List(kClasses, {}));
  std::vector<json::object> classes;
  for (const storage::KeyValue& kv : listed.items) {
    StatusOr<json::object> cls = ParseJsonObject(kv.value);
    if (cls.ok()) classes.push_back(std::move(*cls));
  }
  std::vector<const json::object*> all;
  for (const json::object& cls : classes) all.push_back(&cls);
  if (std::optional<std::string> name = api::DefaultClassName(all)) {
    EnsureObject(claim, "spec")["storageClassName"] = *name;
  }
  return Status::Ok();
}

Status ClaimAdmission::AdmitUpdate(const json::object& claim, const json::object& old) {
  const json::value* now = Find(claim, "spec.resources.requests.storage");
  const json::value* was = Find(old, "spec.resources.requests.storage");
  if (now == nullptr || was == nullptr ||
      !(api::QuantityValue(*now, 1000) > api::QuantityValue(*was, 1000))) {
    return Status::Ok();
  }
  Status refused = Status::Forbidden(
      "only dynamically provisioned pvc can be resized and the storageclass that provisions the "
      "pvc must support resize");
  std::string name = api::ClaimClass(claim).value_or("");
  if (name.empty()) return refused;
  StatusOr<storage::KeyValue> stored = store_.Get(kClasses + name);
  if (!stored.ok()) return stored.status().Is(Reason::kNotFound) ? refused : stored.status();
  StatusOr<json::object> cls = ParseJsonObject(stored->value);
  if (!cls.ok()) return cls.status();
  const json::value* allow = cls->if_contains("allowVolumeExpansion");
  if (allow == nullptr || !allow->is_bool() || !allow->get_bool()) return refused;
  return Status::Ok();
}

}  // namespace flotilla::apiserver
