// The agent (`flotilla agent`, docs/federation.md "Members behind NAT: the
// agent"): runs beside a member the federation cannot dial, registers the
// member as an agent-connected Cluster (spec.connection Agent), dials the
// federation and keeps one tunnel open (tunnel.h), over which it serves the
// federation's requests by sending each to the member with the member's
// credentials, which never leave it. It listens nowhere.
//
// With several federation servers (server_lease.h) the agent keeps a
// tunnel to each: the one it was given first, then every other whose Lease
// it sees renewed (listed every `discovery_period`), so that the server
// leading the controllers, whichever it is, and every server's cluster
// proxy reach the member. A server whose Lease is gone or no longer
// renewed is not dialled again once its tunnel closes.
//
// A tunnel that closes, or that hears nothing (not even the federation's
// PINGs) for `silence_timeout`, is redialled after a jittered backoff that
// doubles from `min_backoff` to `max_backoff` and starts again once a
// tunnel has stayed up for a minute. A refusal that another attempt cannot
// mend (the Cluster deleted, the credentials refused: 401, 403, 404) ends
// Run with that error. A 409 (another agent instance holds the cluster,
// agent_claim.h) is retried: the agent stands by and takes over once the
// other's claim lapses.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "apiserver/http_server.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "client/client.h"
#include "client/kubeconfig.h"
#include "client/transport.h"

namespace flotilla::federation::cluster {

struct AgentOptions {
  std::string name;               // the Cluster's name
  client::RestConfig federation;  // how to reach the federation, and as whom
  client::RestConfig member;      // the member's API and credentials
  std::map<std::string, std::string> labels;
  std::string provider, region;  // spec.provider, spec.region, spec.zones
  std::vector<std::string> zones;
  // This agent process's name to the federation's servers: the cluster is
  // claimed by one instance at a time (agent_claim.h), and the same
  // instance restarted is let in at once. Kept across restarts by
  // `flotilla agent` in its data directory; empty: a new one (a UID).
  // Up to 128 of [A-Za-z0-9._-].
  std::string instance;
  Duration dial_timeout = std::chrono::seconds(10);
  Duration min_backoff = std::chrono::seconds(1);
  Duration max_backoff = std::chrono::seconds(30);
  // The federation PINGs every 10 s (TunnelOptions::keepalive).
  Duration silence_timeout = std::chrono::seconds(30);
  // Bounds a request to the member until its response's head.
  Duration member_timeout = std::chrono::seconds(30);
  // How often the federation's servers are listed; zero: none but the
  // one `federation` names is dialled.
  Duration discovery_period = std::chrono::seconds(10);
  // Called with the server's URL each time a tunnel comes up; none when
  // empty. Must not block.
  std::function<void(const std::string&)> on_connected;
  // The agent's own token (a ServiceAccount's, registration.h) is renewed
  // once `renew_at` of its lifetime has passed, by registering again as
  // itself (checked every discovery period, on `clock`; null: the real
  // one); `on_token_renewed` is told the new token, to keep it. Other
  // credentials are not renewed. A renewal that fails is tried again
  // after `renew_retry`, doubled after each failure up to
  // `renew_retry_max`, each failure logged once.
  double renew_at = 0.8;
  Duration renew_retry = std::chrono::seconds(30);
  Duration renew_retry_max = std::chrono::minutes(10);
  std::function<void(const std::string&)> on_token_renewed;
  Clock* clock = nullptr;
};

// Registering with a bootstrap token (registration.h), as `kubeadm join`
// does: the federation's CA is learnt from its TLS handshake and trusted
// only when its public key has the pin given, before the token is sent.
struct BootstrapOptions {
  std::string server;        // the federation's URL
  std::string token;         // ID.SECRET (apiserver/bootstrap_token.h)
  std::string ca_cert_hash;  // "sha256:HEX" (apiserver/certs.h PublicKeyPin)
  Duration timeout = std::chrono::seconds(10);
};

// The CA certificate (PEM) among those the server presents whose public key
// has pin `ca_cert_hash`, once the serving certificate is shown to be
// issued by it. BadRequest for a malformed pin; Forbidden when no
// certificate the server presents has it (another federation, or someone
// between).
StatusOr<std::string> DiscoverFederationCa(const BootstrapOptions& boot);

// Registers the Cluster of `opts` (its name, labels and placement) with the
// bootstrap token: how to reach the federation as the agent's own identity
// (the CA, its ServiceAccount token). The federation's refusal as it came
// (401 with why, 403, 409).
StatusOr<client::RestConfig> RegisterWithToken(const AgentOptions& opts,
                                               const BootstrapOptions& boot);

// Thread-safe.
class Agent {
 public:
  // BadRequest for configs that cannot work.
  static StatusOr<std::unique_ptr<Agent>> Create(AgentOptions opts);
  ~Agent();

  // Creates the Cluster with spec.connection Agent, or finds it so
  // (labels, provider, region and zones are the creator's). Conflict when
  // a Cluster of that name is dialled directly.
  Status Register();
  // Keeps the tunnels up until Stop (then OK) or a refusal of the first
  // server's tunnel that no retry mends.
  Status Run();
  // Any thread: ends Run, closing the tunnels.
  void Stop();
  // Whether the tunnel to the first server is up now.
  bool Connected();
  // The ids of the servers (server_lease.h) a tunnel is up to now.
  std::vector<std::string> ConnectedServers();

 private:
  // One server's tunnel.
  struct Link {
    std::string id;   // the server's, once known
    std::string url;  // the server's (the first's is opts_.federation's)
    bool connected = false;
    bool done = false;      // not to be dialled again (its Lease is gone)
    bool finished = false;  // its loop has ended
    std::thread thread;
  };
  // When a server's Lease was last seen renewed.
  struct Seen {
    std::string renew_time;
    std::chrono::steady_clock::time_point at;
  };

  explicit Agent(AgentOptions opts) : opts_(std::move(opts)) {}
  // Serves one request of the federation: to the member, as it came.
  void Serve(apiserver::Request& req, apiserver::Responder& resp);
  // Serves an upgrade request of the federation (exec, attach,
  // port-forward; tunnel.h): sends it to the member on a connection of its
  // own and, once the member switches, connects back to the federation's
  // server that waits for splice `id` and splices the two.
  void ServeUpgrade(apiserver::Request& req, const std::string& id, apiserver::Responder& resp);
  // The URL of the federation's server `id`: the first server's when it is
  // none other known.
  std::string ServerUrl(const std::string& id);
  // Keeps `link`'s tunnel to `to` up until Stop, link.done, or a refusal no
  // retry mends.
  Status Keep(const client::RestConfig& to, Link& link);
  // `config` with the federation token the agent holds now.
  client::RestConfig WithToken(client::RestConfig config);
  // Renews the agent's token when it is due (Discover's thread).
  void RenewIfDue();
  // Every discovery period: renews the token when due, lists the servers
  // and keeps a Link to each.
  void Discover();
  void DiscoverOnce();

  const AgentOptions opts_;
  std::unique_ptr<client::Client> federation_;
  std::shared_ptr<client::Transport> member_;
  std::unique_ptr<apiserver::HttpServer> server_;
  Mutex mu_;
  CondVar cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::string token_ GUARDED_BY(mu_);  // the federation's bearer token, as renewed
  // The tunnel to the server `federation` names, and those to the others;
  // a Link's fields are read and written under mu_.
  const std::unique_ptr<Link> first_ = std::make_unique<Link>();
  std::map<std::string, std::unique_ptr<Link>> others_ GUARDED_BY(mu_);
  bool discover_now_ GUARDED_BY(mu_) = false;  // the first server has said which it is
  // Discover's thread only:
  std::map<std::string, Seen> seen_;
  std::map<std::string, std::string> urls_;  // the servers last listed, by id
  std::map<std::string, std::unique_ptr<client::Client>> listers_;  // by URL
  bool told_forbidden_ = false;
  // After a renewal failed: not before this, and the wait after the next.
  TimePoint renew_retry_at_ = TimePoint::min();
  Duration renew_retry_ = Duration::zero();
};

}  // namespace flotilla::federation::cluster
