// Agents' tunnels (tunnel.h).
#include "federation/cluster/tunnel.h"

#include <strings.h>

#include "api/views.h"
#include "apiserver/responses.h"
#include "base/log.h"
#include "federation/common/names.h"

namespace flotilla::federation::cluster {
namespace {

// Whether the comma-separated list `header` holds `token`, case aside.
bool HasToken(std::string_view header, std::string_view token) {
  while (!header.empty()) {
    size_t comma = header.find(',');
    std::string_view item = header.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.size() == token.size() && strncasecmp(item.data(), token.data(), item.size()) == 0) {
      return true;
    }
    if (comma == std::string_view::npos) break;
    header.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

std::shared_ptr<client::H2Tunnel> Tunnels::For(const std::string& name) {
  MutexLock lock(mu_);
  auto& tunnel = tunnels_[name];
  if (tunnel == nullptr) tunnel = std::make_shared<client::H2Tunnel>(name);
  return tunnel;
}

void Tunnels::Close(const std::string& name) {
  std::shared_ptr<client::H2Tunnel> tunnel;
  {
    MutexLock lock(mu_);
    auto it = tunnels_.find(name);
    if (it == tunnels_.end()) return;
    tunnel = it->second;
  }
  tunnel->Close();
}

void Tunnels::Serve(apiserver::Request& req, const std::string& name,
                    const apiserver::UserInfo& user, apiserver::Responder& resp) {
  client::Client* federation = federation_.load();
  if (federation == nullptr) {
    return apiserver::RespondStatus(resp, Status::Unavailable("the tunnel endpoint is starting"));
  }
  if (!HasToken(req.Header("upgrade"), kTunnelProtocol) ||
      !HasToken(req.Header("connection"), "upgrade")) {
    return apiserver::RespondStatus(
        resp, Status::BadRequest(std::string("a tunnel request needs Connection: Upgrade and "
                                             "Upgrade: ") +
                                 kTunnelProtocol));
  }
  auto cluster = federation->Get(kClusters, "", name);
  if (!cluster.ok()) return apiserver::RespondStatus(resp, cluster.status());
  if (!api::ClusterView(*cluster).via_agent()) {
    return apiserver::RespondStatus(
        resp, Status::Conflict("cluster \"" + name +
                               "\" is not connected by an agent (its spec.connection is not "
                               "Agent)"));
  }
  std::shared_ptr<client::H2Tunnel> tunnel = For(name);
  if (tunnel->Connected()) {
    return apiserver::RespondStatus(
        resp, Status::Conflict("cluster \"" + name + "\" already has a connected agent"));
  }
  std::string who = user.name;
  std::string remote = req.remote;
  Duration keepalive = opts_.keepalive;
  bool switched = resp.SwitchProtocols(
      {{"Upgrade", kTunnelProtocol}, {"Connection", "Upgrade"}},
      [tunnel, name, who, remote, keepalive](http2::Upgraded up) {
        Status attached = tunnel->Attach(std::move(up), keepalive, [name, remote] {
          spdlog::info("cluster {}: the agent's tunnel from {} closed", name, remote);
        });
        if (!attached.ok()) {
          spdlog::warn("cluster {}: the tunnel from {} refused: {}", name, remote,
                       attached.message());
          return;
        }
        spdlog::info("cluster {}: agent {} connected from {}", name, who, remote);
      });
  if (!switched) {
    apiserver::RespondStatus(
        resp, Status::BadRequest("a tunnel needs an HTTPS connection over HTTP/1.1 (an Upgrade)"));
  }
}

}  // namespace flotilla::federation::cluster
