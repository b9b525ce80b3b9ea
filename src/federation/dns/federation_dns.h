// The federation's DNS server (seeds 003 and 002; docs/dns.md): serves the
// records of records.h over UDP and TCP, built from the context's caches
// (federated Services, Ingresses and Clusters; the members' Services and
// Endpoints).
// No store of its own: any change in those caches marks the zone stale and
// the next one is built at once (dns/live_zone.h), so answers follow within
// a build's time. Of a Cluster's updates only those that change what the
// zone reads of it count (ClusterFactsOf), not its probes' or counts'.
//
// A cluster counts as Ready when the cluster controller last found it so
// (the context's registry); its copies leave the answers at once when it
// stops being Ready.
//
// Built with the other federation components (before the context starts);
// Start() binds the sockets once the caches have synced.
#pragma once

#include <memory>

#include "dns/live_zone.h"
#include "dns/server.h"
#include "dns/zone.h"
#include "federation/common/context.h"
#include "federation/dns/records.h"

namespace flotilla::federation::dns {

struct FederationDnsOptions {
  // HOST:PORT for UDP and TCP; empty: no DNS.
  std::string address;
  DnsNames names;
  uint32_t ttl = ::flotilla::dns::kDefaultTtlSeconds;
  int udp_sockets = ::flotilla::dns::ServerOptions{}.udp_sockets;
};

class FederationDns {
 public:
  // Registers the informers' handlers on `ctx`. REQUIRES: before ctx starts.
  FederationDns(FederationContext& ctx, FederationDnsOptions options);
  ~FederationDns() { Stop(); }
  FederationDns(const FederationDns&) = delete;
  FederationDns& operator=(const FederationDns&) = delete;

  // Builds the first zone and starts serving. REQUIRES: ctx started.
  Status Start();
  void Stop() { live_.Stop(); }
  int port() const { return live_.port(); }
  // The zone answered from now.
  std::shared_ptr<const ::flotilla::dns::Zone> zone() const { return live_.zone(); }

 private:
  std::shared_ptr<const ::flotilla::dns::Zone> Build(uint32_t serial);

  FederationContext& ctx_;
  const FederationDnsOptions options_;
  runtime::Informer& services_;
  runtime::Informer& ingresses_;  // federated: their status says where they are served
  ::flotilla::dns::LiveZone live_;
};

}  // namespace flotilla::federation::dns
