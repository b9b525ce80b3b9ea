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
// a PING goes unanswered until the next. A second agent for a cluster whose
// tunnel is up is refused (409); deleting the Cluster closes its tunnel.
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

namespace flotilla::federation::cluster {

// The Upgrade token of a tunnel request.
inline constexpr const char* kTunnelProtocol = "flotilla-tunnel";

struct TunnelOptions {
  Duration keepalive = std::chrono::seconds(10);
  Duration recheck = std::chrono::seconds(30);
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

  // ApiServerOptions::tunnel. 400 without `Upgrade: flotilla-tunnel` or
  // over HTTP/2 (an Upgrade is HTTP/1.1's); 404 for no such Cluster; 409
  // for a Cluster not connected by agent, or whose tunnel is up already.
  void Serve(apiserver::Request& req, const std::string& name, const apiserver::UserInfo& user,
             apiserver::Responder& resp);

 private:
  // Who opened a cluster's tunnel, with what bearer token ("" for none).
  struct Opener {
    std::string token;
    apiserver::UserInfo user;
  };
  void Recheck();
  // Why `opener` may no longer hold the tunnel of `name`; "" when it may.
  std::string Revoked(client::Client& federation, const std::string& name, const Opener& opener);

  const TunnelOptions opts_;
  std::atomic<client::Client*> federation_{nullptr};
  Mutex mu_;
  CondVar cv_;
  std::map<std::string, std::shared_ptr<client::H2Tunnel>> tunnels_ GUARDED_BY(mu_);
  std::map<std::string, Opener> openers_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread rechecks_;
};

}  // namespace flotilla::federation::cluster
