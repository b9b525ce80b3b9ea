// Agents' tunnels: how the federation reaches a member it cannot dial
// (docs/federation.md, "Members behind NAT: the agent").
//
// An agent beside the member dials the federation and POSTs
//   /apis/federation/v1beta1/clusters/NAME/tunnel
// over HTTP/1.1 with `Upgrade: flotilla-tunnel` (after authentication, RBAC
// create on clusters/tunnel for NAME, and audit). The federation answers
// 101 Switching Protocols and from then on the connection is HTTP/2 with
// the roles turned round: the federation sends the requests, the agent
// serves each by sending it to its member with the member's credentials,
// which never leave it. Every request to the member of a Cluster with
// spec.connection Agent (the controllers', the probes', the informers'
// watches, the cluster proxy's) is a stream of that one connection; the
// member is otherwise a cluster like any other.
//
// The federation PINGs the tunnel every keepalive period and closes it when
// a PING goes unanswered until the next. The agent process names itself in
// the request (`?instance=ID`, agent.h): a cluster is claimed by one agent
// instance across all of the federation's servers (agent_claim.h), whose
// claim each server renews every quarter of `claim_duration` while it
// holds a tunnel of that instance. Another instance's tunnel is refused
// (409) while the claim lives; the same instance's replaces the tunnel it
// had here, so a restarted agent is let in at once. A claim found taken by
// another instance at a renewal closes the tunnel. Deleting the Cluster
// closes its tunnel.
// Every `recheck` period the bearer token each open tunnel was opened with
// is reviewed again (TokenReview), and its holder's right to the tunnel
// (SubjectAccessReview): a token revoked or expired since, a ServiceAccount
// deleted, a binding removed, closes the tunnel (the agent's next dial then
// gets the 401 or 403). Client certificates cannot be revoked; their
// tunnels are not rechecked.
//
// An upgrade request (kubectl exec, attach, port-forward) is a byte stream
// both ways, not an exchange, and does not travel in the tunnel: the
// federation expects a connection back for it (ExpectSplice, an id that
// cannot be guessed) and sends the request through the tunnel as a POST
// with header kSpliceHeader: ID and a body naming the method, the
// upgrade's headers and this server (SpliceRequest). The agent sends the
// upgrade on to its member; an answer that does not switch comes back as
// the tunnel's response; a 101 makes the agent dial this server at
//   /apis/federation/v1beta1/clusters/NAME/tunnel?splice=ID
// with `Upgrade: flotilla-splice` (authorized as a tunnel is), splice that
// connection with the member's, and answer the tunnel's request with the
// 101's headers (Content-Type kSpliceContentType). The federation then
// switches the caller's connection and splices it with the one the agent
// dialled (AwaitSplice). A session thus has a TLS connection of its own
// from the agent, and shares no flow-control window with the controllers'
// watches in the tunnel.
//
// One process's tunnels: the federation API server the agent connected to
// holds its tunnel, and that process's controllers use it. With several
// servers an agent keeps a tunnel to each (server_lease.h).
//
// Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "apiserver/api_server.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "client/client.h"
#include "client/h2_connection.h"
#include "federation/cluster/agent_claim.h"

namespace flotilla::federation::cluster {

// The Upgrade token of a tunnel request.
inline constexpr const char* kTunnelProtocol = "flotilla-tunnel";
// The Upgrade token of an agent's connection back for an upgrade request.
inline constexpr const char* kSpliceProtocol = "flotilla-splice";
// The header of an upgrade request sent through a tunnel: the splice's id.
inline constexpr const char* kSpliceHeader = "x-flotilla-splice";
// The Content-Type of an agent's answer that its member switched.
inline constexpr const char* kSpliceContentType = "application/vnd.flotilla.splice+json";

// The body of an upgrade request sent through a tunnel, and of the agent's
// answer once its member switched (method and server empty then).
struct SpliceRequest {
  std::string method;  // the caller's
  std::string server;  // the id of the server that waits (TunnelOptions::server_id)
  // The upgrade's headers (to the member), or the member's 101's.
  std::vector<std::pair<std::string, std::string>> headers;

  std::string Serialize() const;
  // BadRequest for a body that is not one.
  static StatusOr<SpliceRequest> Parse(std::string_view body);
};

struct TunnelOptions {
  Duration keepalive = std::chrono::seconds(10);
  Duration recheck = std::chrono::seconds(30);
  // Agents' claims' leaseDurationSeconds (whole seconds).
  Duration claim_duration = std::chrono::seconds(40);
  // This server's id (server_lease.h), told to the agent in the 101
  // (kServerIdHeader); none when empty.
  std::string server_id;
};

class Tunnels {
 public:
  explicit Tunnels(TunnelOptions opts = {}) : opts_(opts) {}
  ~Tunnels() { Stop(); }

  // Reads Clusters and reviews credentials through `federation` (not
  // owned; must outlive this, or Stop be called first). Until then every
  // tunnel request is 503.
  void Start(client::Client& federation);
  // Stops the rechecks; the tunnels stay as they are.
  void Stop();

  // The tunnel of cluster `name`, connected or not; the same object for
  // the name for the life of this.
  std::shared_ptr<client::H2Tunnel> For(const std::string& name);
  // Closes the tunnel of a cluster that is gone.
  void Close(const std::string& name);

  // A new splice for an upgrade request to cluster `name`: its id, which
  // the agent's connection back names.
  std::string ExpectSplice(const std::string& name);
  // The agent's connection back for splice `id` once it is in, waiting up
  // to `timeout`; the splice is forgotten either way.
  std::optional<http2::Upgraded> AwaitSplice(const std::string& id, Duration timeout);
  const std::string& server_id() const { return opts_.server_id; }

  // ApiServerOptions::tunnel. With ?splice=ID, an agent's connection back
  // (kSpliceProtocol): 404 when no splice of that id waits for cluster
  // `name`. Else 400 without `Upgrade: flotilla-tunnel`, over
  // HTTP/2 (an Upgrade is HTTP/1.1's) or for an instance id that is not
  // one; 404 for no such Cluster; 409 for a Cluster not connected by
  // agent, or claimed by another agent instance.
  void Serve(apiserver::Request& req, const std::string& name, const apiserver::UserInfo& user,
             apiserver::Responder& resp);

 private:
  // Who opened a cluster's tunnel, with what bearer token ("" for none),
  // as which agent instance, for which Cluster (the object).
  struct Opener {
    std::string token;
    apiserver::UserInfo user;
    std::string instance;
    json::object cluster;
  };
  void ServeSplice(apiserver::Request& req, const std::string& name, apiserver::Responder& resp);
  // Puts the connection back `up` in splice `id`'s place; closes it when
  // the splice is no longer awaited.
  void Deposit(const std::string& id, http2::Upgraded up);

  // Renews the claims of the tunnels up here, every quarter of the claim
  // duration; reviews their openers' rights every `recheck`.
  void Recheck();
  void RenewClaims(client::Client& federation, const std::map<std::string, Opener>& openers);
  void ReviewOpeners(client::Client& federation, const std::map<std::string, Opener>& openers);
  // The agent instance that opened the tunnel of `name` last ("" for none).
  std::string HeldBy(const std::string& name);
  // Closes the tunnel of `name` if `opener` still holds it.
  void CloseIfHeldBy(const std::string& name, const Opener& opener, const std::string& why);
  // Why `opener` may no longer hold the tunnel of `name`; "" when it may.
  std::string Revoked(client::Client& federation, const std::string& name, const Opener& opener);

  const TunnelOptions opts_;
  AgentClaims claims_{opts_.claim_duration};
  std::atomic<client::Client*> federation_{nullptr};
  Mutex mu_;
  CondVar cv_;
  std::map<std::string, std::shared_ptr<client::H2Tunnel>> tunnels_ GUARDED_BY(mu_);
  std::map<std::string, Opener> openers_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread rechecks_;
  // Splices awaited, by id.
  struct Awaited {
    std::string cluster;
    std::optional<http2::Upgraded> back;  // the agent's connection, once in
  };
  Mutex splices_mu_;
  CondVar splice_in_;
  std::map<std::string, Awaited> splices_ GUARDED_BY(splices_mu_);
};

}  // namespace flotilla::federation::cluster
