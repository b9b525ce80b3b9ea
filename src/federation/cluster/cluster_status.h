// Pure pieces of the cluster controller: the conditions it writes and the
// topology it reads from a member's nodes. Internal to src/federation/cluster.
#pragma once

#include <string>
#include <vector>

#include "api/resources.h"
#include "base/clock.h"
#include "base/json.h"
#include "runtime/informer.h"

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
  bool operator==(const Topology&) const = default;
};

// What a member offers and what its pods take, for status.nodeSummary and
// status.resourceSummary (kubectl flotilla clusters, the dashboard).
struct ResourceSummary {
  int64_t nodes = 0;
  int64_t ready_nodes = 0;     // Ready and schedulable
  api::Resources allocatable;  // of the ready, schedulable nodes
  api::Resources allocated;    // requested by the pods bound to any node
};

ResourceSummary SummarizeResources(const std::vector<runtime::ObjectPtr>& nodes,
                                   const std::vector<runtime::ObjectPtr>& pods);

// Sets status.nodeSummary {totalNum, readyNum} and status.resourceSummary
// {allocatable, allocated} (each {cpu, memory, pods} as quantities).
void SetResourceSummary(json::object& status, const ResourceSummary& summary);

// Zones and region from topology.kubernetes.io/zone|region labels, else the
// legacy failure-domain.beta.kubernetes.io/zone|region ones.
Topology TopologyOfNodes(const std::vector<runtime::ObjectPtr>& nodes);

// Whether two Cluster statuses (either may be null) differ in nothing but
// their conditions' lastProbeTime.
bool SameButProbeTimes(const json::value* a, const json::value* b);
// The same, and in status.federatedObjects when both have one.
bool SameButProbeTimesAndCount(const json::value* a, const json::value* b);

}  // namespace flotilla::federation::cluster
