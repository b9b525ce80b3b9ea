// The federation's controllers as `flotilla server` runs them, in process,
// on the API server they serve: a controller manager with the in-process
// client (the admin's credentials) and, for now, the cluster controller and
// the registry of ready clusters the later controllers will subscribe to.
// Its metrics are added to the server's /metrics.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/server.h"
#include "federation/common/cluster_clients.h"
#include "federation/cluster/cluster_controller.h"
#include "federation/replicaset/replicaset_controller.h"
#include "federation/sync/sync_controller.h"
#include "runtime/controller_manager.h"

namespace flotilla::cli {

// The controllers `flotilla server` can run, by the names --controllers uses.
inline constexpr const char* kFederationControllerNames[] = {"cluster", "sync", "replicaset"};

struct FederationOptions {
  federation::cluster::ClusterControllerOptions cluster;
  federation::replicaset::ReplicaSetControllerOptions replicaset;
  // --controllers, as kube-controller-manager spells it: "*" for all,
  // "NAME" to enable one, "-NAME" to disable one.
  std::vector<std::string> controllers = {"*"};
  bool Enabled(std::string_view name) const;
};

// InvalidArgument-style message for a --controllers list naming an unknown
// controller; "" when it is valid.
std::string CheckControllers(const std::vector<std::string>& controllers);

class FederationControllers {
 public:
  // Starts the controllers once their caches have synced. `server` must
  // outlive the result.
  static StatusOr<std::unique_ptr<FederationControllers>> Start(apiserver::Server& server,
                                                                const FederationOptions& options);
  // Stops them.
  ~FederationControllers();

  federation::ClusterClients& clusters() { return clusters_; }

 private:
  explicit FederationControllers(apiserver::Server& server);

  apiserver::Server& server_;
  std::unique_ptr<client::Client> client_;
  federation::ClusterClients clusters_;
  std::unique_ptr<federation::cluster::ClusterController> cluster_controller_;
  // Propagates Namespaces, ConfigMaps, Secrets and Services.
  std::unique_ptr<federation::sync::SyncController> sync_controller_;
  // Spreads federated ReplicaSets over the members (seed 000).
  std::unique_ptr<federation::replicaset::ReplicaSetController> replicaset_controller_;
  // Destroyed first: it keeps pointers to the controllers' informers.
  runtime::ControllerManager manager_;
};

}  // namespace flotilla::cli
