// A DNS server over UDP and TCP on one address (docs/dns.md), answering
// from whatever zone its source holds at the time of each query.
//
// It runs on the process's shared event loop (base/io.h), as the API server
// does: no thread of its own. UDP: `udp_sockets` sockets on the one port
// (SO_REUSEPORT), each read on its own strand, so that as many answer at
// once; a query for a stub domain is forwarded by a coroutine of its own.
// TCP: each connection (at most `max_tcp_connections`, the rest are closed
// at once) reads length-prefixed queries and closes after `tcp_idle`
// without one, or when a response is not taken within `tcp_idle` (a client
// that does not read). A malformed query is dropped or answered FORMERR
// (answer.h); nothing a client sends stops the server answering others.
//
// Metrics (on the registry given):
//   flotilla_dns_queries_total{transport,type,rcode}   counter
//   flotilla_dns_answer_duration_seconds{transport}    histogram
//   flotilla_dns_dropped_total{transport}              counter
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/metrics.h"
#include "base/status.h"
#include "dns/answer.h"
#include "dns/zone.h"

namespace flotilla::dns {

// Queries for names at or under `domain` go to the DNS server at `address`
// (HOST:PORT) over UDP, and its answer back as it came (SERVFAIL when none
// comes within the forward timeout): kube-dns's stub domains.
struct StubDomain {
  std::string domain;
  std::string address;
};

struct ServerOptions {
  std::string address = "127.0.0.1:0";  // HOST:PORT; port 0 picks a free one (the same for both)
  int udp_sockets = 2;
  int max_tcp_connections = 64;
  std::chrono::milliseconds tcp_idle{10000};
  std::vector<StubDomain> stub_domains;
  std::chrono::milliseconds forward_timeout{2000};
  AnswerOptions answer;
};

// The zone to answer from now; never null.
using ZoneSource = std::function<std::shared_ptr<const Zone>()>;

class Server {
 public:
  // Binds UDP and TCP and starts serving. `registry` must outlive it.
  static StatusOr<std::unique_ptr<Server>> Start(const ServerOptions& options, ZoneSource zone,
                                                 metrics::Registry& registry);
  virtual ~Server() = default;
  virtual int port() const = 0;
  // Stops serving and waits until every connection and query in flight has
  // ended (a forwarded query within the forward timeout). Idempotent. Not
  // from a thread of the shared event loop.
  virtual void Stop() = 0;
};

// Splits "HOST:PORT" ("[::1]:53" for IPv6).
StatusOr<std::pair<std::string, int>> SplitHostPort(const std::string& address);

}  // namespace flotilla::dns
