// The federated Ingress controller (docs/federation.md, "Federated
// Ingresses"): an Ingress routes to Services, so it goes where they can
// answer:
// - each cluster its placement admits gets the Ingress (same name, its
//   spec) while a backend Service of it (spec.defaultBackend and every
//   path's backend.service) has a ready endpoint there, as the federation's
//   caches of the member show; a cluster whose backends are all gone loses
//   its copy (and the member's ingress controller its address);
// - status.loadBalancer.ingress lists the addresses the members' ingress
//   controllers gave the copies, by cluster name, so `kubectl get ing` on
//   the federation shows where it is served; the federation's DNS answers
//   each rules[].host under its domain with them (global load balancing by
//   DNS, seed 003; dns/records.h).
// A change of a member's Endpoints re-checks the Ingresses of its
// namespace.
//
// Thread-safe; time runs on the context's clock.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "federation/sync/copy_strategy.h"

namespace flotilla::federation::ingress {

class IngressController : public sync::CopyStrategy {
 public:
  static constexpr char kName[] = "ingress";

  // Registers the reconciler with `ctx`, which must outlive it.
  IngressController(FederationContext& ctx, const WorkloadOptions& options);

  std::vector<client::ResourceRef> MemberReads() const override;
  Status Plan(Check& check) override;
  StatusOr<runtime::Result> Finish(Check& check) override;

 private:
  // Whether a backend Service of `ingress` has a ready endpoint in `cluster`.
  bool ServedIn(const std::string& cluster, const json::object& ingress) const;
};

// The Services an Ingress routes to: its default backend's and every
// path's.
std::set<std::string> BackendServices(const json::object& ingress);

// status.loadBalancer from the copies' (by cluster; null: none): their
// ingress entries in cluster order, each address once.
json::object LoadBalancerOf(const std::vector<const json::object*>& copies);

}  // namespace flotilla::federation::ingress
