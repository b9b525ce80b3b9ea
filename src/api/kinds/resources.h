// One factory per kind, each defined next to that kind's defaults,
// validation and columns; kinds.cc registers them in discovery order.
// Internal to src/api/kinds.
#pragma once

#include <string>
#include <vector>

#include "api/registry.h"

namespace flotilla::api::kinds {

// The discovery facts every kind has; singular is the lowercased kind and
// verbs are the full set.
Resource MakeResource(std::string group, std::string version, std::string kind, std::string plural,
                      bool namespaced, std::string schema_name);

// core_kinds.cc
Resource NamespaceResource();
Resource ConfigMapResource();
Resource SecretResource();
Resource ServiceAccountResource();
// events.cc
Resource EventResource();
// service.cc
Resource ServiceResource();
// workloads.cc
Resource ReplicaSetResource();
Resource DeploymentResource();
Resource StatefulSetResource();
Resource DaemonSetResource();
Resource ControllerRevisionResource();
// batch.cc
Resource JobResource();
Resource CronJobResource();
// hpa.cc
Resource HorizontalPodAutoscalerV2Resource();
Resource HorizontalPodAutoscalerV1Resource();
// namespace_rules.cc
Resource NetworkPolicyResource();
Resource LimitRangeResource();
// ingress.cc
Resource IngressResource();
Resource IngressClassResource();
// disruption_budget.cc
Resource PodDisruptionBudgetResource();
// misc_kinds.cc
Resource LeaseResource();
Resource ClusterResource();
// rbac_kinds.cc
Resource RoleResource();
Resource ClusterRoleResource();
Resource RoleBindingResource();
Resource ClusterRoleBindingResource();
// SelfSubjectReview, TokenReview and the authorization.k8s.io access reviews.
std::vector<Resource> ReviewResources();
// member_kinds.cc
Resource PodResource();
Resource MemberPodsViewResource();
Resource NodeResource();
Resource EndpointsResource();
Resource PersistentVolumeClaimResource();
Resource ResourceQuotaResource();
Resource EndpointSliceResource();
Resource StorageClassResource();

// policy_kinds.cc: the policy.karmada.io/v1alpha1 kinds, in discovery order.
std::vector<Resource> PolicyResources();
// crd_kinds.cc
Resource CustomResourceDefinitionResource();

}  // namespace flotilla::api::kinds
