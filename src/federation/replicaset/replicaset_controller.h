// The federated ReplicaSet controller (seed 000): a ReplicaSet created on
// the federation is spread over the member clusters by its preferences, as
// local ReplicaSets of the same name and namespace, watched, and moved when
// a cluster fails or runs out of room. docs/federation.md.
//
// A WorkloadStrategy (common/workload_strategy.h) of the common reconciler
// (common/reconciler.h), which does the fan-out, the cluster selector,
// take-overs and deletion; the placement is the shared ReplicaPlacer's
// (common/placer.h). Shadow ReplicaSets (those with
// federation.kubernetes.io/shadow-replicaset, made by the federated
// Deployment controller) are not placed: they never write to a member.
//
// Work-queue layout (seed 000, "Goroutines layout"): a federated ReplicaSet
// that changes is checked at once; a change of one of its local ReplicaSets
// or of their pods checks it after `member_change_delay`; a cluster that
// becomes ready, stops being ready, leaves, changes labels or whose caches
// have just synced checks every federated ReplicaSet at once; one that is
// not in its desired state is checked again after `recheck_delay`.
//
// One check (the seed's DoFrsCheck), for the clusters that are Ready, whose
// caches have synced and that the cluster selector admits:
// - estimates capacities from the pods that wait too long and plans the
//   replicas (the placer);
// - creates missing local ReplicaSets first; a cluster that rejects the
//   create gets nothing until the retry after `recheck_delay` and the plan
//   is made again without it ([E1]);
// - updates local ReplicaSets whose replicas, template or metadata differ,
//   restoring ones edited by hand and taking over a same-named one the
//   federation did not create when it places replicas there ([E2], with a
//   Warning event); deleted ones are created again ([E4]) with the share
//   they had; pods that match are adopted by the member's ReplicaSet
//   controller ([E3]);
// - writes the summed status, the per-cluster breakdown annotation
//   (status.h) and, when the placement changes, an Event.
//
// Thread-safe; time runs on the context's clock.
#pragma once

#include <string>
#include <vector>

#include "federation/common/workload_strategy.h"

namespace flotilla::federation::replicaset {

// True for a shadow of a federated Deployment's pod template.
bool IsShadow(const json::object& rs);

class ReplicaSetController : public WorkloadStrategy {
 public:
  static constexpr char kName[] = "replicaset";

  // Registers the reconciler and the member handlers with `ctx`, which must
  // outlive it.
  ReplicaSetController(FederationContext& ctx, WorkloadOptions options);

  const client::ResourceRef& resource() const override { return kReplicaSets; }
  std::string kind() const override { return "ReplicaSet"; }
  std::vector<client::ResourceRef> MemberReads() const override {
    return WithApplicationReads({kPods});
  }
  bool Federates(const json::object& obj) const override { return !IsShadow(obj); }
  Status Plan(Check& check) override;
  bool UpToDate(const Copy& c) const override;
  json::object Updated(const Copy& c) const override;
  StatusOr<runtime::Result> Finish(Check& check) override;

 private:
  void PodsOf(const std::string& cluster, const json::object& local,
              WorkloadInCluster& w) const override;
  json::object DesiredCopy(const Check& check, size_t i, int64_t replicas) const override;
  void EnqueueOwner(const runtime::ObjectPtr& pod);
  Status WriteStatus(Check& check);
};

}  // namespace flotilla::federation::replicaset
