// Applications: where coupled applications run (seed 003, location
// affinity; docs/federation.md, "Applications"). Federated Deployments and
// ReplicaSets of one namespace with the same federation.kubernetes.io/
// application label form an application; its class (annotation
// federation.kubernetes.io/location-affinity, agreed at admission) is
// strictly-decoupled (the default: the workloads are placed one by one, as
// without the label), preferentially-coupled or strictly-coupled. A coupled
// application runs whole in one cluster, its home:
//
// - Room. A cluster has room for an application when the allocatable cpu,
//   memory and pods of its Ready, schedulable nodes, minus the requests of
//   the pods bound there, minus what other applications have reserved
//   there, covers what all the application's replicas request (its own
//   bound pods count as its room where it runs). A cluster where the
//   federation places an application reserves what that application's
//   pods do not yet hold there, until they are bound: two applications
//   never count the same room. The estimate sums over nodes: it does not
//   see that a pod may fit no single node.
// - Choice. The clusters every workload's cluster selector and preferences
//   admit (an entry for the cluster or "*" with weight > 0 or minReplicas >
//   0, and maxReplicas, if any, at least its replicas), that are neither
//   cordoned nor where an application named by federation.kubernetes.io/
//   anti-affinity runs, nor in one of that cluster's zones; of these the
//   one with room and the highest weight (summed over the workloads), ties
//   broken by the planner's hash of cluster and application. None with
//   room: the application stays where it is, or stays unplaced, and says
//   so (LocationAffinity condition, reason NoClusterWithRoom).
// - Moves. A preferentially coupled application moves when its home fails
//   (at once: there is nothing to keep), and, make-before-break, when its
//   home stops being admitted, has no room left for it (it grew, or a pod
//   of it waited longer than the unschedulable threshold for a node), or an
//   application it must avoid came there, or it is drained (a drain moves
//   strictly coupled applications too): the destination is reserved,
//   every workload gets all its replicas there as well, and once all of
//   them are available there the home gives its replicas up. A move not
//   done within `migration_timeout` is rolled back (the destination is not
//   tried again for as long) with a Warning MigrationRolledBack. Moves that
//   are neither failovers nor drains wait for the daily window of
//   federation.kubernetes.io/migration-window ("02:00-04:00", UTC) when a
//   workload has one.
// - A strictly coupled application is never moved by the federation: when
//   its home fails, its workloads get a Warning ManualMigrationRequired and
//   the condition says so. federation.kubernetes.io/migrate-to: CLUSTER on
//   a workload (`kubectl flotilla migrate`) moves any coupled application
//   there, make-before-break, window or not.
//
// What is remembered of an application that is gone or no longer coupled
// (its reservations) is dropped at the next decision of another one.
// The home and a move in progress are remembered by this process; after a
// restart the home is the cluster where the workloads' copies hold the
// most replicas (a move in progress then starts again from there).
//
// Thread-safe: one mutex orders every decision, so that reservations are
// consistent.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/resources.h"
#include "base/clock.h"
#include "base/json.h"
#include "base/mutex.h"
#include "federation/common/context.h"
#include "federation/common/coupled.h"

namespace flotilla::federation {

struct ApplicationOptions {
  // How long a move may take before it is rolled back.
  Duration migration_timeout = std::chrono::minutes(10);
  // When an application that found no cluster with room looks again.
  Duration recheck_delay = std::chrono::minutes(1);
  // A preferentially coupled application whose pods waited longer than
  // this for a node where it runs moves (--unschedulable-threshold).
  Duration unschedulable_threshold = std::chrono::minutes(1);
};

// Parses a migration window "HH:MM-HH:MM" (UTC; the end may be before the
// start: the window spans midnight) into minutes of the day [start, end).
StatusOr<std::pair<int, int>> ParseMigrationWindow(std::string_view text);
// When the window next opens at or after `now`; `now` when it is open.
TimePoint NextWindowOpen(std::pair<int, int> window, TimePoint now);

class Applications : public CoupledPlacer {
 public:
  // `ctx` must outlive it. Registers a node informer in every member.
  // REQUIRES: before ctx.Start().
  Applications(FederationContext& ctx, ApplicationOptions options);
  ~Applications() override;
  Applications(const Applications&) = delete;
  Applications& operator=(const Applications&) = delete;

  void AddKind(const client::ResourceRef& resource, const std::string& kind,
               std::string preferences_annotation,
               std::function<void(const std::string& key)> enqueue) override;
  std::optional<CoupledPlacement> Place(const json::object& obj, TimePoint now) override;

  // An application's state, for tests and status: its home ("" when none)
  // and the destination of its move ("" when none).
  std::pair<std::string, std::string> HomeOf(const std::string& ns, const std::string& app);

  // True when `obj` belongs to a coupled application.
  static bool Coupled(const json::object& obj);

 private:
  struct Kind {
    client::ResourceRef resource;
    std::string kind;
    std::string preferences_annotation;
    std::function<void(const std::string&)> enqueue;
  };
  struct Workload;
  struct Cluster;
  struct App;
  std::vector<Workload> WorkloadsOf(const std::string& ns, const std::string& app) const;
  // The ready clusters whose caches have synced, as `workloads` see them;
  // `unknown` gets the ready ones whose caches have not.
  std::map<std::string, Cluster> ClustersFor(const std::string& app_key,
                                             const std::vector<Workload>& workloads, TimePoint now,
                                             std::vector<std::string>& unknown) const REQUIRES(mu_);
  // The clusters where the workloads of application `app` in `ns` have
  // replicas, by this process's memory and by the members' caches.
  std::vector<std::string> WhereRuns(const std::string& ns, const std::string& app) const
      REQUIRES(mu_);
  // Anti-affinity: marks avoided the clusters where application `avoid`
  // (in `ns`) runs, and the clusters that share a zone with them.
  void MarkAvoided(const std::string& ns, const std::string& avoid,
                   std::map<std::string, Cluster>& clusters) const REQUIRES(mu_);
  // The zones of cluster `name` (status.zones), none when it has no Cluster.
  std::vector<std::string> ZonesOf(const std::string& name) const;
  // Where an application runs, whether it moves, what it reserves
  // (applications.cc).
  class Decision;
  void Record(const std::vector<Workload>& workloads, std::string_view type,
              const std::string& reason, const std::string& message);
  void EnqueueAll(const std::vector<Workload>& workloads) const;

  FederationContext& ctx_;
  const ApplicationOptions options_;
  std::vector<Kind> kinds_;
  Mutex mu_;
  std::map<std::string, App> apps_ GUARDED_BY(mu_);  // by "ns/app"
};

}  // namespace flotilla::federation
