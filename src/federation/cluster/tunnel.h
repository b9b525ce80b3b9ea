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
// One process's tunnels: the federation API server the agent connected to
// holds its tunnel, and that process's controllers use it. With several
// servers an agent keeps a tunnel to each (server_lease.h).
//
// Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <thread>

#include "apiserver/api_server.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "client/client.h"
#include "client/h2_connection.h"
#include "federation/cluster/agent_claim.h"

namespace flotilla::federation::cluster {

// The Upgrade token of a tunnel request.
inline constexpr const char* kTunnelProtocol = "flotilla-tunnel";

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

  // ApiServerOptions::tunnel. 400 without `Upgrade: flotilla-tunnel`, over
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
};

}  // namespace flotilla::federation::cluster
