// The federation's controllers as `flotilla server` runs them (DESIGN §2):
// one FederationContext and every controller the build's kinds declared
// (federation/common/federated_kind.h), by the names --controllers uses.
// Adding a kind touches its own folder and the build file, not this one.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "client/client.h"
#include "federation/applications/applications.h"
#include "federation/common/context.h"
#include "federation/common/federated_kind.h"
#include "federation/common/placer.h"
#include "federation/dns/federation_dns.h"

namespace flotilla::federation {

// Every kind this build federates, in the order their folders are built
// (src/federation/CMakeLists.txt). Thread-safe; built at the first call.
const KindRegistry& BuiltInKinds();

// What the built-in kinds create in a member, in the order a cascading
// `flotilla unjoin` deletes it: the kinds in reverse, so that Namespaces
// (the sync controller's, added early) go last and take nothing with them
// that is still listed. CustomResourceDefinitions are left out: deleting
// one in a member deletes every object of its kind there, the member's own
// too.
std::vector<client::ResourceRef> MemberKinds();

// The API groups of everything the built-in kinds propagate, for the
// federation controllers' ClusterRole (apiserver::ServerOptions::
// controller_groups).
std::vector<std::string> ControllerGroups();

struct FederationOptions {
  // Federated workloads (ReplicaSets, Deployments, StatefulSets).
  WorkloadOptions workloads;
  // Coupled applications of federated ReplicaSets and Deployments.
  ApplicationOptions applications;
  ContextOptions context;
  // The DNS server (--dns-address; none when empty).
  dns::FederationDnsOptions dns;
  // Each controller's own options, by type (cluster::ClusterControllerOptions,
  // sync::SyncControllerOptions, hpa::HpaOptions).
  PartOptions parts;
  // --controllers, as kube-controller-manager spells it: "*" for all,
  // "NAME" to enable one, "-NAME" to disable one.
  std::vector<std::string> controllers = {"*"};
  bool Enabled(std::string_view name) const;
};

// A workload kind `kubectl flotilla status` lists (WorkloadListing).
struct ListedWorkload {
  client::ResourceRef resource;
  std::string kind;                // "Deployment"
  std::vector<std::string> names;  // "deployment", "deployments", "deploy"
  std::string breakdown_annotation;
};
// The built-in kinds' listed workloads, in their order.
std::vector<ListedWorkload> ListedWorkloads();
// The one `name` (any of its names, or with its group: "deploy.apps")
// names; null when none.
const ListedWorkload* FindListedWorkload(const std::vector<ListedWorkload>& workloads,
                                         std::string name);

// InvalidArgument-style message for a --controllers list naming a
// controller no kind declared; "" when it is valid.
std::string CheckControllers(const std::vector<std::string>& controllers);

// The --controllers help: what it takes and every controller by name.
std::string ControllersHelp();

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
