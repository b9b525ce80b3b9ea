// The federation's DNS server (seeds 003 and 002; docs/dns.md): serves the
// records of records.h over UDP and TCP, built from the context's caches
// (federated Services and Clusters; the members' Services and Endpoints).
// No store of its own: any change in those caches marks the zone stale and
// one builder thread makes the next zone at once (changes that come during
// a build go into the following one), so answers follow within a build's
// time.
//
// A cluster counts as Ready when the cluster controller last found it so
// (the context's registry); its copies leave the answers at once when it
// stops being Ready.
//
// Built with the other federation components (before the context starts);
// Start() binds the sockets once the caches have synced.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "dns/server.h"
#include "federation/common/context.h"
#include "federation/dns/records.h"

namespace flotilla::federation::dns {

struct FederationDnsOptions {
  // HOST:PORT for UDP and TCP; empty: no DNS.
  std::string address;
  DnsNames names;
  uint32_t ttl = 30;
  int udp_threads = 2;
};

class FederationDns {
 public:
  // Registers the informers' handlers on `ctx`. REQUIRES: before ctx starts.
  FederationDns(FederationContext& ctx, FederationDnsOptions options);
  ~FederationDns();
  FederationDns(const FederationDns&) = delete;
  FederationDns& operator=(const FederationDns&) = delete;

  // Builds the first zone and starts serving. REQUIRES: ctx started.
  Status Start();
  void Stop();
  int port() const { return server_ ? server_->port() : 0; }
  // The zone answered from now.
  std::shared_ptr<const ::flotilla::dns::Zone> zone() const;
  // Zones built so far.
  uint64_t builds() const;

 private:
  void MarkStale();
  void BuildLoop();
  std::shared_ptr<const ::flotilla::dns::Zone> Build();

  FederationContext& ctx_;
  const FederationDnsOptions options_;
  runtime::Informer& services_;
  std::unique_ptr<::flotilla::dns::Server> server_;
  std::thread builder_;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  bool stale_ = true;                                  // GUARDED_BY(mu_)
  bool stopping_ = false;                              // GUARDED_BY(mu_)
  uint32_t serial_ = 0;                                // GUARDED_BY(mu_)
  uint64_t builds_ = 0;                                // GUARDED_BY(mu_)
  std::shared_ptr<const ::flotilla::dns::Zone> zone_;  // GUARDED_BY(mu_)
};

}  // namespace flotilla::federation::dns
