// Dialling a server for a connection that switches protocols: an HTTP/1.1
// request with `Upgrade` that the server answers 101, after which the TLS
// connection carries the new protocol (an agent's tunnel to the
// federation, federation/cluster/tunnel.h).
#pragma once

#include <memory>
#include <optional>
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

// A server's answer to an upgrade request: 101 with the connection
// switched, or another answer, whole.
struct UpgradeAnswer {
  int code = 0;
  // The answer's headers, names in lower case.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;                  // not 101: the answer's body (at most 1 MiB)
  std::optional<Switched> switched;  // 101
};

// Connects to config.server with its TLS settings and credentials and sends
// `method path` with `headers` (the caller's Upgrade and Connection among
// them; config's bearer token is added), bounded by `timeout` until the
// answer's head and body are in. A failure to connect is
// ServiceUnavailable (Timeout past `timeout`); any answer is returned.
StatusOr<UpgradeAnswer> OpenUpgrade(const RestConfig& config, const std::string& method,
                                    const std::string& path,
                                    const std::vector<std::pair<std::string, std::string>>& headers,
                                    Duration timeout);

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
