// The federated StatefulSet controller (seed 002, primary design;
// docs/federation.md, "Federated StatefulSets"): a StatefulSet created on
// the federation becomes one local StatefulSet per chosen cluster, named
// <name>-<cluster> (identities.h), so that its pods <name>-<cluster>-<n>
// are unique across the federation; its replicas are partitioned without
// ever moving one (partition.h); a new template is rolled out one cluster
// at a time as for Deployments (common/rollout.h; OnDelete: every cluster
// at once).
//
// A Strategy of the common reconciler (fan-out, cluster selector, deletion
// of the local StatefulSets by the propagation policy). One check, besides:
// - partitions the replicas over the joined clusters the selector admits:
//   ready ones may grow and shrink; unreachable ones keep the share they
//   had (read back from the breakdown annotation), so their replicas are
//   not recreated elsewhere; clusters whose <name>-<cluster> would exceed
//   52 characters get nothing (Warning NameTooLong);
// - keeps ControllerRevisions of the federated template on the federation
//   (runtime/controller_history.h), so `kubectl rollout history|undo
//   sts/NAME` work there;
// - writes onto the governing Service (spec.serviceName) on the federation
//   the annotations federation.kubernetes.io/statefulset-lb-needed and
//   federation.kubernetes.io/stateful-replica-list (every pod's name);
// - with statefulset-lb-needed "true", keeps one Service of type
//   LoadBalancer per pod on the federation, named as the pod, placed in
//   the pod's cluster only (federation.kubernetes.io/cluster) and owned by
//   the StatefulSet; deletes those of pods that went;
// - writes the status and the breakdown annotation (status.h), and the
//   rollout events.
// Deletion: the per-pod Services and the ControllerRevisions go with the
// StatefulSet, whatever the policy.
//
// Thread-safe; time runs on the context's clock.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/federated.h"
#include "api/views.h"
#include "base/mutex.h"
#include "client/resources.h"
#include "federation/common/context.h"
#include "federation/common/placer.h"
#include "federation/common/reconciler.h"
#include "federation/common/rollout_events.h"
#include "planner/planner.h"
#include "runtime/controller_history.h"

namespace flotilla::federation::statefulset {

using client::kStatefulSets;

class StatefulSetController : public Strategy {
 public:
  static constexpr char kName[] = "statefulset";

  // Registers the reconciler and the handlers with `ctx`, which must
  // outlive it.
  StatefulSetController(FederationContext& ctx, WorkloadOptions options);

  const client::ResourceRef& resource() const override { return kStatefulSets; }
  std::string kind() const override { return "StatefulSet"; }
  std::string CopyName(const json::object& obj, const std::string& cluster) const override;
  std::string_view PreferencesAnnotation() const override {
    return api::kStatefulSetPreferencesAnnotation;
  }
  std::optional<Demand> DemandOf(const json::object& obj) const override {
    api::WorkloadView v(obj);
    return Demand{.replicas = v.replicas(), .pod_template = v.pod_template()};
  }
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
  static State& StateOf(Check& check);
  // Every admitted cluster's share: by `prefs`, or, when null (a
  // Duplicated policy), all the replicas in each.
  planner::ReplicaCounts Partition(Check& check, State& state, const planner::Preferences* prefs);
  Status SyncServices(Check& check, const State& state);
  Status WriteStatus(Check& check, const State& state, const std::string& update_revision);
  // The per-pod Services of `sts`: those it controls, and those an
  // orphaning delete of it left without owner.
  std::vector<runtime::ObjectPtr> LoadBalancers(const json::object& sts) const;
  void EnqueueServiceOwners(const json::object& svc);

  FederationContext& ctx_;
  const WorkloadOptions options_;
  runtime::Informer& services_;   // on the federation
  runtime::Informer& revisions_;  // ControllerRevisions on the federation
  runtime::ControllerHistory history_;
  std::optional<Reconciler> reconciler_;
  std::optional<RolloutReporter> rollout_events_;
  // Each StatefulSet's shares as this process last decided them: what a
  // cluster holds, before the status annotation (the cache of the
  // federated object may not show this process's last write yet).
  Mutex mu_;
  std::map<std::string, planner::ReplicaCounts> decided_ GUARDED_BY(mu_);
};

}  // namespace flotilla::federation::statefulset
