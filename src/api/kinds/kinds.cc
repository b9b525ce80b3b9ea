// Registration in kube-apiserver's discovery order, and HumanDuration.
#include "api/kinds/kinds.h"

#include <cctype>

#include "api/kinds/resources.h"

namespace flotilla::api {
namespace kinds {

Resource MakeResource(std::string group, std::string version, std::string kind, std::string plural,
                      bool namespaced, std::string schema_name) {
  Resource r;
  r.group = std::move(group);
  r.version = std::move(version);
  r.singular = kind;
  for (char& c : r.singular) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  r.kind = std::move(kind);
  r.plural = std::move(plural);
  r.namespaced = namespaced;
  r.schema_name = std::move(schema_name);
  r.status_takes_metadata = r.schema_name.starts_with("io.k8s.");
  return r;
}

}  // namespace kinds

void RegisterFoundationKinds(Registry& registry) {
  registry.Add(kinds::NamespaceResource());
  registry.Add(kinds::ConfigMapResource());
  registry.Add(kinds::SecretResource());
  registry.Add(kinds::ServiceResource());
  registry.Add(kinds::EventResource());
  registry.Add(kinds::ServiceAccountResource());
  registry.Add(kinds::LimitRangeResource());
  registry.Add(kinds::ResourceQuotaResource());
  registry.Add(kinds::PersistentVolumeClaimResource());
  registry.Add(kinds::ReplicaSetResource());
  registry.Add(kinds::DeploymentResource());
  registry.Add(kinds::StatefulSetResource());
  registry.Add(kinds::DaemonSetResource());
  registry.Add(kinds::ControllerRevisionResource());
  for (Resource& r : kinds::ReviewResources()) registry.Add(std::move(r));
  registry.Add(kinds::HorizontalPodAutoscalerV2Resource());
  registry.Add(kinds::HorizontalPodAutoscalerV1Resource());
  registry.Add(kinds::JobResource());
  registry.Add(kinds::CronJobResource());
  registry.Add(kinds::IngressClassResource());
  registry.Add(kinds::IngressResource());
  registry.Add(kinds::NetworkPolicyResource());
  registry.Add(kinds::PodDisruptionBudgetResource());
  registry.Add(kinds::RoleResource());
  registry.Add(kinds::ClusterRoleResource());
  registry.Add(kinds::RoleBindingResource());
  registry.Add(kinds::ClusterRoleBindingResource());
  registry.Add(kinds::CustomResourceDefinitionResource());
  registry.Add(kinds::LeaseResource());
  registry.Add(kinds::ClusterResource());
}

void RegisterPolicyKinds(Registry& registry) {
  for (Resource& r : kinds::PolicyResources()) registry.Add(std::move(r));
}

void RegisterMemberPodsView(Registry& registry) { registry.Add(kinds::MemberPodsViewResource()); }

void RegisterMemberKinds(Registry& registry) {
  registry.Add(kinds::PodResource());
  registry.Add(kinds::NodeResource());
  registry.Add(kinds::EndpointsResource());
  registry.Add(kinds::EndpointSliceResource());
  registry.Add(kinds::StorageClassResource());
}

std::string HumanDuration(Duration d) {
  using std::to_string;
  // Go converts with truncation toward zero, as duration_cast does.
  int64_t seconds = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return to_string(seconds) + "s";
  int64_t minutes = seconds / 60;
  if (minutes < 10) {
    int64_t s = seconds % 60;
    return s == 0 ? to_string(minutes) + "m" : to_string(minutes) + "m" + to_string(s) + "s";
  }
  if (minutes < 60 * 3) return to_string(minutes) + "m";
  int64_t hours = minutes / 60;
  if (hours < 8) {
    int64_t m = minutes % 60;
    return m == 0 ? to_string(hours) + "h" : to_string(hours) + "h" + to_string(m) + "m";
  }
  if (hours < 48) return to_string(hours) + "h";
  if (hours < 24 * 8) {
    int64_t h = hours % 24;
    return h == 0 ? to_string(hours / 24) + "d" : to_string(hours / 24) + "d" + to_string(h) + "h";
  }
  if (hours < 24 * 365 * 2) return to_string(hours / 24) + "d";
  if (hours < 24 * 365 * 8) {
    int64_t dy = (hours / 24) % 365;
    std::string years = to_string(hours / 24 / 365) + "y";
    return dy == 0 ? years : years + to_string(dy) + "d";
  }
  return to_string(hours / 24 / 365) + "y";
}

}  // namespace flotilla::api
