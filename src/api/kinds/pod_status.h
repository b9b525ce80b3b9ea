// The Pod's Table columns, with printPod's reading of container statuses
// into READY, STATUS and RESTARTS. Internal to src/api/kinds.
#pragma once

#include <vector>

#include "api/registry.h"

namespace flotilla::api::kinds {

// NAME READY STATUS RESTARTS AGE, and wide IP NODE NOMINATED NODE
// READINESS GATES.
std::vector<TableColumn> PodColumns();

}  // namespace flotilla::api::kinds
