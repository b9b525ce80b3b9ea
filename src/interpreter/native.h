// What Karmada's built-in interpreter says a native kind depends on (its
// default dependencies interpreter), in C++: a policy with
// `propagateDeps: true` sends these where the workload goes
// (docs/policies.md), and `kube.getPodDependencies` (kube_lib.h) answers
// from PodDependencies.
#pragma once

#include <optional>
#include <string_view>

#include "base/json.h"

namespace flotilla::interpreter {

// The ConfigMaps, Secrets (volumes, projected sources, env, envFrom, image
// pull secrets), ServiceAccount (not "default") and PersistentVolumeClaims a
// pod template (or a Pod: anything with a `spec`) uses, as
// DependentObjectReferences {apiVersion, kind, namespace, name} in `ns`,
// sorted by kind and then name.
json::array PodDependencies(const json::object& pod_template, std::string_view ns);

// The dependencies of `obj` of `api_version`/`kind` when Karmada's default
// interpreter knows the kind: the pod template's of Deployments,
// ReplicaSets, DaemonSets, StatefulSets (without the claims of its
// volumeClaimTemplates, which the StatefulSet makes in each cluster), Jobs,
// CronJobs and Pods; the TLS Secrets of an Ingress. nullopt for other kinds.
std::optional<json::array> NativeDependencies(std::string_view api_version, std::string_view kind,
                                              const json::object& obj);

}  // namespace flotilla::interpreter
