// How the federation reaches one member cluster: the self-contained
// kubeconfig its Cluster's Secret holds, read into a RestConfig, and plain
// HTTPS GETs of the member's non-resource paths (/readyz, /healthz,
// /version), which the Client interface does not offer.
//
// A probe reuses the previous probe's connection while it is alive (its
// peer has not closed it); a member that died since then closed it or
// leaves the request unanswered, and is seen at once as before. Every step
// (connect, TLS handshake, request, response) is bounded by one timeout;
// nothing is retried.
#pragma once

#include <memory>
#include <string>

#include "base/clock.h"
#include "base/json.h"
#include "base/status.h"
#include "client/kubeconfig.h"
#include "federation/common/names.h"

namespace flotilla::federation::cluster {

// Reads data.kubeconfig (base64) of a v1 Secret and resolves its current
// context. BadRequest naming what is wrong (no such key, bad base64, a
// kubeconfig that does not resolve).
StatusOr<client::RestConfig> RestConfigFromSecret(const json::object& secret);

// A kubeconfig for `config` with everything inlined (CA, client certificate
// and key, token), so that it means the same wherever it is stored.
StatusOr<std::string> SelfContainedKubeconfig(const std::string& cluster_name,
                                              const client::RestConfig& config);

struct HttpResult {
  int code = 0;
  std::string body;
};

// Thread-safe (concurrent Gets use connections of their own).
class MemberProber {
 public:
  // BadRequest for a config that cannot work (see client::NewRestClient).
  // `clock` times the I/O deadline; not owned, must outlive the prober.
  static StatusOr<std::unique_ptr<MemberProber>> Create(const client::RestConfig& config,
                                                        Duration timeout, Clock& clock);
  virtual ~MemberProber() = default;
  // GET `path` with the member's credentials. HTTP error codes are results;
  // errors are transport failures (ServiceUnavailable, Timeout).
  virtual StatusOr<HttpResult> Get(const std::string& path) = 0;
};

}  // namespace flotilla::federation::cluster
