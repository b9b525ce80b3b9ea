// Agents' tunnels (tunnel.h).
#include "federation/cluster/tunnel.h"

#include <openssl/rand.h>
#include <strings.h>

#include <cstdio>

#include "api/views.h"
#include "apiserver/meta.h"
#include "apiserver/responses.h"
#include "base/log.h"
#include "federation/cluster/forward.h"
#include "federation/cluster/server_lease.h"
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

// The token of an "Authorization: Bearer TOKEN" header; "" for none.
std::string BearerToken(std::string_view header) {
  size_t space = header.find(' ');
  if (space == std::string_view::npos || strncasecmp(header.data(), "bearer", 6) != 0 ||
      space != 6) {
    return "";
  }
  std::string_view token = header.substr(space + 1);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  return std::string(token.substr(0, token.find(' ')));
}

// 128 random bits, in hex: a splice's id.
std::string NewSpliceId() {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) std::abort();  // no entropy: nothing is safe
  std::string id;
  char hex[3];
  for (unsigned char b : bytes) {
    std::snprintf(hex, sizeof hex, "%02x", b);
    id += hex;
  }
  return id;
}

const client::ResourceRef kTokenReviews{"authentication.k8s.io", "v1", "tokenreviews", false};
const client::ResourceRef kSubjectAccessReviews{"authorization.k8s.io", "v1",
                                                "subjectaccessreviews", false};

}  // namespace

std::string SpliceRequest::Serialize() const {
  json::array pairs;
  for (const auto& [name, value] : headers)
    pairs.push_back(json::array{json::string(name), json::string(value)});
  json::object out{{"headers", std::move(pairs)}};
  if (!method.empty()) out["method"] = method;
  if (!server.empty()) out["server"] = server;
  return json::serialize(out);
}

StatusOr<SpliceRequest> SpliceRequest::Parse(std::string_view body) {
  FLOTILLA_ASSIGN_OR_RETURN(json::object object, ParseJsonObject(body));
  SpliceRequest out;
  out.method = StringAt(object, "method");
  out.server = StringAt(object, "server");
  const json::value* headers = object.if_contains("headers");
  if (headers == nullptr || !headers->is_array()) {
    return Status::BadRequest("an upgrade request through a tunnel names no headers");
  }
  for (const json::value& pair : headers->as_array()) {
    const json::array* p = pair.if_array();
    if (p == nullptr || p->size() != 2 || !(*p)[0].is_string() || !(*p)[1].is_string()) {
      return Status::BadRequest(
          "a header of an upgrade request through a tunnel is not [name, value]");
    }
    out.headers.emplace_back((*p)[0].as_string(), (*p)[1].as_string());
  }
  return out;
}

void Tunnels::Start(client::Client& federation) {
  federation_.store(&federation);
  MutexLock lock(mu_);
  if (!rechecks_.joinable() && !stopping_) rechecks_ = std::thread([this] { Recheck(); });
}

void Tunnels::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
    cv_.NotifyAll();
  }
  if (rechecks_.joinable()) rechecks_.join();
}

void Tunnels::Recheck() {
  const Duration renew = std::max<Duration>(opts_.claim_duration / 4, std::chrono::milliseconds(1));
  const Duration period = std::min(renew, opts_.recheck);
  auto next_review = std::chrono::steady_clock::now() + opts_.recheck;
  for (;;) {
    std::map<std::string, Opener> openers;
    {
      MutexLock lock(mu_);
      ScopedBlocking blocking;
      if (cv_.WaitFor(lock, period, [&]() REQUIRES(mu_) { return stopping_; })) return;
      openers = openers_;
    }
    // Only the tunnels up here.
    std::erase_if(openers, [&](const auto& entry) { return !For(entry.first)->Connected(); });
    client::Client* federation = federation_.load();
    RenewClaims(*federation, openers);
    if (std::chrono::steady_clock::now() >= next_review) {
      next_review = std::chrono::steady_clock::now() + opts_.recheck;
      ReviewOpeners(*federation, openers);
    }
  }
}

void Tunnels::RenewClaims(client::Client& federation,
                          const std::map<std::string, Opener>& openers) {
  for (const auto& [name, opener] : openers) {
    Status renewed = claims_.Renew(federation, opener.cluster, opener.instance);
    if (renewed.Is(Reason::kConflict)) {
      CloseIfHeldBy(name, opener, renewed.message());
    } else if (!renewed.ok()) {
      // Tried again next period, well within the claim's duration.
      spdlog::warn("cluster {}: renewing the claim of agent instance {}: {}", name, opener.instance,
                   renewed.ToString());
    }
  }
}

void Tunnels::ReviewOpeners(client::Client& federation,
                            const std::map<std::string, Opener>& openers) {
  for (const auto& [name, opener] : openers) {
    if (opener.token.empty()) continue;
    std::string why = Revoked(federation, name, opener);
    if (!why.empty()) CloseIfHeldBy(name, opener, why);
  }
}

void Tunnels::CloseIfHeldBy(const std::string& name, const Opener& opener, const std::string& why) {
  {
    MutexLock lock(mu_);
    // Unless another agent opened it anew meanwhile.
    auto it = openers_.find(name);
    if (it == openers_.end() || it->second.token != opener.token ||
        it->second.instance != opener.instance) {
      return;
    }
    openers_.erase(it);
  }
  spdlog::warn("cluster {}: closing the tunnel of agent {} (instance {}): {}", name,
               opener.user.name, opener.instance, why);
  Close(name);
}

std::string Tunnels::Revoked(client::Client& federation, const std::string& name,
                             const Opener& opener) {
  auto review = federation.Create(kTokenReviews, "",
                                  json::object{{"apiVersion", "authentication.k8s.io/v1"},
                                               {"kind", "TokenReview"},
                                               {"spec", {{"token", opener.token}}}});
  // A review that cannot be made now is tried again next time.
  if (!review.ok()) return "";
  if (const json::value* ok = Find(*review, "status.authenticated");
      ok == nullptr || !ok->is_bool() || !ok->as_bool()) {
    std::string error = StringAt(*review, "status.error");
    return "its token no longer authenticates" + (error.empty() ? "" : " (" + error + ")");
  }
  json::array groups;
  for (const std::string& g : opener.user.groups) groups.emplace_back(g);
  auto access = federation.Create(kSubjectAccessReviews, "",
                                  json::object{{"apiVersion", "authorization.k8s.io/v1"},
                                               {"kind", "SubjectAccessReview"},
                                               {"spec",
                                                {{"user", opener.user.name},
                                                 {"uid", opener.user.uid},
                                                 {"groups", std::move(groups)},
                                                 {"resourceAttributes",
                                                  {{"group", "federation"},
                                                   {"resource", "clusters"},
                                                   {"subresource", "tunnel"},
                                                   {"verb", "create"},
                                                   {"name", name}}}}}});
  if (!access.ok()) return "";
  if (const json::value* ok = Find(*access, "status.allowed");
      ok == nullptr || !ok->is_bool() || !ok->as_bool()) {
    return "it may no longer open the tunnel of cluster \"" + name + "\"";
  }
  return "";
}

std::string Tunnels::HeldBy(const std::string& name) {
  MutexLock lock(mu_);
  auto it = openers_.find(name);
  return it == openers_.end() ? "" : it->second.instance;
}

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

std::string Tunnels::ExpectSplice(const std::string& name) {
  std::string id = NewSpliceId();
  MutexLock lock(splices_mu_);
  splices_[id].cluster = name;
  return id;
}

std::optional<http2::Upgraded> Tunnels::AwaitSplice(const std::string& id, Duration timeout) {
  MutexLock lock(splices_mu_);
  {
    ScopedBlocking blocking;
    splice_in_.WaitFor(lock, timeout, [&]() REQUIRES(splices_mu_) {
      auto it = splices_.find(id);
      return it == splices_.end() || it->second.back.has_value();
    });
  }
  auto it = splices_.find(id);
  if (it == splices_.end()) return std::nullopt;
  std::optional<http2::Upgraded> back = std::move(it->second.back);
  splices_.erase(it);
  return back;
}

void Tunnels::Deposit(const std::string& id, http2::Upgraded up) {
  {
    MutexLock lock(splices_mu_);
    auto it = splices_.find(id);
    if (it != splices_.end() && !it->second.back.has_value()) {
      it->second.back = std::move(up);
      splice_in_.NotifyAll();
      return;
    }
  }
  // Too late: no one waits for it any more.
  CloseEnd(EndOf(std::move(up)));
}

void Tunnels::ServeSplice(apiserver::Request& req, const std::string& name,
                          apiserver::Responder& resp) {
  if (!HasToken(req.Header("upgrade"), kSpliceProtocol) ||
      !HasToken(req.Header("connection"), "upgrade")) {
    return apiserver::RespondStatus(
        resp, Status::BadRequest(std::string("a connection back for an upgrade request needs "
                                             "Connection: Upgrade and Upgrade: ") +
                                 kSpliceProtocol));
  }
  std::string id = req.Query("splice");
  {
    MutexLock lock(splices_mu_);
    auto it = splices_.find(id);
    if (it == splices_.end() || it->second.cluster != name || it->second.back.has_value()) {
      return apiserver::RespondStatus(
          resp, Status::NotFound("no upgrade request to cluster \"" + name +
                                 "\" waits on this server for a connection back with that id"));
    }
  }
  bool switched =
      resp.SwitchProtocols({{"Upgrade", kSpliceProtocol}, {"Connection", "Upgrade"}},
                           [this, id](http2::Upgraded up) { Deposit(id, std::move(up)); });
  if (!switched) {
    apiserver::RespondStatus(
        resp, Status::BadRequest("a connection back needs HTTPS over HTTP/1.1 (an Upgrade)"));
  }
}

void Tunnels::Serve(apiserver::Request& req, const std::string& name,
                    const apiserver::UserInfo& user, apiserver::Responder& resp) {
  client::Client* federation = federation_.load();
  if (federation == nullptr) {
    return apiserver::RespondStatus(resp, Status::Unavailable("the tunnel endpoint is starting"));
  }
  if (!req.Query("splice").empty()) return ServeSplice(req, name, resp);
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
  std::string instance = req.Query("instance");
  if (!ValidAgentInstance(instance)) {
    return apiserver::RespondStatus(
        resp, Status::BadRequest("instance \"" + instance +
                                 "\" is not an agent instance id (up to 128 letters, digits, "
                                 "'-', '_' and '.')"));
  }
  // An agent that names no instance is one of its own, which no later
  // tunnel can take the place of.
  if (instance.empty()) instance = "unnamed-" + apiserver::NewUid();
  if (Status claimed = claims_.Claim(*federation, *cluster, instance); !claimed.ok()) {
    return apiserver::RespondStatus(resp, claimed);
  }
  std::shared_ptr<client::H2Tunnel> tunnel = For(name);
  if (tunnel->Connected() && HeldBy(name) != instance) {
    return apiserver::RespondStatus(
        resp, Status::Conflict("cluster \"" + name + "\" already has a connected agent"));
  }
  std::string who = user.name;
  std::string remote = req.remote;
  Opener opener{BearerToken(req.Header("authorization")), user, instance, *cluster};
  Duration keepalive = opts_.keepalive;
  apiserver::Headers headers{{"Upgrade", kTunnelProtocol}, {"Connection", "Upgrade"}};
  if (!opts_.server_id.empty()) headers.emplace_back(std::string(kServerIdHeader), opts_.server_id);
  bool switched = resp.SwitchProtocols(headers, [this, tunnel, name, who, remote, keepalive,
                                                 opener](http2::Upgraded up) {
    // The same instance again (restarted, its old connection not yet seen
    // to die): the new connection takes the old one's place.
    const bool replace = HeldBy(name) == opener.instance;
    Status attached = tunnel->Attach(
        std::move(up), keepalive,
        [name, remote] {
          spdlog::info("cluster {}: the agent's tunnel from {} closed", name, remote);
        },
        replace);
    if (!attached.ok()) {
      spdlog::warn("cluster {}: the tunnel from {} refused: {}", name, remote, attached.message());
      return;
    }
    {
      MutexLock lock(mu_);
      openers_[name] = opener;
    }
    spdlog::info("cluster {}: agent {} (instance {}) connected from {}", name, who, opener.instance,
                 remote);
  });
  if (!switched) {
    apiserver::RespondStatus(
        resp, Status::BadRequest("a tunnel needs an HTTPS connection over HTTP/1.1 (an Upgrade)"));
  }
}

}  // namespace flotilla::federation::cluster
