// The built-in kinds as registry data (DESIGN §2, §3): every Kubernetes kind
// Flotilla serves, with kube-apiserver's discovery facts (short names,
// categories, verbs, subresources), the defaults it applies, its
// kind-specific validation (messages and field paths as Kubernetes v1.32
// words them) and the Table columns `kubectl get` prints.
//
// Generic ObjectMeta and name validation is the server's (api/validation.h);
// so are the things kube-apiserver does with server state, such as
// allocating Service cluster IPs and node ports. docs/kinds.md lists what
// each kind defaults, validates and prints.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api/registry.h"
#include "base/clock.h"

namespace flotilla::api {

namespace crd {
struct Definition;
}

// Registers the kinds the federation serves, preferred versions first:
//   v1: namespaces, configmaps, secrets, services, events, serviceaccounts,
//     limitranges, resourcequotas, persistentvolumeclaims
//   apps/v1: replicasets, deployments, statefulsets, controllerrevisions
//   batch/v1: jobs, cronjobs
//   authentication.k8s.io/v1: selfsubjectreviews, tokenreviews;
//   authorization.k8s.io/v1:
//     localsubjectaccessreviews, selfsubjectaccessreviews,
//     selfsubjectrulesreviews, subjectaccessreviews (create only, answered
//     by the server, never stored)
//   autoscaling/v2 and autoscaling/v1: horizontalpodautoscalers (stored as v2)
//   rbac.authorization.k8s.io/v1: roles, clusterroles, rolebindings,
//     clusterrolebindings
//   apiextensions.k8s.io/v1: customresourcedefinitions (docs/crds.md)
//   coordination.k8s.io/v1: leases
//   federation/v1beta1: clusters
// REQUIRES: none of them is registered yet.
void RegisterFoundationKinds(Registry& registry);

// Registers the kinds only a (simulated) member cluster serves:
//   v1: pods, nodes, endpoints
//   discovery.k8s.io/v1: endpointslices
// Pod subresources such as binding are the server's.
// REQUIRES: RegisterFoundationKinds ran first on `registry` (the core group
// is then listed before discovery.k8s.io), and none of them is registered.
void RegisterMemberKinds(Registry& registry);

// Registers the federation's read-only view of its members' pods
// (docs/federation.md, "The members' pods"): v1 pods with the verbs
// delete (ApiServerOptions::pod_delete forwards it), get, list and watch,
// and a Cluster column after the name, read from the
// federation.kubernetes.io/cluster label each pod carries there.
// REQUIRES: RegisterFoundationKinds ran first; pods are not registered.
void RegisterMemberPodsView(Registry& registry);

// Registers the kinds of Karmada's policy API that the federation serves
// (docs/policies.md): policy.karmada.io/v1alpha1 propagationpolicies,
// clusterpropagationpolicies, overridepolicies, clusteroverridepolicies and
// federatedresourcequotas; and config.karmada.io/v1alpha1
// resourceinterpretercustomizations (docs/interpreter.md). Members do not
// serve them.
// REQUIRES: none of them is registered yet.
void RegisterPolicyKinds(Registry& registry);

// The resources a valid CRD defines, one per served version, in the CRD's
// order: its names, scope, subresources, storage version (conversion
// None), printer columns, and its schema's pruning, defaults and
// validation.
std::vector<std::shared_ptr<Resource>> CustomResources(const crd::Definition& definition);

// apimachinery's duration.HumanDuration: "0s" for small negative
// durations, "<invalid>" below -1s, then "59s", "3m2s", "10m", "5h3m",
// "2d4h", "30d", "2y40d", "9y", with two or three significant figures.
std::string HumanDuration(Duration d);

}  // namespace flotilla::api
