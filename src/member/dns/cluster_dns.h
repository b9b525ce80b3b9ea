// A member's own cluster DNS, as kube-dns and CoreDNS answer inside a
// Kubernetes cluster (docs/dns.md), from the member's caches:
//   <svc>.<ns>.svc.<cluster-domain>     A: the ClusterIP; for a headless
//                                       Service the ready endpoints' IPs
//   <hostname>.<svc>.<ns>.svc.<cd>      A: a pod with spec.hostname and
//                                       spec.subdomain = <svc> (every
//                                       StatefulSet pod), its IP
//   _<port>._<proto>.<svc>.<ns>.svc.<cd> SRV per named port: the Service's
//                                       name, or each such pod's
// Names under a stub domain (--stub-domain DOMAIN=HOST:PORT) are forwarded
// to that server, as kube-dns stub domains are: `flotilla up` points each
// member's at the federation's DNS, so that a member answers both its
// local names and the federation's global ones (seed 002).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dns/live_zone.h"
#include "dns/zone.h"
#include "member/context.h"

namespace flotilla::member {

struct ClusterDnsOptions {
  std::string address;  // HOST:PORT; empty: no DNS
  std::string cluster_domain = "cluster.local";
  std::vector<dns::StubDomain> stub_domains;
  uint32_t ttl = dns::kDefaultTtlSeconds;
};

// The records of the cluster's Services and pods. Pure.
std::shared_ptr<const dns::Zone> BuildClusterZone(const ClusterDnsOptions& options, uint32_t serial,
                                                  const std::vector<runtime::ObjectPtr>& services,
                                                  const std::vector<runtime::ObjectPtr>& endpoints,
                                                  const std::vector<runtime::ObjectPtr>& pods);

class ClusterDns {
 public:
  // Registers on the member's informers. REQUIRES: before the manager starts.
  ClusterDns(ControllerContext& ctx, ClusterDnsOptions options, metrics::Registry& registry);
  ~ClusterDns() { Stop(); }
  // REQUIRES: the caches synced.
  Status Start();
  void Stop() { live_.Stop(); }
  int port() const { return live_.port(); }

 private:
  ClusterDnsOptions options_;
  metrics::Registry& registry_;
  runtime::Informer& services_;
  runtime::Informer& endpoints_;
  runtime::Informer& pods_;
  dns::LiveZone live_;
};

}  // namespace flotilla::member
