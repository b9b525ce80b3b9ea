// The cluster proxy: a request to
//   /apis/federation/v1beta1/clusters/NAME/proxy/{path}?{query}
// goes to member NAME as {path}?{query}, with the federation's credentials
// for it (its Cluster's Secret) and the caller impersonated on the member
// (Impersonate-User, one Impersonate-Group per group but
// system:authenticated, which the member adds itself), so the caller can do
// on the member what the member's RBAC lets that user do and no more. The
// API server has already authenticated the caller, authorized
// clusters/proxy and audited the request (ApiServerOptions::proxy).
//
// The method, body, Content-Type and Accept go through; the caller's
// Authorization and Impersonate-* headers do not. The response's status,
// Content-Type and Warnings come back. A watch or a followed log
// (?watch=true, ?follow=true) streams as it arrives on a connection of its
// own, holding no thread once the head is in; anything else is one
// exchange over the member's kept-alive connections. An
// error answered by the member is passed on as it is; a member that cannot
// be reached is 503 ServiceUnavailable (504 Timeout when it does not
// answer in time) naming the cluster. An upgrade request (exec, attach,
// port-forward) goes on a connection of its own to a dialled member, with
// the headers of the upgrade (forward.h, ForwardUpgrade); its bytes then
// go both ways as they come. To a member behind an agent it goes through
// the tunnel, and the agent connects back to this server for the session
// (tunnel.h).
//
// Works on every API server of the federation, leader or not: it reads the
// Cluster and its Secret on each request and keeps one transport per
// cluster while its Secret is unchanged.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "apiserver/api_server.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "client/client.h"
#include "client/transport.h"

namespace flotilla::federation::cluster {

class Tunnels;

struct ClusterProxyOptions {
  // Bounds connecting to the member and waiting for its response's head.
  Duration head_timeout = std::chrono::seconds(30);
  // The tunnels of agent-connected clusters (tunnel.h); null: those
  // clusters are 503. Not owned.
  Tunnels* tunnels = nullptr;
};

class ClusterProxy {
 public:
  explicit ClusterProxy(ClusterProxyOptions opts = {}) : opts_(opts) {}

  // Reads Clusters and Secrets through `federation` (not owned; must
  // outlive the proxy). Until then every request is 503.
  void Start(client::Client& federation) { federation_.store(&federation); }

  // ApiServerOptions::proxy.
  void Serve(apiserver::Request& req, const apiserver::ProxyTarget& target,
             const apiserver::UserInfo& user, apiserver::Responder& resp);
  // ApiServerOptions::pod_logs and pod_delete on the federation: `pod` is
  // one of the members' pods (member_pods.h); the request (its log, its
  // deletion) goes as it came, method, path, query and body, to the cluster
  // its federation.kubernetes.io/cluster label names, as Serve sends it.
  void ServeForPod(apiserver::Request& req, const json::object& pod,
                   const apiserver::UserInfo& user, apiserver::Responder& resp);

 private:
  // An upgrade request: through a connection of its own to the member.
  void ServeUpgrade(client::Client& federation, apiserver::Request& req,
                    const apiserver::ProxyTarget& target, const apiserver::UserInfo& user,
                    apiserver::Responder& resp);
  // An upgrade request to an agent-connected member: through the tunnel,
  // then spliced with the agent's connection back (tunnel.h).
  void ServeUpgradeByAgent(client::Client& federation, const std::string& method,
                           const std::string& path,
                           std::vector<std::pair<std::string, std::string>> headers,
                           const apiserver::ProxyTarget& target, apiserver::Responder& resp);
  // The transport to cluster `name`: NotFound when there is no such
  // Cluster; the Secret's problem when its credentials cannot be used.
  StatusOr<std::shared_ptr<client::Transport>> TransportFor(client::Client& federation,
                                                            const std::string& name);

  const ClusterProxyOptions opts_;
  std::atomic<client::Client*> federation_{nullptr};
  struct Cached {
    std::string secret_version;  // uid/resourceVersion of the Secret it was built from
    std::shared_ptr<client::Transport> transport;
  };
  Mutex mu_;
  std::map<std::string, Cached> transports_ GUARDED_BY(mu_);
};

}  // namespace flotilla::federation::cluster
