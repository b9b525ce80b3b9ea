#include "federation/common/member_copy.h"

#include "api/federated.h"
#include "api/policy/policy.h"
#include "api/views.h"

namespace flotilla::federation {
namespace {

// The federation's own annotation domains (api/federated.h), and those in
// which the federation records the propagation policy that placed an object.
constexpr std::string_view kFederationOnlyPrefixes[] = {
    api::kFederationAnnotationDomain,
    api::kFederationAlphaAnnotationDomain,
    api::policy::kPropagationPolicyAnnotationDomain,
    api::policy::kClusterPropagationPolicyAnnotationDomain,
};

}  // namespace

std::string FederatedObjectKey(const json::object& federated) {
  api::ObjectView v(federated);
  return v.ns().empty() ? std::string(v.name()) : std::string(v.ns()) + "/" + std::string(v.name());
}

bool IsFederationOnlyAnnotation(std::string_view key) {
  for (std::string_view prefix : kFederationOnlyPrefixes) {
    if (key.starts_with(prefix)) return true;
  }
  return false;
}

json::object MemberMetadata(const json::object& federated) {
  json::object meta;
  api::ObjectView fed(federated);
  meta["name"] = fed.name();
  if (!fed.ns().empty()) meta["namespace"] = fed.ns();
  if (const json::object* labels = fed.labels(); labels != nullptr && !labels->empty()) {
    meta["labels"] = *labels;
  }
  if (const json::object* annotations = fed.annotations()) {
    json::object kept;
    for (const auto& [k, v] : *annotations) {
      if (!IsFederationOnlyAnnotation(k)) kept[k] = v;
    }
    if (!kept.empty()) meta["annotations"] = std::move(kept);
  }
  json::object copy{{"metadata", std::move(meta)}};
  MarkManaged(copy, federated);
  return std::move(copy["metadata"].as_object());
}

void MarkManaged(json::object& member_obj, const json::object& federated) {
  json::object& meta = EnsureObject(member_obj, "metadata");
  EnsureObject(meta, "labels")[api::kManagedByLabel] = api::kManagedByValue;
  EnsureObject(meta, "annotations")[api::kFederatedObjectAnnotation] =
      FederatedObjectKey(federated);
}

bool IsManaged(const json::object& member_obj) {
  return api::ObjectView(member_obj).label(api::kManagedByLabel) == api::kManagedByValue;
}

}  // namespace flotilla::federation
