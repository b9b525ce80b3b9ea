// Names the federation shares with its members and with every federation
// controller (DESIGN §3). docs/federation.md.
#pragma once

namespace flotilla::federation {

// Where the members' credentials live on the federation.
inline constexpr char kSystemNamespace[] = "flotilla-system";
// The data key of a Cluster's Secret that holds the member's kubeconfig.
inline constexpr char kKubeconfigKey[] = "kubeconfig";
// The label on every object the federation creates in a member. The
// federation never deletes a member object without it.
inline constexpr char kManagedByLabel[] = "federation.kubernetes.io/managed-by";
inline constexpr char kManagedByValue[] = "flotilla";

}  // namespace flotilla::federation
