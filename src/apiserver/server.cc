#include "apiserver/server.h"

#include <sys/stat.h>

#include <filesystem>

#include "apiserver/request_info.h"
#include "apiserver/reviews.h"
#include "base/file.h"
#include "base/log.h"

namespace flotilla::apiserver {

StatusOr<std::unique_ptr<Server>> Server::Start(const ServerOptions& opts) {
  std::unique_ptr<Server> s(new Server());
  s->opts_ = opts;
  std::error_code ec;
  std::filesystem::create_directories(opts.data_dir, ec);
  if (ec) return Status::Internal("creating " + opts.data_dir + ": " + ec.message());
  ::chmod(opts.data_dir.c_str(), 0700);

  PkiOptions pki_opts;
  pki_opts.dir = opts.data_dir + "/pki";
  pki_opts.hosts = opts.extra_sans;
  if (opts.bind_address != "0.0.0.0" && opts.bind_address != "::") {
    pki_opts.hosts.push_back(opts.bind_address);
  }
  FLOTILLA_ASSIGN_OR_RETURN(s->pki_, EnsurePki(pki_opts));

  storage::StoreOptions store_opts = opts.store_options;
  if (store_opts.clock == nullptr) store_opts.clock = opts.clock;
  if (opts.storage == "memory") {
    s->store_ = storage::NewMemoryStore(store_opts);
  } else if (opts.storage == "sqlite") {
    std::filesystem::create_directories(opts.data_dir + "/db", ec);
    FLOTILLA_ASSIGN_OR_RETURN(s->store_,
                              storage::OpenSqliteStore(opts.data_dir + "/db/state.db", store_opts));
  } else if (opts.storage == "etcd") {
    storage::EtcdOptions etcd = opts.etcd;
    etcd.history_events = opts.store_options.history_events;
    etcd.set_revision = WithResourceVersion;
    FLOTILLA_ASSIGN_OR_RETURN(s->store_, storage::OpenEtcdStore(etcd));
  } else {
    return Status::BadRequest("--storage must be sqlite, memory or etcd, not " + opts.storage);
  }
  FLOTILLA_ASSIGN_OR_RETURN(s->authn_, Authenticator::FromTokenFile(s->pki_.token_file_path));
  FLOTILLA_ASSIGN_OR_RETURN(s->sa_tokens_,
                            ServiceAccountTokens::FromKeyPem(s->pki_.service_account_key_pem));

  if (!opts.audit_log.path.empty() && !opts.audit_policy_file.empty()) {
    FLOTILLA_ASSIGN_OR_RETURN(std::string text, ReadFile(opts.audit_policy_file));
    auto policy = AuditPolicy::Parse(text);
    if (!policy.ok()) {
      return Status::BadRequest(opts.audit_policy_file + ": " + policy.status().message());
    }
    FLOTILLA_ASSIGN_OR_RETURN(s->audit_,
                              AuditLog::Open(opts.audit_log, std::move(*policy),
                                             opts.clock != nullptr ? *opts.clock : RealClock()));
  } else if (!opts.audit_log.path.empty()) {
    spdlog::warn("--audit-log-path without --audit-policy-file: nothing is audited");
  }

  ApiServerOptions api_opts;
  api_opts.registry = opts.registry;
  api_opts.git_version = opts.git_version;
  api_opts.store = s->store_.get();
  api_opts.clock = opts.clock != nullptr ? opts.clock : &RealClock();
  api_opts.schemas = opts.schemas;
  api_opts.authenticator = s->authn_.get();
  api_opts.service_account_tokens = s->sa_tokens_.get();
  api_opts.audit_log = s->audit_.get();
  api_opts.extra_paths = opts.extra_paths;
  api_opts.inflight = opts.inflight;
  api_opts.event_ttl = opts.event_ttl;
  s->api_ = std::make_unique<ApiServer>(api_opts);
  FLOTILLA_RETURN_IF_ERROR(s->api_->EnsureDefaultNamespaces());
  FLOTILLA_RETURN_IF_ERROR(s->api_->StartRbac());
  ApiServer* api_server = s->api_.get();
  const ServiceAccountTokens* sa_tokens = s->sa_tokens_.get();
  s->authn_->SetTokenValidator([api_server, sa_tokens](std::string_view token) {
    return AuthenticateServiceAccountToken(token, *sa_tokens, {std::string(kServiceAccountIssuer)},
                                           api_server->objects());
  });
  s->gc_ = std::make_unique<GarbageCollector>(s->api_->objects());
  FLOTILLA_RETURN_IF_ERROR(s->gc_->Start());

  HttpServerOptions http_opts;
  http_opts.bind_address = opts.bind_address;
  http_opts.port = opts.port;
  http_opts.cert_path = s->pki_.serving_cert_path;
  http_opts.key_path = s->pki_.serving_key_path;
  http_opts.client_ca_path = s->pki_.ca_cert_path;
  http_opts.max_stream_buffer_bytes = opts.watch_buffer_bytes;
  // Reads of the API come from memory (the watch cache) and are served on
  // the event loop; not on etcd, where a GET is a round trip, nor behind a
  // filter, which may wait (a member's injected latency).
  if (opts.storage != "etcd" && !opts.http_filter) {
    http_opts.runs_on_loop = [](const Request& req) {
      if (req.method != "GET" && req.method != "HEAD") return false;
      RequestInfo info = ParseRequestInfo(req);
      return info.resource_request && (info.verb == "get" || info.verb == "watch");
    };
  }
  ApiServer* api = s->api_.get();
  auto filter = opts.http_filter;
  FLOTILLA_ASSIGN_OR_RETURN(
      s->http_, HttpServer::Start(http_opts, [api, filter](Request& req, Responder& resp) {
        if (filter && filter(req, resp)) return;
        api->Handle(req, resp);
      }));
  s->api_->SetReady(true);
  return s;
}

Server::~Server() { Stop(); }

int Server::port() const { return http_ ? http_->port() : 0; }

std::string Server::url() const {
  std::string host = opts_.bind_address == "0.0.0.0" ? "127.0.0.1" : opts_.bind_address;
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return "https://" + host + ":" + std::to_string(port());
}

void Server::Stop() {
  if (api_) api_->SetReady(false);
  if (http_) http_->Stop();
  if (gc_) gc_->Stop();
  http_.reset();
  gc_.reset();
}

}  // namespace flotilla::apiserver
