// How the federation reaches one member cluster: the self-contained
// kubeconfig its Cluster's Secret holds, read into a RestConfig, and plain
// HTTPS GETs of the member's non-resource paths (/readyz, /healthz,
// /version), which the Client interface does not offer.
//
// A probe goes over a REST transport that never retries and bounds every
// step (connect, TLS handshake, request, response) by its timeout. The
// cluster controller gives the prober the transport of the member's REST
// client, so probes and the federation's writes share its kept-alive
// connections. A probe reuses the connection used last while it is alive
// (its peer has not closed it); a member that died since then closed it or
// leaves the request unanswered, and is seen at once as before. And a probe
// every monitor period keeps one connection open between bursts of writes,
// so the first write after a quiet spell pays no TLS handshake, much as
// client-go's HTTP/2 connection to a member stays open under its watches
// (docs/benchmarks.md, "1,000 member clusters").
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "base/clock.h"
#include "base/json.h"
#include "base/status.h"
#include "client/h2_connection.h"
#include "client/kubeconfig.h"
#include "client/transport.h"
#include "federation/common/names.h"
#include "runtime/informer.h"
#include "runtime/work_queue.h"

namespace flotilla::federation::cluster {

// Where a Cluster's credentials are: its spec.secretRef, in the
// federation's system namespace when the ref names none.
struct SecretRef {
  std::string ns;
  std::string name;
};
SecretRef SecretRefOf(const json::object& cluster);

// The Cluster's Secret: from `system_secrets` (an informer of the Secrets
// in the system namespace, where join puts them) when it is there, else
// read through `fed`. A Cluster update costs no request then; only a
// Secret kept elsewhere is read each time. NotFound when there is none.
StatusOr<runtime::ObjectPtr> SecretOf(const json::object& cluster,
                                      const runtime::Informer& system_secrets, client::Client& fed);

// For an informer of Secrets: each event adds to `queue` the key of every
// Cluster in `clusters` whose credentials that Secret holds.
runtime::EventHandler EnqueueClustersOfSecret(const runtime::Informer& clusters,
                                              runtime::WorkQueue& queue);

// Reads data.kubeconfig (base64) of a v1 Secret and resolves its current
// context. BadRequest naming what is wrong (no such key, bad base64, a
// kubeconfig that does not resolve).
StatusOr<client::RestConfig> RestConfigFromSecret(const json::object& secret);

// Which credentials a member's clients were built from, to tell when to
// build them again: its Secret's identity and version (SecretVersion), or,
// for an agent-connected cluster, its tunnel, which stays the same object
// whichever connection the agent has open (kAgentCredentials).
inline constexpr std::string_view kAgentCredentials = "agent";
std::string SecretVersion(const json::object& secret);

// How the federation reaches an agent-connected cluster
// (api::ClusterView::via_agent): over `tunnel` (tunnel.h), named in
// messages by the member's address its Cluster gives.
client::RestConfig AgentRestConfig(const json::object& cluster,
                                   std::shared_ptr<client::H2Tunnel> tunnel);

// A kubeconfig for `config` with everything inlined (CA, client certificate
// and key, token), so that it means the same wherever it is stored.
StatusOr<std::string> SelfContainedKubeconfig(const std::string& cluster_name,
                                              const client::RestConfig& config);

// Thread-safe (concurrent Gets use connections of their own).
class MemberProber {
 public:
  // Probes over `transport`, which should not retry (RestOptions
  // max_retries 0).
  explicit MemberProber(std::shared_ptr<client::Transport> transport)
      : transport_(std::move(transport)) {}
  // A prober with a transport of its own: each probe bounded by `timeout`
  // on `clock` (not owned, must outlive the prober). BadRequest for a
  // config that cannot work (see client::NewRestClient).
  static StatusOr<std::unique_ptr<MemberProber>> Create(const client::RestConfig& config,
                                                        Duration timeout, Clock& clock);

  // GET `path` with the member's credentials. HTTP error codes are results;
  // errors are transport failures (ServiceUnavailable, Timeout) that name
  // the URL.
  StatusOr<client::ApiResponse> Get(const std::string& path) {
    return transport_->Do({.method = "GET", .path = path});
  }

 private:
  std::shared_ptr<client::Transport> transport_;
};

}  // namespace flotilla::federation::cluster
