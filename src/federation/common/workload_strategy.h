// WorkloadStrategy: what the strategies of federated workloads that place
// replicas (ReplicaSets, Deployments; StatefulSets next) share on top of the
// reconciler (reconciler.h) and the placer (placer.h). A check:
//   Plan:  the preferences from the kind's annotation (an invalid one: a
//          Warning InvalidPreferences and nothing done), the placement from
//          what each admitted cluster's managed local object and its pods
//          show, and the desired local object per cluster (created only
//          where it gets replicas, and not while a refused create waits for
//          its retry);
//   Replan after refused creates: those clusters get nothing until the
//          retry ([E1]);
//   take-overs only where replicas go ([E2]), replacing an object whose
//          selector differs (selectors are immutable);
//   Finish: PlacementChanged, the kind's status, and the next check: after
//          recheck_delay while a cluster's local object has not got all its
//          replicas ready, or pods wait, or a create waits; sooner when a
//          waiting pod crosses the threshold.
// Moves are make-before-break unless a cluster failed: a copy whose
// target fell keeps its available replicas beyond the target while other
// copies lack available ones (HoldMoves), so the workload's available
// replicas do not drop while its replicas move (a drain, a cordon, a
// changed selector or preference, a rebalance).
// A workload of a coupled application (coupled.h, when the options name a
// CoupledPlacer: the federation's Applications) gets what the application's
// placement gives it, a LocationAffinity condition saying where the
// application runs, and loses its local objects elsewhere; the copy a move
// is leaving is kept even where the selector no longer admits it.
// While a federated HPA scales the workload (hpa_target.h), the HPA's
// clusters replace the placement: each keeps the replicas its local object
// has (its local HPA sets them; at least 1, an HPA does not scale from 0),
// gets a local object with 1 where it has none, and the other clusters'
// local objects are deleted; nothing is rebalanced, and spec.replicas
// follows the sum of the local objects' (FollowLocalReplicas).
// The kind says where its pods are, what its local object is, and writes
// its status.
//
// Thread-safe as the reconciler calls it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/views.h"
#include "federation/common/context.h"
#include "federation/common/coupled.h"
#include "federation/common/hpa_target.h"
#include "federation/common/placer.h"
#include "federation/common/reconciler.h"

namespace flotilla::federation {

// What a check of a workload decided; a kind's check state derives from it.
struct WorkloadPlan {
  virtual ~WorkloadPlan() = default;
  bool invalid = false;  // preferences that do not parse: nothing is done
  planner::Preferences prefs;
  int64_t replicas = 0;
  PlacementResult placement;
  // A propagation policy runs every replica in every admitted cluster
  // (Duplicated): the placer's counts are replaced.
  bool duplicated = false;
  // The clusters of the federated HPA that scales it; none: the placer's.
  std::optional<HpaTargetList> hpa;
  // Where its coupled application runs (coupled.h); none: the
  // placer's (or the HPA's, which comes first).
  std::optional<CoupledPlacement> coupled;
  // Make-before-break: per copy, the available replicas beyond its target
  // that it keeps while other clusters lack theirs; and how many of the
  // targets' replicas are not available yet.
  std::vector<int64_t> held;
  int64_t unavailable = 0;
};

// Make-before-break for the placer's moves: sets plan.held (a copy whose
// target fell keeps the replicas it has available, as many as the other
// copies' targets lack available ones) and plan.unavailable (a full
// cluster's shortfall counted up to its estimated capacity). Nothing is
// held under an HPA or for a coupled application.
void HoldMoves(const Check& check, WorkloadPlan& plan);

class WorkloadStrategy : public Strategy {
 public:
  bool Replan(Check& check) override;
  Unmanaged OnUnmanaged(const Copy& c) const override;
  bool MustReplace(const Copy& c) const override;
  std::string Detail(const Copy& c) const override;
  bool KeepNotAdmitted(const Check& check, const std::string& cluster) const override;
  void Forget(const std::string& key) override { placer_.Forget(key); }
  std::string_view PreferencesAnnotation() const override { return preferences_annotation_; }
  std::optional<Demand> DemandOf(const json::object& obj) const override {
    api::WorkloadView v(obj);
    return Demand{.replicas = v.replicas(), .pod_template = v.pod_template()};
  }

 protected:
  // `kind` labels the metrics; the annotations hold the preferences and the
  // breakdown (whose "planned" the placer reads back).
  WorkloadStrategy(FederationContext& ctx, WorkloadOptions options, const std::string& kind,
                   std::string preferences_annotation, std::string breakdown_annotation);

  // Builds the reconciler. REQUIRES: called once, from the derived
  // constructor's body (the strategy must be complete). `copy_change_delay`
  // is how long after a change of a local object its workload is checked.
  void StartReconciler(const std::string& name, Duration copy_change_delay);
  Reconciler& reconciler() { return *reconciler_; }
  // `reads`, and the members' Nodes when coupled applications are placed
  // (by the clusters' free capacity): a check then waits for those caches
  // as for its own, and does not place a new application while the
  // cluster it prefers is still listing its nodes.
  std::vector<client::ResourceRef> WithApplicationReads(
      std::vector<client::ResourceRef> reads) const;

  // Places the replicas into `plan` and stores it as the check's state;
  // false when the preferences are invalid.
  bool Place(Check& check, std::shared_ptr<WorkloadPlan> plan);
  // The plan Place stored.
  static WorkloadPlan& PlanOf(Check& check);
  static const WorkloadPlan& PlanOf(const Check& check);
  // Sets whether to create every copy, and its desired object where there
  // is one or one is to be created (elsewhere none).
  void SetDesired(Check& check) const;
  // The PlacementChanged event, if the placement changed.
  void Settle(const Check& check);
  // When to check again.
  runtime::Result NextCheck(const Check& check) const;
  // Sets the LocationAffinity condition of a coupled workload in the
  // `status` it writes (removes it from a workload that is not).
  void SetAffinityCondition(const Check& check, json::object& status) const;
  // While a federated HPA scales the workload: spec.replicas becomes the
  // sum of the local objects' (written when it differs; check.obj() is then
  // the written object).
  Status FollowLocalReplicas(Check& check);

  // The pods in `cluster` of `local`, the managed local object of a copy
  // (not being deleted) as seen: into w.pods, and into w.outgoing_pods the
  // ones it is replacing (placer.h).
  virtual void PodsOf(const std::string& cluster, const json::object& local,
                      WorkloadInCluster& w) const = 0;
  // The local object copy `i` should be, with `replicas`.
  virtual json::object DesiredCopy(const Check& check, size_t i, int64_t replicas) const = 0;

  FederationContext& ctx_;
  const WorkloadOptions options_;
  ReplicaPlacer placer_;

 private:
  // The HPA's clusters replace the placement's targets.
  void FollowHpa(const Check& check, WorkloadPlan& plan) const;
  // The application's clusters replace the placement's targets.
  static void FollowApplication(const Check& check, WorkloadPlan& plan);
  // The preferences of the propagation policy that places the workload
  // (policies.h: DivisionPreferences); sets plan.duplicated for a
  // Duplicated policy.
  planner::Preferences PolicyPreferences(const Check& check, WorkloadPlan& plan) const;
  // Duplicated: every admitted cluster gets all the replicas (a cordoned one
  // at most what it holds, a draining one none unless no other admitted
  // cluster runs them).
  static void FollowDuplicated(const Check& check, WorkloadPlan& plan);

  const std::string preferences_annotation_;
  const std::string breakdown_annotation_;
  std::optional<Reconciler> reconciler_;
};

}  // namespace flotilla::federation
