// Pure pieces of the cluster controller: the conditions it writes and the
// topology it reads from a member's nodes. Internal to src/federation/cluster.
#pragma once

#include <string>
#include <vector>

#include "base/clock.h"
#include "base/json.h"

namespace flotilla::federation::cluster {

// One condition of a Cluster's status. lastTransitionTime is kept from the
// condition of the same type in `old` (status.conditions, may be null) when
// the status is unchanged, else `now`; lastProbeTime is `now`.
json::object MakeCondition(const json::array* old, const std::string& type,
                           const std::string& status, const std::string& reason,
                           const std::string& message, TimePoint now);

// The status ("True", "False") of the condition `type` in `conditions`;
// "" when there is none.
std::string ConditionStatus(const json::array* conditions, const std::string& type);

struct Topology {
  std::vector<std::string> zones;  // sorted, distinct
  std::string region;              // the most common one; ties go to the first by name
};

// Zones and region from topology.kubernetes.io/zone|region labels, else the
// legacy failure-domain.beta.kubernetes.io/zone|region ones.
Topology TopologyOfNodes(const std::vector<json::object>& nodes);

}  // namespace flotilla::federation::cluster
