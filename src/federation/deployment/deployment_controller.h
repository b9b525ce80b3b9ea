// The federated Deployment controller (seed 001; docs/federation.md,
// "Federated Deployments"): a Deployment created on the federation gets a
// local Deployment of the same name in each planned cluster, with the
// replicas the shared placer gives it (exactly as a federated ReplicaSet,
// with the preferences in federation.kubernetes.io/deployment-preferences),
// and its pod template rolled out one cluster at a time (rollout.h), while
// shadow ReplicaSets on the federation (shadows.h) and the Deployment's own
// status (status.h) let `kubectl rollout status|history|undo|pause|resume|
// restart` work on the federation unchanged.
//
// A Strategy of the common reconciler (fan-out, cluster selector,
// take-overs, deletion of the local Deployments by the propagation policy).
// One check, besides what the reconciler does:
// - places the replicas (the placer: capacity from pods that wait too long,
//   failover, [E1] retries) and gives every local Deployment its count at
//   once, whatever the rollout;
// - decides which clusters get the federation's template now (rollout.h);
//   the others keep the template they run; paused is copied;
// - keeps the shadows: the current template's is created (or found, or
//   recreated after a delete), an old one that becomes current again gets a
//   new revision, edits to shadows are overwritten, their counts are the
//   members' sums, and once the rollout is complete old shadows beyond
//   revisionHistoryLimit that hold no replicas are deleted; never anything
//   in a member. A hash collision with another ReplicaSet of the name bumps
//   status.collisionCount, as Kubernetes does;
// - writes deployment.kubernetes.io/revision, the breakdown annotation and
//   the status, and Events: PlacementChanged, RolloutStarted (a cluster gets
//   the template), RolloutCompleted (a cluster finished), RolloutFailed (a
//   cluster passed its progress deadline: the update stops there).
// A change of a local Deployment re-checks at once (the next cluster starts
// as soon as the previous one finishes); changes of local ReplicaSets and
// pods after member_change_delay; a change of a shadow at once.
// Deletion: the shadows go (never anything in a member), then the
// finalizer.
//
// Thread-safe; time runs on the context's clock.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "federation/common/rollout_events.h"
#include "federation/common/workload_strategy.h"
#include "federation/deployment/rollout.h"
#include "federation/deployment/shadows.h"

namespace flotilla::federation::deployment {

class DeploymentController : public WorkloadStrategy {
 public:
  static constexpr char kName[] = "deployment";

  // Registers the reconciler and the handlers with `ctx`, which must
  // outlive it.
  DeploymentController(FederationContext& ctx, WorkloadOptions options);

  const client::ResourceRef& resource() const override { return kDeployments; }
  std::string kind() const override { return "Deployment"; }
  std::vector<client::ResourceRef> MemberReads() const override {
    return WithApplicationReads({kReplicaSets, kPods});
  }
  // Override policies are applied here, not by the reconciler: a cluster's
  // rollout compares its template with the federation's as overridden for
  // it, and a cluster not yet due for a new template keeps its own.
  bool TakesOverrides() const override { return false; }
  Status Plan(Check& check) override;
  bool UpToDate(const Copy& c) const override;
  json::object Updated(const Copy& c) const override;
  StatusOr<runtime::Result> Finish(Check& check) override;
  StatusOr<bool> Finalize(const json::object& obj) override;
  void Forget(const std::string& key) override;

 private:
  // What one check knows between Plan and Finish.
  struct State : WorkloadPlan {
    RolloutPlan rollout;
  };
  // The shadows after a check's writes.
  struct Shadows {
    std::string current;   // the current template's shadow
    std::string revision;  // its revision
    // the revision of each shadow's template, to name what a cluster runs
    std::vector<std::pair<json::object, std::string>> templates;
  };
  // The managed local Deployment a copy holds after this check's writes.
  static const json::object* ManagedLocal(const Copy& c) {
    return c.Managed() ? c.Current() : nullptr;
  }
  // The pods of the local Deployment's ReplicaSets: those of its template
  // are its pods, the others' are outgoing.
  void PodsOf(const std::string& cluster, const json::object& local,
              WorkloadInCluster& w) const override;
  json::object DesiredCopy(const Check& check, size_t i, int64_t replicas) const override;
  // Federation ReplicaSets that may be shadows of `d`.
  std::vector<runtime::ObjectPtr> Candidates(const json::object& d) const;
  StatusOr<Shadows> SyncShadows(Check& check, const State& state);
  // The members' local ReplicaSets (of the managed local Deployments)
  // summed per shadow: `current` (d's template) and `old`.
  std::map<std::string, ShadowCounts> LocalCounts(const Check& check, const std::string& current,
                                                  const std::vector<runtime::ObjectPtr>& old) const;
  Status WriteStatus(Check& check, const State& state, const Shadows& shadows);

  // Event handlers.
  void EnqueueFromLocalReplicaSet(const json::object& rs);
  void EnqueueFromPod(const std::string& cluster, const json::object& pod);

  runtime::Informer& replicasets_;  // on the federation: the shadows
  std::optional<RolloutReporter> rollout_events_;
};

}  // namespace flotilla::federation::deployment
