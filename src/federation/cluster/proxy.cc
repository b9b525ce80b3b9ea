// The cluster proxy (proxy.h).
#include "federation/cluster/proxy.h"

#include <strings.h>

#include <optional>
#include <utility>
#include <vector>

#include "api/views.h"
#include "apiserver/responses.h"
#include "client/rest_client.h"
#include "federation/cluster/forward.h"
#include "federation/cluster/member_access.h"
#include "federation/cluster/tunnel.h"
#include "federation/common/names.h"

namespace flotilla::federation::cluster {
namespace {

// The request to the member: the caller's method, path, query, body,
// Content-Type and Accept, as the caller impersonated.
client::ApiRequest MemberRequest(apiserver::Request& req, const apiserver::ProxyTarget& target,
                                 const apiserver::UserInfo& user) {
  client::ApiRequest out;
  out.method = req.method;
  // Target() appends '?' and the query only when `query` has entries: the
  // caller's query goes through as it was encoded, in its order.
  out.path = target.query.empty() ? target.path : target.path + "?" + target.query;
  out.body = std::move(req.body);
  out.content_type = req.Header("content-type");
  std::string accept = req.Header("accept");
  if (!accept.empty()) out.headers.emplace_back("Accept", accept);
  out.headers.emplace_back("Impersonate-User", user.name);
  for (const std::string& group : user.groups) {
    if (group != "system:authenticated") out.headers.emplace_back("Impersonate-Group", group);
  }
  return out;
}

// A member the request could not reach: 503, or 504 when it did not answer
// in time.
void Unreachable(apiserver::Responder& resp, const apiserver::ProxyTarget& target,
                 const Status& failure) {
  apiserver::RespondStatus(
      resp, Status(failure.reason(),
                   "error trying to reach cluster \"" + target.name + "\": " + failure.message()));
}

}  // namespace

StatusOr<std::shared_ptr<client::Transport>> ClusterProxy::TransportFor(client::Client& federation,
                                                                        const std::string& name) {
  auto cluster = federation.Get(kClusters, "", name);
  if (!cluster.ok()) {
    if (cluster.status().Is(Reason::kNotFound)) {
      MutexLock lock(mu_);
      transports_.erase(name);  // a cluster that left keeps no pool
    }
    return cluster.status();
  }
  if (api::ClusterView(*cluster).via_agent()) {
    if (opts_.tunnels == nullptr) {
      return Status::Unavailable("this federation server takes no agents' tunnels");
    }
    MutexLock lock(mu_);
    Cached& cached = transports_[name];
    if (cached.secret_version != kAgentCredentials) {
      client::RestOptions opts{.qps = 0, .timeout = opts_.head_timeout, .max_retries = 0};
      opts.user_agent = "flotilla-cluster-proxy";
      FLOTILLA_ASSIGN_OR_RETURN(
          auto transport,
          client::NewRestTransport(AgentRestConfig(*cluster, opts_.tunnels->For(name)), opts));
      cached = {std::string(kAgentCredentials), std::move(transport)};
    }
    return cached.transport;
  }
  SecretRef ref = SecretRefOf(*cluster);
  auto secret = federation.Get(kSecrets, ref.ns, ref.name);
  if (!secret.ok()) {
    return Status::Unavailable("the credentials of cluster \"" + name +
                               "\": " + secret.status().message());
  }
  std::string version = SecretVersion(*secret);
  {
    MutexLock lock(mu_);
    auto it = transports_.find(name);
    if (it != transports_.end() && it->second.secret_version == version) {
      return it->second.transport;
    }
  }
  auto config = RestConfigFromSecret(*secret);
  if (!config.ok()) {
    return Status::Unavailable("the credentials of cluster \"" + name +
                               "\": " + config.status().message());
  }
  // A proxy passes the caller's request on once: no retries, no
  // client-side limit (the member's own limits answer the caller).
  client::RestOptions opts{.qps = 0, .timeout = opts_.head_timeout, .max_retries = 0};
  opts.user_agent = "flotilla-cluster-proxy";
  FLOTILLA_ASSIGN_OR_RETURN(auto transport, client::NewRestTransport(*config, opts));
  MutexLock lock(mu_);
  transports_[name] = {version, transport};
  return transport;
}

void ClusterProxy::Serve(apiserver::Request& req, const apiserver::ProxyTarget& target,
                         const apiserver::UserInfo& user, apiserver::Responder& resp) {
  client::Client* federation = federation_.load();
  if (federation == nullptr) {
    return apiserver::RespondStatus(resp, Status::Unavailable("the cluster proxy is starting"));
  }
  if (!req.Header("upgrade").empty()) return ServeUpgrade(*federation, req, target, user, resp);
  auto transport = TransportFor(*federation, target.name);
  if (!transport.ok()) {
    return apiserver::RespondStatus(resp, transport.status(), target.name, target.resource);
  }
  // A watch or a followed log streams as it arrives; anything else is one
  // exchange over the member's kept-alive connections.
  bool streams = req.QueryBool("watch") || req.QueryBool("follow");
  Forward(**transport, MemberRequest(req, target, user), streams, resp,
          [&](const Status& failure) { Unreachable(resp, target, failure); });
}

void ClusterProxy::ServeUpgrade(client::Client& federation, apiserver::Request& req,
                                const apiserver::ProxyTarget& target,
                                const apiserver::UserInfo& user, apiserver::Responder& resp) {
  auto cluster = federation.Get(kClusters, "", target.name);
  if (!cluster.ok()) {
    return apiserver::RespondStatus(resp, cluster.status(), target.name, target.resource);
  }
  auto headers = UpgradeHeaders(req.headers);
  for (auto& header : MemberRequest(req, target, user).headers) {
    if (header.first.starts_with("Impersonate-")) headers.push_back(std::move(header));
  }
  std::string path = target.query.empty() ? target.path : target.path + "?" + target.query;
  if (api::ClusterView(*cluster).via_agent()) {
    return ServeUpgradeByAgent(federation, req.method, path, std::move(headers), target, resp);
  }
  SecretRef ref = SecretRefOf(*cluster);
  auto secret = federation.Get(kSecrets, ref.ns, ref.name);
  StatusOr<client::RestConfig> config =
      secret.ok() ? RestConfigFromSecret(*secret) : StatusOr<client::RestConfig>(secret.status());
  if (!config.ok()) {
    return apiserver::RespondStatus(
        resp, Status::Unavailable("the credentials of cluster \"" + target.name +
                                  "\": " + config.status().message()));
  }
  ForwardUpgrade(*config, req.method, path, headers, opts_.head_timeout, resp,
                 [&](const Status& failure) { Unreachable(resp, target, failure); });
}

void ClusterProxy::ServeUpgradeByAgent(client::Client& federation, const std::string& method,
                                       const std::string& path,
                                       std::vector<std::pair<std::string, std::string>> headers,
                                       const apiserver::ProxyTarget& target,
                                       apiserver::Responder& resp) {
  auto transport = TransportFor(federation, target.name);
  if (!transport.ok()) {
    return apiserver::RespondStatus(resp, transport.status(), target.name, target.resource);
  }
  Tunnels& tunnels = *opts_.tunnels;
  std::string id = tunnels.ExpectSplice(target.name);
  SpliceRequest splice{
      .method = method, .server = tunnels.server_id(), .headers = std::move(headers)};
  auto answer = (*transport)
                    ->Do({.method = "POST",
                          .path = path,
                          .body = splice.Serialize(),
                          .content_type = "application/json",
                          .headers = {{kSpliceHeader, id}}});
  if (!answer.ok() || answer->content_type != kSpliceContentType) {
    tunnels.AwaitSplice(id, Duration::zero());  // forgets it
    if (!answer.ok()) return Unreachable(resp, target, answer.status());
    // The member did not switch: its answer, as it came.
    apiserver::Headers out;
    if (!answer->content_type.empty()) out.emplace_back("Content-Type", answer->content_type);
    for (std::string& w : answer->warnings) out.emplace_back("Warning", std::move(w));
    return resp.Respond(answer->code, out, std::move(answer->body));
  }
  auto switched = SpliceRequest::Parse(answer->body);
  std::optional<http2::Upgraded> back = tunnels.AwaitSplice(id, opts_.head_timeout);
  if (!switched.ok() || !back.has_value()) {
    if (back.has_value()) CloseEnd(EndOf(std::move(*back)));
    return Unreachable(resp, target,
                       switched.ok() ? Status::Timeout("its agent did not connect back in time")
                                     : switched.status());
  }
  SwitchAndSplice(resp, switched->headers, EndOf(std::move(*back)));
}

void ClusterProxy::ServeForPod(apiserver::Request& req, const json::object& pod,
                               const apiserver::UserInfo& user, apiserver::Responder& resp) {
  std::string_view cluster = api::ObjectView(pod).label(api::kMemberClusterLabel);
  if (cluster.empty()) {
    return apiserver::RespondStatus(resp, Status::BadRequest("the pod names no member cluster"));
  }
  apiserver::ProxyTarget target{nullptr, "", std::string(cluster), req.target, ""};
  if (size_t q = target.path.find('?'); q != std::string::npos) {
    target.query = target.path.substr(q + 1);
    target.path.resize(q);
  }
  Serve(req, target, user, resp);
}

}  // namespace flotilla::federation::cluster
