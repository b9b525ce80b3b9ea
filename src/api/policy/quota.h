// A FederatedResourceQuota's overall limits as the federation enforces
// them (docs/policies.md, "Federated resource quota"): what a workload
// counts against a quota, the refusal of a write that takes a namespace
// beyond it (Kubernetes' "exceeded quota" 403), and status.overallUsed.
// Pure.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace flotilla::api::policy {

// Usage by quota resource name (cpu, memory, ephemeral-storage, pods), in
// milli-units.
using QuotaUsage = std::map<std::string, int64_t>;

// What a Deployment, ReplicaSet or StatefulSet counts: its replicas times
// its pod template's requests, and its replicas as pods. Empty for other
// objects, and for one a controller owns (a Deployment's ReplicaSet).
QuotaUsage WorkloadUsage(const json::object& workload);
// The same for a `workload` of `kind` (a cached object need not carry it).
QuotaUsage WorkloadUsage(std::string_view kind, const json::object& workload);
void Add(QuotaUsage& total, const QuotaUsage& more, int sign = 1);

// The resource a name of spec.overall caps ("requests.cpu" and "cpu" are
// both "cpu"); empty for names the federation does not count (limits.*,
// count/*, storage).
std::string CountedResource(std::string_view quota_name);

// Refuses (Forbidden, Kubernetes' message: "exceeded quota: NAME,
// requested: cpu=2, used: cpu=3, limited: cpu=4") a write that takes the
// namespace's usage from `before` to `after` when, for a resource `frq`'s
// spec.overall caps, `after` is above the cap and above `before` (a write
// that lowers usage, or keeps it, passes even over the cap).
Status CheckQuota(const json::object& frq, const QuotaUsage& before, const QuotaUsage& after);

// status.overallUsed of `frq` for the namespace's `used`: each resource of
// spec.overall the federation counts, as a quantity.
json::object OverallUsed(const json::object& frq, const QuotaUsage& used);

}  // namespace flotilla::api::policy
