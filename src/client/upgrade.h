// Dialling a server for a connection that switches protocols: an HTTP/1.1
// request with `Upgrade` that the server answers 101, after which the TLS
// connection carries the new protocol (an agent's tunnel to the
// federation, federation/cluster/tunnel.h).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/http2.h"
#include "base/status.h"
#include "client/kubeconfig.h"

namespace flotilla::client {

struct Switched {
  http2::TlsStream stream;    // on a strand of the shared loop
  std::string received;       // bytes read past the 101
  std::shared_ptr<void> tls;  // the TLS context the stream was made with
  // The 101's headers, names in lower case.
  std::vector<std::pair<std::string, std::string>> headers;
};

// Connects to config.server with its TLS settings and credentials, sends
// `method path` with `Connection: Upgrade` and `Upgrade: protocol`, and
// returns the connection once the server answers 101. Every step is bounded
// by `timeout`. Another answer is an error carrying the server's Status
// (its reason and message); a failure to connect is ServiceUnavailable
// (Timeout past `timeout`).
StatusOr<Switched> DialUpgrade(const RestConfig& config, const std::string& method,
                               const std::string& path, const std::string& protocol,
                               Duration timeout);

// The certificates config.server presents in its TLS handshake, PEM, leaf
// first, taken without verifying them (its CA is what the caller does not
// know yet: it checks them against a pin, as `flotilla agent --ca-cert-hash`
// does). Nothing is sent.
StatusOr<std::vector<std::string>> PeerCertificates(const RestConfig& config, Duration timeout);

}  // namespace flotilla::client
