// ResourceQuota as Kubernetes evaluates it (docs/member.md, "Resource
// quotas"): what an object charges against a quota (the evaluators of
// kube's quota/v1/evaluator/core and its generic object-count evaluator),
// which quotas match it (spec.scopes and spec.scopeSelector), the pod
// constraints ("must specify") and the refusal of a create that would take
// usage above spec.hard. The API server's admission and the member's quota
// controller both count with these. Pure functions; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace flotilla::api {

// Usage by quota resource name ("requests.cpu", "pods",
// "count/deployments.apps"), in milli-units.
using QuotaUsage = std::map<std::string, int64_t>;

// The resource whose objects a quota resource name counts.
struct CountedResource {
  std::string group, plural;
  bool operator==(const CountedResource&) const = default;
};

// Which objects `name` counts: pods for the compute names ("cpu",
// "requests.memory", "limits.cpu", "pods", ...), services for "services",
// "services.loadbalancers" and "services.nodeports", claims for
// "persistentvolumeclaims", "requests.storage" and the per-class names,
// and <plural>.<group> for "count/<plural>.<group>" ("count/<plural>" for
// the core group). nullopt for a name Flotilla does not count (extended
// resources, hugepages).
std::optional<CountedResource> CountedBy(std::string_view name);

// What `obj`, an object of group/plural, charges: a pod its requests and
// limits (as podComputeUsageHelper) and 1 for "pods" and "count/pods",
// nothing once it has Succeeded or Failed; a service, a claim or any other
// object 1 for its count names, plus what its type or size adds.
QuotaUsage ObjectUsage(std::string_view group, std::string_view plural, const json::object& obj);

// Whether `quota` counts `obj` of group/plural at all: a quota with scopes
// (spec.scopes, spec.scopeSelector) counts only the pods they match.
bool QuotaMatches(const json::object& quota, std::string_view group, std::string_view plural,
                  const json::object& obj);

// The pod constraints: when `quota` limits cpu or memory (requests or
// limits), every container of `pod` must ask for it. Forbidden as
// Kubernetes words it: "failed quota: NAME: must specify limits.cpu for:
// app; requests.memory for: app,side".
Status CheckPodConstraints(const json::object& quota, const json::object& pod);

// Refuses (Forbidden: "exceeded quota: NAME, requested: pods=1, used:
// pods=2, limited: pods=2", the names in order) `requested` on top of
// `used` where it takes a name of the quota's spec.hard above its limit.
Status CheckQuota(const json::object& quota, const QuotaUsage& used, const QuotaUsage& requested);

// ValidateResourceQuotaSpec's checks of a resource list at `path`
// ("spec.hard"): each name a standard quota resource or a qualified name
// with a domain, each quantity at least 0 and whole for a count ("pods",
// "count/...").
void ValidateQuotaResourceList(const json::object& list, std::string_view path,
                               std::vector<StatusCause>& out);

// `milli` of quota resource `name` as a quantity ("500m", "2", "1Gi").
std::string FormatQuotaQuantity(std::string_view name, int64_t milli);

// status.used for `quota`: each name of spec.hard with its usage in `used`
// (0 when absent).
json::object UsedList(const json::object& quota, const QuotaUsage& used);

}  // namespace flotilla::api
