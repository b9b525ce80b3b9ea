// The federated PodDisruptionBudget controller (docs/federation.md,
// "Federated PodDisruptionBudgets"). A budget speaks of pods, and the
// federation's pods are in its members, so each cluster gets a budget for
// its share of the selected pods, and each member enforces its own (its
// eviction subresource and disruption controller):
// - a cluster's share is the replicas there of the workloads whose pod
//   template the budget selects (the members' Deployments, StatefulSets and
//   ReplicaSets that no Deployment owns, as their caches have them);
//   a cluster without any gets no copy (a managed one is deleted);
// - an integer minAvailable is divided in proportion to the shares,
//   rounding up (every cluster keeps at least its part, so the whole holds);
//   an integer maxUnavailable is divided in proportion too, by largest
//   remainder, so the clusters' allowances sum to it exactly (a cluster may
//   get 0: nothing there may be disrupted); a percentage is kept as is (it
//   means the same of every part);
// - the federated status sums the copies' currentHealthy, desiredHealthy,
//   expectedPods and disruptionsAllowed (each member enforces its share, so
//   the federation-wide allowance is their sum), with the DisruptionAllowed
//   condition; observedGeneration is the federated generation once every
//   copy has what the federation wants and its member observed it.
// Placement, override policies and deletion are the reconciler's
// (common/reconciler.h). A change of a member's workloads re-checks the
// budgets of its namespace.
//
// Thread-safe; time runs on the context's clock.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "federation/sync/copy_strategy.h"

namespace flotilla::federation::disruption {

class DisruptionBudgetController : public sync::CopyStrategy {
 public:
  static constexpr char kName[] = "disruption";

  // Registers the reconciler with `ctx`, which must outlive it.
  DisruptionBudgetController(FederationContext& ctx, const WorkloadOptions& options);

  std::vector<client::ResourceRef> MemberReads() const override;
  Status Plan(Check& check) override;
  StatusOr<runtime::Result> Finish(Check& check) override;

 private:
  // The replicas in `cluster` of the workloads whose pods `pdb` selects.
  int64_t ShareIn(const std::string& cluster, const json::object& pdb) const;
};

// Divides a budget's spec over clusters holding `shares` of its pods (by
// cluster; every share above 0): the spec each gets.
std::map<std::string, json::object> DivideSpec(const json::object& spec,
                                               const std::map<std::string, int64_t>& shares);

// The federated status from the copies' (null: none yet), with the
// DisruptionAllowed condition as of `now`; `observed`: every copy is as
// wanted and observed, so observedGeneration is the federated generation.
json::object AggregateStatus(const json::object& pdb,
                             const std::vector<const json::object*>& copies, bool observed,
                             TimePoint now);

}  // namespace flotilla::federation::disruption
