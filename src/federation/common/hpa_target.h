// The clusters a federated HPA chose for its target (seed 004, "Rebalancing
// of workload replicas and control over the same"), as the HPA controller
// writes them on the federated Deployment or ReplicaSet it scales
// (api::kHpaTargetClusterListAnnotation) and the target's controller reads
// them: while the list is there, the target runs in exactly those clusters
// with the replicas their local HPAs set.
//
// Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/json.h"

namespace flotilla::federation {

// The member resource of local HPAs (autoscaling/v2): a member that does
// not serve it keeps its copy of an HPA's target as it is.
inline constexpr char kHpaResource[] = "horizontalpodautoscalers";

struct HpaTargetList {
  std::string hpa;                    // the federated HPA's name
  std::vector<std::string> clusters;  // sorted
  friend bool operator==(const HpaTargetList&, const HpaTargetList&) = default;
};

// The list on `target`; none when it has none or it does not parse (a
// hand-written one; the HPA controller writes it again).
std::optional<HpaTargetList> HpaTargetListOf(const json::object& target);

// {"hpa": "web", "clusters": ["a", "b"]}
std::string RenderHpaTargetList(const HpaTargetList& list);

}  // namespace flotilla::federation
