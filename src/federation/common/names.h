// Names the federation shares with its members and with every federation
// controller (DESIGN §3): where the members' credentials live, and the
// resources the controllers read and write, on the federation and in the
// members. docs/federation.md.
#pragma once

#include "api/federated.h"
#include "client/client.h"

namespace flotilla::federation {

// Where the members' credentials live on the federation.
inline constexpr char kSystemNamespace[] = "flotilla-system";
// The data key of a Cluster's Secret that holds the member's kubeconfig.
inline constexpr char kKubeconfigKey[] = "kubeconfig";
using api::kManagedByLabel;
using api::kManagedByValue;

inline const client::ResourceRef kClusters{"federation", "v1beta1", "clusters", false};
inline const client::ResourceRef kSecrets{"", "v1", "secrets", true};
inline const client::ResourceRef kNodes{"", "v1", "nodes", false};
inline const client::ResourceRef kNamespaces{"", "v1", "namespaces", false};
inline const client::ResourceRef kPods{"", "v1", "pods", true};
inline const client::ResourceRef kReplicaSets{"apps", "v1", "replicasets", true};
inline const client::ResourceRef kDeployments{"apps", "v1", "deployments", true};
inline const client::ResourceRef kServices{"", "v1", "services", true};
inline const client::ResourceRef kEndpoints{"", "v1", "endpoints", true};

}  // namespace flotilla::federation
