// The federated DaemonSet controller (docs/federation.md, "Federated
// DaemonSets"): a DaemonSet is a per-node thing, so the whole DaemonSet
// goes to every cluster its placement admits (same name; no replicas to
// divide), and:
// - a new template rolls out one cluster at a time as for Deployments
//   (common/rollout.h; the federation.kubernetes.io/cluster-update-order
//   annotation orders the clusters; OnDelete: every cluster at once); a
//   cluster is mid-update until its local DaemonSet observed the template
//   and has it updated and available on every node that should run it;
// - the federated template's ControllerRevisions are kept on the
//   federation (runtime/controller_history.h), so `kubectl rollout
//   history|undo ds/NAME` work there;
// - status: the local DaemonSets' counts summed over the reachable
//   clusters; updatedNumberScheduled counts only the clusters on the
//   federation's template that observed it, and observedGeneration is the
//   federated generation once every local DaemonSet has what the
//   federation wants and observed it, so `kubectl rollout status ds/NAME`
//   waits for the last cluster;
// - the breakdown annotation federation.kubernetes.io/daemonset-status:
//   {"updateRevision": "logs-5d8c7", "clusters": {"a": {"planned": 3,
//     "ready": 3, "updated": 3, "reachable": true, "rollout": "complete"}}}
//   ("planned": the nodes that should run a pod there), with the rollout
//   events.
// Deletion: the ControllerRevisions go with the DaemonSet.
//
// Thread-safe; time runs on the context's clock.
#pragma once

#include <optional>
#include <string>

#include "federation/common/context.h"
#include "federation/common/placer.h"
#include "federation/common/reconciler.h"
#include "federation/common/rollout_events.h"
#include "runtime/controller_history.h"

namespace flotilla::federation::daemonset {

class DaemonSetController : public Strategy {
 public:
  static constexpr char kName[] = "daemonset";

  // Registers the reconciler with `ctx`, which must outlive it.
  DaemonSetController(FederationContext& ctx, const WorkloadOptions& options);

  const client::ResourceRef& resource() const override;
  std::string kind() const override { return "DaemonSet"; }
  // Override policies are applied in Plan: a cluster's rollout compares
  // its template with the federation's as overridden for it.
  bool TakesOverrides() const override { return false; }
  Status Plan(Check& check) override;
  bool UpToDate(const Copy& c) const override;
  json::object Updated(const Copy& c) const override;
  std::string Detail(const Copy& c) const override;
  StatusOr<runtime::Result> Finish(Check& check) override;
  StatusOr<bool> Finalize(const json::object& obj) override;
  void Forget(const std::string& key) override;

 private:
  struct State;

  FederationContext& ctx_;
  runtime::Informer& revisions_;  // ControllerRevisions on the federation
  runtime::ControllerHistory history_;
  std::optional<Reconciler> reconciler_;
  std::optional<RolloutReporter> rollout_events_;
};

// Whether a local DaemonSet's rollout is under way: it has not observed its
// generation, or not every node that should run its pod has the updated
// one available.
bool MidUpdate(const json::object& local);

// The federated status from the local DaemonSets (status in daemonset_
// controller.h); `clusters` per reachable cluster: its local DaemonSet (null:
// none), whether it runs the federation's template, and whether it has
// what the federation wants and observed it.
struct LocalDaemonSet {
  std::string cluster;
  const json::object* local = nullptr;
  bool on_template = false;
  bool observed = false;
  ClusterRollout rollout = ClusterRollout::kComplete;
};
json::object AggregateStatus(const json::object& ds, const std::vector<LocalDaemonSet>& clusters);
std::string BreakdownAnnotation(const std::string& revision,
                                const std::vector<LocalDaemonSet>& clusters);

}  // namespace flotilla::federation::daemonset
