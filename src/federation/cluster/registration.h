// Agents that register with a bootstrap token (docs/federation.md,
// "Registering an agent with a bootstrap token"), in the manner of
// `kubeadm join`:
//
//   POST /apis/federation/v1beta1/clusters/NAME/register
//
// by a bootstrap token's user (apiserver/bootstrap_token.h; RBAC create on
// clusters/register, which the group system:bootstrappers:flotilla:agent is
// bound to), with the Cluster the agent asks for as its body (labels and
// spec.provider, region, zones; connection Agent; no secretRef). The
// federation then, as its registrar (apiserver::kRegistrarUser):
// - creates the Cluster (spec.connection Agent), or takes the one of that
//   name that is agent-connected and has no agent yet;
// - gives the agent its own identity: the ServiceAccount
//   flotilla-system/agent-NAME, and the ClusterRole and ClusterRoleBinding
//   system:flotilla:agent:NAME that let it read its Cluster and open its
//   tunnel, nothing else (not another cluster's: 403);
// - answers 201 with a TokenRequest (authentication.k8s.io/v1) whose
//   status.token is that account's token, valid for `token_ttl`.
// The agent renews its token the same way, as itself: the same POST by the
// cluster's own ServiceAccount (its role allows it for its cluster) is
// answered with a new token for that account, nothing else changed.
//
// All three are owned by the Cluster: deleting it deletes them, and ends
// the tunnel. Deleting the ServiceAccount revokes the agent (its tokens die
// with it, Tunnels closes its tunnel) and lets the cluster be registered
// again. A cluster whose agent has an identity already is 409, as is one
// joined directly.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <string>

#include "apiserver/api_server.h"
#include "base/clock.h"
#include "client/client.h"

namespace flotilla::federation::cluster {

// The agent's ServiceAccount, in flotilla-system.
std::string AgentServiceAccount(const std::string& cluster);
// Its ClusterRole and ClusterRoleBinding.
std::string AgentRoleName(const std::string& cluster);
// `meta` with an ownerReference to `cluster` (a Cluster object): what an
// agent is given, and its claim, go with the Cluster.
json::object OwnedBy(const json::object& cluster, json::object meta);

struct RegistrarOptions {
  Duration token_ttl = std::chrono::hours(24 * 365);
};

class AgentRegistrar {
 public:
  explicit AgentRegistrar(RegistrarOptions opts = {}) : opts_(opts) {}

  // Writes through `federation` (not owned; must outlive this), which must
  // be allowed to create Clusters, ServiceAccounts, their tokens, and RBAC
  // objects granting what the agent needs: the server's is the identity
  // apiserver::kRegistrarUser. Until then registering is 503.
  void Start(client::Client& federation) { federation_.store(&federation); }

  // ApiServerOptions::register_agent.
  void Serve(apiserver::Request& req, const std::string& name, const apiserver::UserInfo& user,
             apiserver::Responder& resp);

 private:
  StatusOr<json::object> Register(client::Client& federation, const std::string& name,
                                  const json::object& wanted);
  // A TokenRequest answered for ServiceAccount `account`, valid token_ttl.
  StatusOr<json::object> IssueToken(client::Client& federation, const std::string& account);

  const RegistrarOptions opts_;
  std::atomic<client::Client*> federation_{nullptr};
};

}  // namespace flotilla::federation::cluster
