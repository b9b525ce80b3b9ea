// `flotilla plan` with a propagation policy (docs/planner.md, "With a
// policy"): the what-if of where a policy would place a workload's
// replicas, offline. A case line is the planner's (planner/plan_case.h)
// plus
//   "policy": a PropagationPolicy or ClusterPropagationPolicy object, as
//             applied (defaulted and validated as the server does);
//   "clusterObjects": {NAME: a Cluster object}, optional, for the
//             clusters' labels, provider, region, zones and taints (as
//             `kubectl get clusters -o json` prints them; a cluster
//             without one has a name and nothing else).
// The policy's cluster affinity (its first cluster-affinity group when it
// has groups) and its tolerations of NoSchedule/NoExecute taints choose
// the admitted clusters among "clusters"; a Duplicated policy gives each
// of them all the replicas, a Divided one divides them with the planner
// by the policy's preferences (policies.h: DivisionPreferences; the
// case's "capacity" is each cluster's room, its "current" what it runs).
// "preferences" is not allowed with "policy" (the policy says them).
// With explain the result also has "policy": its name and, per cluster of
// the case, whether it is admitted and why not.
//
// Pure.
#pragma once

#include "base/json.h"
#include "base/status.h"

namespace flotilla::federation::overview {

// Whether a case line names a policy.
bool HasPolicy(const json::object& doc);

// The result line of a case with a policy, or the error of one that cannot
// be read (an Invalid naming the field: "policy.spec.placement...").
StatusOr<json::object> RunPolicyPlanCase(json::object doc, bool explain);

}  // namespace flotilla::federation::overview
