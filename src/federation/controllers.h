// The federation's controllers as `flotilla server` runs them (DESIGN §2):
// one FederationContext and, by the names --controllers uses, the cluster
// controller, the sync controller, and the federated ReplicaSet,
// Deployment, StatefulSet and HorizontalPodAutoscaler controllers. Adding a controller is one line
// in controllers.cc (and its name below).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "client/client.h"
#include "federation/cluster/cluster_controller.h"
#include "federation/applications/applications.h"
#include "federation/common/context.h"
#include "federation/common/placer.h"
#include "federation/dns/federation_dns.h"
#include "federation/hpa/hpa_controller.h"
#include "federation/sync/sync_controller.h"

namespace flotilla::federation {

// The controllers `flotilla server` can run, by the names --controllers uses.
inline constexpr const char* kControllerNames[] = {"cluster",    "sync",        "replicaset",
                                                   "deployment", "statefulset", "hpa"};

struct FederationOptions {
  cluster::ClusterControllerOptions cluster;
  sync::SyncControllerOptions sync;
  // Federated ReplicaSets, Deployments and StatefulSets.
  WorkloadOptions workloads;
  // Coupled applications of federated ReplicaSets and Deployments.
  ApplicationOptions applications;
  // Federated HorizontalPodAutoscalers.
  hpa::HpaOptions hpa;
  ContextOptions context;
  // The DNS server (--dns-address; none when empty).
  dns::FederationDnsOptions dns;
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
  // Builds the enabled controllers on `fed` (the admin's client of the
  // federation's API) and starts them once their caches have synced. `fed`
  // and `clock` must outlive the result.
  static StatusOr<std::unique_ptr<FederationControllers>> Start(client::Client& fed, Clock& clock,
                                                                const FederationOptions& options);
  // Stops them.
  ~FederationControllers();

  FederationContext& context() { return ctx_; }
  // The DNS server; null when --dns-address is empty.
  dns::FederationDns* dns() { return dns_.get(); }
  // Every controller's metrics in the Prometheus text format.
  std::string RenderMetrics() const;

 private:
  FederationControllers(client::Client& fed, Clock& clock, const FederationOptions& options);

  FederationContext ctx_;
  // Where coupled applications run; null when neither the ReplicaSet nor
  // the Deployment controller runs.
  std::unique_ptr<Applications> applications_;
  // The components, built in order and destroyed after the context stopped.
  std::vector<std::shared_ptr<void>> components_;
  std::unique_ptr<dns::FederationDns> dns_;
};

}  // namespace flotilla::federation
