// The federated HorizontalPodAutoscaler controller (seed 004, design
// alternative 1; docs/federation.md, "Federated HPAs"): an HPA created on
// the federation becomes a local HPA of the same name in each chosen
// cluster, with the same target reference and metrics and its share of
// minReplicas and maxReplicas (partition.h). The local HPAs do the scaling,
// each on its own cluster's metrics, so autoscaling goes on when the
// federation or a link to it is down; the federation only moves shares.
//
// A Strategy of the common reconciler (fan-out, cluster selector,
// take-overs, deletion of the local HPAs by the propagation policy). One
// check, besides what the reconciler does:
// - reads each admitted ready cluster's local HPA (its shares, replicas and
//   load) and whether the cluster runs the target, and partitions: the
//   chosen clusters get a local HPA with their shares, the others none;
// - remembers the shares it decided and when, so that a cluster whose
//   shares just changed is left alone for `freeze_window` (its local HPA
//   needs a sync or two to act on them), a cache that lags a write is not
//   read as the truth, and a write that lost a race is made again rather
//   than undone; after a restart the local HPAs' own shares are the
//   starting point, and nothing they did is undone;
// - while the target is a federated Deployment or ReplicaSet, writes the
//   chosen clusters on it (hpa_target.h): the target's controller then runs
//   it exactly there and leaves the local replica counts to the local HPAs
//   (Event PlacementByHPA on the target when the list changes);
// - writes the status and the breakdown annotation (status.h) and Events:
//   SharesChanged, MaxReplicasMoved, MinReplicasMoved (with the reason).
// A change of a local HPA checks it after `member_change_delay`; a change of
// its federated target at once. Deletion: the local HPAs go as the
// propagation policy says, then the target's cluster list does, and the
// target's own preferences place it again.
//
// Thread-safe; time runs on the context's clock.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "api/federated.h"
#include "base/mutex.h"
#include "client/resources.h"
#include "federation/common/reconciler.h"
#include "federation/hpa/partition.h"

namespace flotilla::federation::hpa {

using client::kHorizontalPodAutoscalers;

// Settings (flags of `flotilla server`, docs/federation.md).
struct HpaOptions {
  // How long a cluster whose shares changed is left alone.
  Duration freeze_window = std::chrono::seconds(30);
  // A cluster at its floor whose load is under this fraction of the target
  // gives min to busier ones.
  double min_transfer_load = 0.5;
  // How long after a change of a local HPA its federated HPA is checked.
  Duration member_change_delay = std::chrono::seconds(2);
  // How long a ready cluster whose caches have not synced holds the checks
  // back.
  Duration sync_grace = std::chrono::seconds(30);
  int workers = 2;
};

class HpaController : public Strategy {
 public:
  static constexpr char kName[] = "hpa";

  // Registers the reconciler and the handlers with `ctx`, which must
  // outlive it.
  HpaController(FederationContext& ctx, HpaOptions options);

  const client::ResourceRef& resource() const override { return kHorizontalPodAutoscalers; }
  std::string kind() const override { return "HorizontalPodAutoscaler"; }
  std::vector<client::ResourceRef> MemberReads() const override;
  std::string_view PreferencesAnnotation() const override { return api::kHpaPreferencesAnnotation; }
  // The shares are the federation's: an override of a local HPA's bounds
  // would fight the partition (docs/policies.md).
  bool TakesOverrides() const override { return false; }
  Status Plan(Check& check) override;
  bool UpToDate(const Copy& c) const override;
  json::object Updated(const Copy& c) const override;
  std::string Detail(const Copy& c) const override;
  StatusOr<runtime::Result> Finish(Check& check) override;
  StatusOr<bool> Finalize(const json::object& obj) override;
  void Forget(const std::string& key) override;

 private:
  // What the controller remembers of one federated HPA.
  struct Memory {
    std::map<std::string, Bounds> shares;         // cluster -> the shares last decided
    std::map<std::string, TimePoint> changed_at;  // cluster -> when they changed
    std::vector<std::string> not_served;          // the clusters last reported as such
  };
  struct State;
  // What the partition reads of one cluster: its local HPA and its copy of
  // the HPA's target (of `target`, null: a kind not federated), the shares
  // this process last gave it (`memory`), its cordon, and `capacity`, what
  // the target's controller learned it can run.
  HpaCluster ClusterOf(const Check& check, const Copy& c, const client::ResourceRef* target,
                       const Memory& memory, const std::map<std::string, int64_t>& capacity) const;
  // The federated target of `hpa` (a Deployment or ReplicaSet) as cached;
  // null when it targets another kind or it does not exist.
  runtime::ObjectPtr TargetOf(const json::object& hpa, const client::ResourceRef** resource) const;
  Status PlaceTarget(const Check& check, const State& state);
  void Report(const Check& check, const State& state);
  void EnqueueFor(const client::ResourceRef& resource, const json::object& target);

  FederationContext& ctx_;
  const HpaOptions options_;
  runtime::Informer& deployments_;  // on the federation
  runtime::Informer& replicasets_;
  std::optional<Reconciler> reconciler_;

  Mutex mu_;
  std::map<std::string, Memory> memory_ GUARDED_BY(mu_);  // by key
};

}  // namespace flotilla::federation::hpa
