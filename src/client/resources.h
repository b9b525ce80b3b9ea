// The built-in kinds as client refs, defined once: the federation, the
// simulated members and the controller runtime all name these.
#pragma once

#include "client/client.h"

namespace flotilla::client {

inline const ResourceRef kNamespaces{"", "v1", "namespaces", false};
inline const ResourceRef kNodes{"", "v1", "nodes", false};
inline const ResourceRef kPods{"", "v1", "pods", true};
inline const ResourceRef kSecrets{"", "v1", "secrets", true};
inline const ResourceRef kConfigMaps{"", "v1", "configmaps", true};
inline const ResourceRef kServices{"", "v1", "services", true};
inline const ResourceRef kEndpoints{"", "v1", "endpoints", true};
inline const ResourceRef kEvents{"", "v1", "events", true};
inline const ResourceRef kPersistentVolumeClaims{"", "v1", "persistentvolumeclaims", true};
inline const ResourceRef kResourceQuotas{"", "v1", "resourcequotas", true};
inline const ResourceRef kEndpointSlices{"discovery.k8s.io", "v1", "endpointslices", true};
inline const ResourceRef kStorageClasses{"storage.k8s.io", "v1", "storageclasses", false};
inline const ResourceRef kReplicaSets{"apps", "v1", "replicasets", true};
inline const ResourceRef kDeployments{"apps", "v1", "deployments", true};
inline const ResourceRef kStatefulSets{"apps", "v1", "statefulsets", true};
inline const ResourceRef kDaemonSets{"apps", "v1", "daemonsets", true};
inline const ResourceRef kJobs{"batch", "v1", "jobs", true};
inline const ResourceRef kCronJobs{"batch", "v1", "cronjobs", true};
inline const ResourceRef kIngresses{"networking.k8s.io", "v1", "ingresses", true};
inline const ResourceRef kIngressClasses{"networking.k8s.io", "v1", "ingressclasses", false};
inline const ResourceRef kPodDisruptionBudgets{"policy", "v1", "poddisruptionbudgets", true};
inline const ResourceRef kControllerRevisions{"apps", "v1", "controllerrevisions", true};
inline const ResourceRef kHorizontalPodAutoscalers{"autoscaling", "v2", "horizontalpodautoscalers",
                                                   true};
inline const ResourceRef kLeases{"coordination.k8s.io", "v1", "leases", true};
inline const ResourceRef kCustomResourceDefinitions{"apiextensions.k8s.io", "v1",
                                                    "customresourcedefinitions", false};

}  // namespace flotilla::client
