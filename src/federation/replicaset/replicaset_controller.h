// The federated ReplicaSet controller (seed 000): a ReplicaSet created on
// the federation is spread over the member clusters by its preferences, as
// local ReplicaSets of the same name and namespace, watched, and moved when
// a cluster fails or runs out of room. docs/federation.md.
//
// A Strategy of the common reconciler (common/reconciler.h), which does the
// fan-out, the cluster selector, take-overs and deletion; the placement is
// the shared ReplicaPlacer's (common/placer.h). Shadow ReplicaSets (those
// with federation.kubernetes.io/shadow-replicaset, made by the federated
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

#include "federation/common/context.h"
#include "federation/common/placer.h"
#include "federation/common/reconciler.h"

namespace flotilla::federation::replicaset {

// True for a shadow of a federated Deployment's pod template.
bool IsShadow(const json::object& rs);

class ReplicaSetController : public Strategy {
 public:
  static constexpr char kName[] = "replicaset";

  // Registers the reconciler and the member handlers with `ctx`, which must
  // outlive it.
  ReplicaSetController(FederationContext& ctx, WorkloadOptions options);

  const client::ResourceRef& resource() const override { return kReplicaSets; }
  std::string kind() const override { return "ReplicaSet"; }
  std::vector<client::ResourceRef> MemberReads() const override { return {kPods}; }
  bool Federates(const json::object& obj) const override { return !IsShadow(obj); }
  Status Plan(Check& check) override;
  bool Replan(Check& check) override;
  bool UpToDate(const Copy& c) const override;
  json::object Updated(const Copy& c) const override;
  Unmanaged OnUnmanaged(const Copy& c) const override;
  bool MustReplace(const Copy& c) const override;
  std::string Detail(const Copy& c) const override;
  StatusOr<runtime::Result> Finish(Check& check) override;
  void Forget(const std::string& key) override { placer_.Forget(key); }

 private:
  struct State;
  void EnqueueOwner(const runtime::ObjectPtr& pod);
  void SetDesired(Check& check, const State& state) const;
  Status WriteStatus(Check& check, const State& state);

  FederationContext& ctx_;
  const WorkloadOptions options_;
  ReplicaPlacer placer_;
  Reconciler reconciler_;
};

}  // namespace flotilla::federation::replicaset
