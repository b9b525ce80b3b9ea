// The REST client: the Client over HTTPS to a Kubernetes API server,
// configured by a RestConfig (usually from a kubeconfig, kubeconfig.h).
//
// TLS verification is on unless the config says insecure: against ca_pem, or
// the system trust store when it is empty, for tls_server_name (else the
// URL's host), which is also sent as SNI when it is a DNS name. A client
// certificate and a bearer token are presented when configured. HTTP/2 is
// spoken to a server that offers it (RestOptions::http2), else HTTP/1.1
// keep-alive connections are pooled and reused across threads. Requests
// pass a client-side token bucket (qps, burst) and are bounded by a timeout.
// Retries, with exponential backoff or the server's Retry-After:
//   - 429 TooManyRequests, for every verb (the server did not act on it);
//   - other 5xx responses, for GET only;
//   - failures to connect (the request was never sent), for every verb;
//   - connection failures after the request was sent, for GET only.
// Timeouts and certificate verification failures are not retried.
// Transport failures are ServiceUnavailable (Timeout past the deadline),
// with a message naming the method, URL and what failed.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "client/client.h"
#include "client/kubeconfig.h"
#include "client/transport.h"

namespace flotilla::client {

struct RestOptions {
  double qps = 50;  // <= 0: no client-side limit
  int burst = 100;
  // Per attempt, for everything but a watch's body. Zero: none.
  Duration timeout = std::chrono::seconds(30);
  int max_retries = 5;                                        // attempts after the first
  Duration initial_backoff = std::chrono::milliseconds(200);  // doubled per retry
  Duration max_backoff = std::chrono::seconds(10);
  Duration max_retry_after = std::chrono::seconds(60);  // a longer Retry-After is capped
  size_t max_idle_connections = 8;
  Duration idle_timeout = std::chrono::seconds(90);  // idle connections older are closed
  size_t max_response_bytes = 512 << 20;
  std::string user_agent = "flotilla";
  // HTTP/2 when the server offers it by ALPN: every request and watch of
  // the client to the server as streams of one connection (another only
  // past the server's stream limit). Else, and when false, HTTP/1.1
  // keep-alive connections, one per request or watch in flight.
  // Transport::Stream (a synchronous stream) always takes HTTP/1.1.
  bool http2 = true;
  // Times rate limiting, backoff and timeouts; null: the real clock. Not
  // owned; must outlive the client.
  Clock* clock = nullptr;
};

// BadRequest for a config that cannot work: a server URL that is not https,
// PEM that does not load, a certificate without its key.
StatusOr<std::unique_ptr<Client>> NewRestClient(const RestConfig& config,
                                                const RestOptions& opts = {});
// The HTTPS transport under the REST client, for requests outside the
// Client verbs (a member's admin endpoint). Same TLS, credentials, rate
// limiting and retries.
StatusOr<std::shared_ptr<Transport>> NewRestTransport(const RestConfig& config,
                                                      const RestOptions& opts = {});

}  // namespace flotilla::client
