#include "federation/common/member_copy.h"

#include "api/federated.h"

namespace flotilla::federation {
namespace {

constexpr std::string_view kFederationOnlyAnnotations[] = {
    api::kClusterSelectorAnnotation,
    api::kDeletionPropagationAnnotation,
    api::kReplicaSetStatusAnnotation,
    api::kReplicaSetPreferencesAnnotation,
    api::kDeploymentPreferencesAnnotation,
    api::kDeploymentStatusAnnotation,
    api::kClusterUpdateOrderAnnotation,
    api::kShadowReplicaSetAnnotation,
    api::kStatefulSetPreferencesAnnotation,
    api::kStatefulSetLbNeededAnnotation,
    api::kStatefulReplicaListAnnotation,
    api::kStatefulSetStatusAnnotation,
    api::kPlacementClusterAnnotation,
    api::kHpaPreferencesAnnotation,
    api::kHpaStatusAnnotation,
    api::kHpaTargetClusterListAnnotation,
    api::kLocationAffinityAnnotation,
    api::kMigrationWindowAnnotation,
    api::kAntiAffinityAnnotation,
    api::kMigrateToAnnotation,
};

}  // namespace

std::string FederatedObjectKey(const json::object& federated) {
  std::string_view ns = StringViewAt(federated, "metadata.namespace");
  std::string_view name = StringViewAt(federated, "metadata.name");
  return ns.empty() ? std::string(name) : std::string(ns) + "/" + std::string(name);
}

bool IsFederationOnlyAnnotation(std::string_view key) {
  for (std::string_view k : kFederationOnlyAnnotations) {
    if (k == key) return true;
  }
  return false;
}

json::object MemberMetadata(const json::object& federated) {
  json::object meta;
  meta["name"] = StringViewAt(federated, "metadata.name");
  std::string_view ns = StringViewAt(federated, "metadata.namespace");
  if (!ns.empty()) meta["namespace"] = ns;
  if (const json::value* labels = Find(federated, "metadata.labels");
      labels != nullptr && labels->is_object() && !labels->get_object().empty()) {
    meta["labels"] = *labels;
  }
  if (const json::value* annotations = Find(federated, "metadata.annotations");
      annotations != nullptr && annotations->is_object()) {
    json::object kept;
    for (const auto& [k, v] : annotations->get_object()) {
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
  const json::value* labels = Find(member_obj, "metadata.labels");
  if (labels == nullptr || !labels->is_object()) return false;
  const json::value* v = labels->get_object().if_contains(api::kManagedByLabel);
  return v != nullptr && v->is_string() && v->get_string() == api::kManagedByValue;
}

}  // namespace flotilla::federation
