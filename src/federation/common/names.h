// Names the federation shares with its members and with every federation
// controller (DESIGN §3): where the members' credentials live, and the
// resources the controllers read and write, on the federation and in the
// members. docs/federation.md.
#pragma once

#include "api/federated.h"
#include "client/client.h"
#include "client/resources.h"

namespace flotilla::federation {

// Where the members' credentials live on the federation.
inline constexpr char kSystemNamespace[] = "flotilla-system";
// The data key of a Cluster's Secret that holds the member's kubeconfig.
inline constexpr char kKubeconfigKey[] = "kubeconfig";
using api::kManagedByLabel;
using api::kManagedByValue;

inline const client::ResourceRef kClusters{"federation", "v1beta1", "clusters", false};
using client::kDeployments;
using client::kEndpoints;
using client::kNamespaces;
using client::kNodes;
using client::kPersistentVolumeClaims;
using client::kPods;
using client::kReplicaSets;
using client::kSecrets;
using client::kServices;
using client::kStatefulSets;

}  // namespace flotilla::federation
