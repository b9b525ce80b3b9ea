// Names the federation shares with its members and with every federation
// controller (DESIGN §3). docs/federation.md.
#pragma once

#include "api/federated.h"

namespace flotilla::federation {

// Where the members' credentials live on the federation.
inline constexpr char kSystemNamespace[] = "flotilla-system";
// The data key of a Cluster's Secret that holds the member's kubeconfig.
inline constexpr char kKubeconfigKey[] = "kubeconfig";
using api::kManagedByLabel;
using api::kManagedByValue;

}  // namespace flotilla::federation
