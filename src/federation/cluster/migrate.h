// Moving a coupled application to another cluster by hand, and draining a
// cluster.
//
// Migrate: what `kubectl
// flotilla migrate APP -n NS --to CLUSTER` does (docs/federation.md,
// "Applications"), the seed's manual migration. The federation's
// Applications do the moving (make-before-break); this asks for it and
// follows it:
//  1. the application's federated Deployments and ReplicaSets get
//     federation.kubernetes.io/migrate-to: CLUSTER;
//  2. the workloads are started whole in CLUSTER (LocationAffinity
//     condition reason Migrating) while the original runs on;
//  3. once every workload is available there, the original copies are
//     deleted (the condition says the application runs in CLUSTER and no
//     other cluster is planned any replica); the federation's DNS answers
//     from the clusters with ready endpoints, so from CLUSTER only from
//     then on;
//  4. the annotation is removed: the application stays where it now runs.
// A rollback (Warning MigrationRolledBack: not available within the
// federation's --migration-timeout) or the caller's timeout ends it with an
// error, the annotation removed.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "client/client.h"

namespace flotilla::federation::cluster {

struct MigrateOptions {
  std::string ns, app, to;
  bool dry_run = false;
  Duration timeout = std::chrono::minutes(15);
  Duration poll = std::chrono::seconds(1);
  Clock* clock = nullptr;  // null: the real clock
  // Each step, as it happens ("workloads: Deployment web, ReplicaSet db").
  std::function<void(const std::string&)> report;
};

// NotFound when the application has no workload or the Cluster does not
// exist; BadRequest when the application is not coupled; Timeout or
// Conflict (rolled back) when the move did not finish.
Status Migrate(client::Client& fed, const MigrateOptions& opts);

struct DrainOptions {
  std::string cluster;
  Duration timeout = std::chrono::minutes(15);
  Duration poll = std::chrono::seconds(1);
  Clock* clock = nullptr;  // null: the real clock
  std::function<void(const std::string&)> report;
};

struct DrainResult {
  // What stays in the cluster, and why ("StatefulSet shop/db (2 replicas):
  // stateful replicas keep their cluster").
  std::vector<std::string> left;
};

// `kubectl flotilla drain CLUSTER`: marks the Cluster draining (and
// cordoned), then waits until no federated Deployment or ReplicaSet has
// replicas planned there (by their breakdown annotations), reporting each
// as it moves off. StatefulSets and workloads a federated HPA scales stay
// and are listed. NotFound when there is no such Cluster; Timeout naming
// what has not moved.
StatusOr<DrainResult> Drain(client::Client& fed, const DrainOptions& opts);

}  // namespace flotilla::federation::cluster
