// The agent (agent.h).
#include "federation/cluster/agent.h"

#include <algorithm>
#include <random>

#include "api/views.h"
#include "apiserver/certs.h"
#include "apiserver/meta.h"
#include "apiserver/responses.h"
#include "apiserver/sa_token.h"
#include "base/log.h"
#include "client/response_decoder.h"
#include "client/rest_client.h"
#include "client/upgrade.h"
#include "federation/cluster/agent_claim.h"
#include "federation/cluster/forward.h"
#include "federation/cluster/join.h"
#include "federation/cluster/server_lease.h"
#include "federation/cluster/tunnel.h"
#include "federation/common/names.h"

namespace flotilla::federation::cluster {
namespace {

// Headers that belong to the tunnel's own exchange, not to the request
// going on to the member: its credentials are the agent's.
bool HopByHop(std::string_view name) {
  for (std::string_view h :
       {"host", "authorization", "content-length", "content-type", "connection", "keep-alive", "te",
        "transfer-encoding", "upgrade", "proxy-connection"}) {
    if (name == h) return true;
  }
  return false;
}

// The federation's request as the member gets it: method, path and query
// as sent, body, and its headers but the tunnel's own. HTTP/2 joins a
// repeated header's values with commas; Impersonate-Group is repeated
// again, one group each, as the member reads it.
client::ApiRequest MemberRequest(apiserver::Request& req) {
  client::ApiRequest out;
  out.method = req.method;
  out.path = req.target;
  out.body = std::move(req.body);
  out.content_type = req.Header("content-type");
  for (const auto& [name, value] : req.headers) {
    if (HopByHop(name)) continue;
    if (name != "impersonate-group") {
      out.headers.emplace_back(name, value);
      continue;
    }
    std::string_view rest = value;
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      out.headers.emplace_back(name, std::string(rest.substr(0, comma)));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return out;
}

// The Cluster as Join makes it, but connected by agent: no Secret.
json::object AgentCluster(const AgentOptions& opts) {
  JoinOptions join{.name = opts.name,
                   .member = opts.member,
                   .labels = opts.labels,
                   .provider = opts.provider,
                   .region = opts.region,
                   .zones = opts.zones};
  json::object cluster = ClusterObject(join);
  json::object& spec = cluster["spec"].as_object();
  spec.erase("secretRef");
  spec["connection"] = "Agent";
  return cluster;
}

}  // namespace

StatusOr<std::string> DiscoverFederationCa(const BootstrapOptions& boot) {
  const std::string& pin = boot.ca_cert_hash;
  bool well_formed = pin.size() == 7 + 64 && pin.starts_with("sha256:") &&
                     pin.find_first_not_of("0123456789abcdef", 7) == std::string::npos;
  if (!well_formed) {
    return Status::BadRequest(
        "--ca-cert-hash must be sha256: and 64 lower-case hex digits, not \"" + pin + "\"");
  }
  client::RestConfig config;
  config.server = boot.server;
  FLOTILLA_ASSIGN_OR_RETURN(std::vector<std::string> pems,
                            client::PeerCertificates(config, boot.timeout));
  std::vector<apiserver::certs::X509Ptr> chain;
  for (const std::string& pem : pems) {
    FLOTILLA_ASSIGN_OR_RETURN(auto cert, apiserver::certs::CertFromPem(pem));
    chain.push_back(std::move(cert));
  }
  std::string seen;
  for (size_t i = 0; i < chain.size(); ++i) {
    std::string its = apiserver::certs::PublicKeyPin(chain[i].get());
    if (its == pin &&
        apiserver::certs::VerifiesAgainst(chain.front().get(), chain[i].get(), RealClock().Now())) {
      return pems[i];
    }
    seen += (seen.empty() ? "" : ", ") + its;
  }
  return Status::Forbidden("the federation at " + boot.server +
                           " presents no CA certificate whose public key is " + pin +
                           " (it presents " + (seen.empty() ? "none" : seen) +
                           "): a wrong --ca-cert-hash, or not the federation");
}

namespace {

// POSTs the agent's Cluster to clusters/NAME/register as `federation`'s
// credentials say: the token the federation answers with.
StatusOr<std::string> PostRegister(const AgentOptions& opts, const client::RestConfig& federation,
                                   Duration timeout) {
  client::RestOptions rest{.timeout = timeout, .max_retries = 0};
  rest.user_agent = "flotilla-agent";
  FLOTILLA_ASSIGN_OR_RETURN(auto transport, client::NewRestTransport(federation, rest));
  FLOTILLA_ASSIGN_OR_RETURN(
      client::ApiResponse answer,
      transport->Do({.method = "POST",
                     .path = "/apis/federation/v1beta1/clusters/" + opts.name + "/register",
                     .body = json::serialize(AgentCluster(opts)),
                     .content_type = "application/json"}));
  if (answer.code != 201) return client::ErrorFromResponse(answer.code, answer.body);
  FLOTILLA_ASSIGN_OR_RETURN(json::object review, ParseJsonObject(answer.body));
  std::string token = StringAt(review, "status.token");
  if (token.empty()) {
    return Status::Internal("the federation registered cluster \"" + opts.name +
                            "\" but answered with no token");
  }
  return token;
}

}  // namespace

StatusOr<client::RestConfig> RegisterWithToken(const AgentOptions& opts,
                                               const BootstrapOptions& boot) {
  FLOTILLA_ASSIGN_OR_RETURN(std::string ca, DiscoverFederationCa(boot));
  client::RestConfig federation;
  federation.server = boot.server;
  federation.ca_pem = ca;
  federation.token = boot.token;
  FLOTILLA_ASSIGN_OR_RETURN(federation.token, PostRegister(opts, federation, boot.timeout));
  return federation;
}

StatusOr<std::unique_ptr<Agent>> Agent::Create(AgentOptions opts) {
  if (opts.name.empty()) return Status::BadRequest("the agent needs the cluster's name");
  if (!ValidAgentInstance(opts.instance)) {
    return Status::BadRequest("\"" + opts.instance +
                              "\" is no agent instance id (up to 128 letters, digits, '-', '_' "
                              "and '.')");
  }
  if (opts.instance.empty()) opts.instance = apiserver::NewUid();
  std::unique_ptr<Agent> agent(new Agent(std::move(opts)));
  const AgentOptions& o = agent->opts_;
  {
    MutexLock lock(agent->mu_);
    agent->token_ = o.federation.token;
  }
  FLOTILLA_ASSIGN_OR_RETURN(agent->federation_, client::NewRestClient(o.federation));
  // The federation's client retries; a request goes on to the member once.
  client::RestOptions member{.qps = 0, .timeout = o.member_timeout, .max_retries = 0};
  member.user_agent = "flotilla-agent";
  FLOTILLA_ASSIGN_OR_RETURN(agent->member_, client::NewRestTransport(o.member, member));
  apiserver::HttpServerOptions server;
  server.listen = false;
  server.http2_max_streams = 10000;  // the federation's every watch of the member
  server.idle_timeout_sec = 24 * 3600;
  server.http2_silence_timeout_sec =
      static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(o.silence_timeout).count());
  server.max_body_bytes = 64 << 20;
  Agent* self = agent.get();
  FLOTILLA_ASSIGN_OR_RETURN(
      agent->server_, apiserver::HttpServer::Start(
                          server, [self](apiserver::Request& req, apiserver::Responder& resp) {
                            self->Serve(req, resp);
                          }));
  return agent;
}

Agent::~Agent() {
  Stop();
  if (server_) server_->Stop();
}

Status Agent::Register() {
  auto existing = federation_->Get(kClusters, "", opts_.name);
  if (existing.ok()) {
    if (!api::ClusterView(*existing).via_agent()) {
      return Status::Conflict("cluster \"" + opts_.name +
                              "\" is joined to the federation directly; unjoin it first");
    }
    return Status::Ok();
  }
  if (!existing.status().Is(Reason::kNotFound)) return existing.status();
  auto created = federation_->Create(kClusters, "", AgentCluster(opts_));
  if (created.ok() || created.status().Is(Reason::kAlreadyExists)) return Status::Ok();
  return created.status();
}

void Agent::Serve(apiserver::Request& req, apiserver::Responder& resp) {
  if (std::string id = req.Header(kSpliceHeader); !id.empty()) {
    return ServeUpgrade(req, id, resp);
  }
  bool streams = req.QueryBool("watch") || req.QueryBool("follow");
  Forward(*member_, MemberRequest(req), streams, resp, [&](const Status& failure) {
    apiserver::RespondStatus(
        resp, Status(failure.reason(), "the agent of cluster \"" + opts_.name +
                                           "\" cannot reach it: " + failure.message()));
  });
}

void Agent::ServeUpgrade(apiserver::Request& req, const std::string& id,
                         apiserver::Responder& resp) {
  auto unreachable = [&](const std::string& why, const Status& failure) {
    apiserver::RespondStatus(
        resp, Status(failure.reason(), "the agent of cluster \"" + opts_.name + "\" " + why + ": " +
                                           failure.message()));
  };
  auto splice = SpliceRequest::Parse(req.body);
  if (!splice.ok()) return apiserver::RespondStatus(resp, splice.status());
  std::erase_if(splice->headers, [](const auto& header) {
    return header.first == "authorization" || header.first == "host";
  });
  auto answer = client::OpenUpgrade(opts_.member, splice->method, req.target, splice->headers,
                                    opts_.member_timeout);
  if (!answer.ok()) return unreachable("cannot reach it", answer.status());
  if (!answer->switched) return RespondUnswitched(resp, std::move(*answer));
  auto member = std::make_shared<client::Switched>(std::move(*answer->switched));
  client::RestConfig to = WithToken(opts_.federation);
  to.server = ServerUrl(splice->server);
  auto back = client::DialUpgrade(
      to, "POST", "/apis/federation/v1beta1/clusters/" + opts_.name + "/tunnel?splice=" + id,
      kSpliceProtocol, opts_.dial_timeout);
  if (!back.ok()) {
    CloseEnd(EndOf(std::move(member)));
    return unreachable("cannot connect back to the federation", back.status());
  }
  Splice(EndOf(std::move(member)), EndOf(std::make_shared<client::Switched>(std::move(*back))));
  SpliceRequest switched{.headers = std::move(answer->headers)};
  resp.Respond(200, {{"Content-Type", kSpliceContentType}}, switched.Serialize());
}

std::string Agent::ServerUrl(const std::string& id) {
  MutexLock lock(mu_);
  if (!id.empty() && id != first_->id) {
    for (const auto& [other, link] : others_) {
      if (other == id) return link->url;
    }
  }
  return opts_.federation.server;
}

Status Agent::Keep(const client::RestConfig& to, Link& link) {
  std::mt19937_64 random(std::random_device{}());
  Duration backoff = std::min(opts_.min_backoff, opts_.max_backoff);
  const std::string path =
      "/apis/federation/v1beta1/clusters/" + opts_.name + "/tunnel?instance=" + opts_.instance;
  for (;;) {
    {
      MutexLock lock(mu_);
      if (stopping_ || link.done) return Status::Ok();
    }
    auto switched =
        client::DialUpgrade(WithToken(to), "POST", path, kTunnelProtocol, opts_.dial_timeout);
    if (!switched.ok()) {
      const Status& s = switched.status();
      if (s.Is(Reason::kUnauthorized) || s.Is(Reason::kForbidden) || s.Is(Reason::kNotFound)) {
        return Status(s.reason(), "the federation refused the tunnel: " + s.message());
      }
      spdlog::warn("cluster {}: the tunnel to the federation ({}): {}", opts_.name, to.server,
                   s.ToString());
    } else {
      spdlog::info("cluster {}: the tunnel to the federation is up ({})", opts_.name, to.server);
      auto up_since = std::chrono::steady_clock::now();
      {
        MutexLock lock(mu_);
        link.connected = true;
        for (const auto& [name, value] : switched->headers) {
          if (name == "flotilla-server-id") link.id = value;
        }
        if (&link == first_.get() && !link.id.empty()) {
          discover_now_ = true;
          cv_.NotifyAll();
        }
      }
      if (opts_.on_connected) opts_.on_connected(to.server);
      std::shared_ptr<void> tls = std::move(switched->tls);
      server_->ServeDialled(std::move(switched->stream), std::move(switched->received),
                            [this, &link, tls] {
                              MutexLock lock(mu_);
                              link.connected = false;
                              cv_.NotifyAll();
                            });
      {
        MutexLock lock(mu_);
        ScopedBlocking blocking;
        cv_.Wait(lock, [&]() REQUIRES(mu_) { return !link.connected || stopping_; });
        if (stopping_) return Status::Ok();
      }
      spdlog::warn("cluster {}: the tunnel to the federation closed ({})", opts_.name, to.server);
      if (std::chrono::steady_clock::now() - up_since > std::chrono::minutes(1)) {
        backoff = opts_.min_backoff;
      }
    }
    // Jittered: up to half as long again, so that agents cut off together
    // do not all come back at once.
    std::uniform_real_distribution<double> jitter(1.0, 1.5);
    auto wait = std::chrono::duration_cast<Duration>(backoff * jitter(random));
    backoff = std::min(backoff * 2, opts_.max_backoff);
    MutexLock lock(mu_);
    ScopedBlocking blocking;
    if (cv_.WaitFor(lock, wait, [&]() REQUIRES(mu_) { return stopping_ || link.done; })) {
      return Status::Ok();
    }
  }
}

Status Agent::Run() {
  std::thread discovery;
  if (opts_.discovery_period > Duration::zero()) discovery = std::thread([this] { Discover(); });
  Status ended = Keep(opts_.federation, *first_);
  // The first server refused the cluster (or Stop): every tunnel ends.
  Stop();
  if (discovery.joinable()) discovery.join();
  std::map<std::string, std::unique_ptr<Link>> others;
  {
    MutexLock lock(mu_);
    others.swap(others_);
  }
  for (auto& [id, link] : others) link->thread.join();
  return ended;
}

client::RestConfig Agent::WithToken(client::RestConfig config) {
  MutexLock lock(mu_);
  config.token = token_;
  return config;
}

void Agent::RenewIfDue() {
  std::string token;
  {
    MutexLock lock(mu_);
    token = token_;
  }
  auto life = apiserver::JwtLifetime(token);
  if (!life) return;  // not a ServiceAccount's token: nothing to renew
  auto [issued, expires] = *life;
  Clock& clock = opts_.clock != nullptr ? *opts_.clock : RealClock();
  TimePoint due =
      issued + std::chrono::duration_cast<Duration>((expires - issued) * opts_.renew_at);
  TimePoint now = clock.Now();
  if (now < due || now < renew_retry_at_) return;
  auto renewed = PostRegister(opts_, WithToken(opts_.federation), opts_.dial_timeout);
  if (!renewed.ok()) {
    renew_retry_ = renew_retry_ == Duration::zero()
                       ? opts_.renew_retry
                       : std::min(2 * renew_retry_, opts_.renew_retry_max);
    renew_retry_at_ = now + renew_retry_;
    spdlog::warn("cluster {}: renewing the agent's token (it expires at {}): {}; again in {} s",
                 opts_.name, FormatRfc3339(expires), renewed.status().ToString(),
                 std::chrono::duration_cast<std::chrono::seconds>(renew_retry_).count());
    return;
  }
  renew_retry_ = Duration::zero();
  renew_retry_at_ = TimePoint::min();
  {
    MutexLock lock(mu_);
    token_ = *renewed;
  }
  listers_.clear();  // made with the old one
  spdlog::info("cluster {}: the agent's token renewed (the old one expired at {})", opts_.name,
               FormatRfc3339(expires));
  if (opts_.on_token_renewed) opts_.on_token_renewed(*renewed);
}

void Agent::Discover() {
  for (;;) {
    RenewIfDue();
    DiscoverOnce();
    MutexLock lock(mu_);
    ScopedBlocking blocking;
    if (cv_.WaitFor(lock, opts_.discovery_period,
                    [&]() REQUIRES(mu_) { return stopping_ || discover_now_; }) &&
        stopping_) {
      return;
    }
    discover_now_ = false;
  }
}

void Agent::DiscoverOnce() {
  std::string first_id;
  {
    MutexLock lock(mu_);
    first_id = first_->id;
  }
  // Until the first server has said which it is, its own Lease cannot be
  // told from the others'.
  if (first_id.empty()) return;
  // Through the first server, else any other last listed: the first may
  // be the one that is gone.
  std::vector<std::string> through{opts_.federation.server};
  for (const auto& [id, url] : urls_) {
    if (url != opts_.federation.server) through.push_back(url);
  }
  StatusOr<client::ObjectList> listed = Status::Unavailable("no federation server answered");
  for (const std::string& url : through) {
    std::unique_ptr<client::Client>& lister = listers_[url];
    if (lister == nullptr) {
      client::RestConfig config = WithToken(opts_.federation);
      config.server = url;
      client::RestOptions options{.timeout = opts_.dial_timeout, .max_retries = 0};
      options.user_agent = "flotilla-agent";
      auto made = client::NewRestClient(config, options);
      if (!made.ok()) continue;
      lister = std::move(*made);
    }
    listed =
        lister->List(client::kLeases, "kube-system", {.label_selector = ServerLeaseSelector()});
    if (listed.ok() || listed.status().Is(Reason::kForbidden)) break;
  }
  if (!listed.ok()) {
    if (listed.status().Is(Reason::kForbidden) && !told_forbidden_) {
      told_forbidden_ = true;
      spdlog::info(
          "cluster {}: the agent may not list the federation's servers, so it keeps "
          "a tunnel to one: {}",
          opts_.name, listed.status().message());
    }
    return;
  }
  // Renewed within its duration as this agent saw it: the agent's clock is
  // not compared with the servers'.
  auto now = std::chrono::steady_clock::now();
  std::map<std::string, std::string> live;
  std::map<std::string, Seen> seen;
  for (const json::object& lease : listed->items) {
    std::string id = StringAt(lease, "metadata.name");
    std::string renewed = StringAt(lease, "spec.renewTime");
    auto before = seen_.find(id);
    Seen s{renewed, now};
    if (before != seen_.end() && before->second.renew_time == renewed) s.at = before->second.at;
    int64_t duration = IntAt(lease, "spec.leaseDurationSeconds");
    if (now - s.at < std::chrono::seconds(duration > 0 ? duration : 30)) live[id];
    seen[id] = s;
  }
  seen_ = std::move(seen);
  std::map<std::string, std::string> urls = ServerUrls(listed->items);
  urls_ = urls;
  std::vector<std::unique_ptr<Link>> ended;
  MutexLock lock(mu_);
  if (stopping_) return;
  for (auto it = others_.begin(); it != others_.end();) {
    Link& link = *it->second;
    if (!live.contains(it->first)) link.done = true;
    if (link.finished) {
      ended.push_back(std::move(it->second));
      it = others_.erase(it);
    } else {
      ++it;
    }
  }
  cv_.NotifyAll();
  for (const auto& [id, url] : urls) {
    if (id == first_id || !live.contains(id) || others_.contains(id)) continue;
    auto link = std::make_unique<Link>();
    link->id = id;
    link->url = url;
    Link* l = link.get();
    client::RestConfig to = opts_.federation;
    to.server = url;
    spdlog::info("cluster {}: the federation's server {} is at {}: a tunnel to it as well",
                 opts_.name, id, url);
    link->thread = std::thread([this, l, to] {
      Status ended = Keep(to, *l);
      if (!ended.ok()) {
        spdlog::warn("cluster {}: no tunnel to {}: {}", opts_.name, to.server, ended.ToString());
      }
      MutexLock lock(mu_);
      l->finished = true;
    });
    others_.emplace(id, std::move(link));
  }
  lock.Unlock();
  for (auto& link : ended) link->thread.join();
}

void Agent::Stop() {
  {
    MutexLock lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    cv_.NotifyAll();
  }
  // Closes the tunnels.
  if (server_) server_->Stop();
}

bool Agent::Connected() {
  MutexLock lock(mu_);
  return first_->connected;
}

std::vector<std::string> Agent::ConnectedServers() {
  MutexLock lock(mu_);
  std::vector<std::string> out;
  if (first_->connected && !first_->id.empty()) out.push_back(first_->id);
  for (const auto& [id, link] : others_) {
    if (link->connected) out.push_back(id);
  }
  return out;
}

}  // namespace flotilla::federation::cluster
