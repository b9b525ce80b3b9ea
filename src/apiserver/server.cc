#include "apiserver/server.h"

#include <sys/stat.h>

#include <filesystem>

#include "apiserver/request_info.h"
#include "apiserver/reviews.h"
#include "base/file.h"
#include "base/log.h"
#include "storage/routed_store.h"

namespace flotilla::apiserver {

StatusOr<std::unique_ptr<Server>> Server::Start(const ServerOptions& opts) {
  std::unique_ptr<Server> s(new Server());
  s->opts_ = opts;
  FLOTILLA_RETURN_IF_ERROR(s->PrepareDir());
  FLOTILLA_RETURN_IF_ERROR(s->OpenStore());
  FLOTILLA_ASSIGN_OR_RETURN(s->authn_, Authenticator::FromTokenFile(s->pki_.token_file_path));
  FLOTILLA_ASSIGN_OR_RETURN(s->sa_tokens_,
                            ServiceAccountTokens::FromKeyPem(s->pki_.service_account_key_pem));
  FLOTILLA_RETURN_IF_ERROR(s->OpenAudit());
  FLOTILLA_RETURN_IF_ERROR(s->StartApi());
  FLOTILLA_RETURN_IF_ERROR(s->StartHttp());
  s->api_->SetReady(true);
  return s;
}

// The data directory (owner only) and the PKI in it.
Status Server::PrepareDir() {
  std::error_code ec;
  std::filesystem::create_directories(opts_.data_dir, ec);
  if (ec) return Status::Internal("creating " + opts_.data_dir + ": " + ec.message());
  ::chmod(opts_.data_dir.c_str(), 0700);
  PkiOptions pki_opts;
  pki_opts.dir = opts_.data_dir + "/pki";
  pki_opts.hosts = opts_.extra_sans;
  if (opts_.bind_address != "0.0.0.0" && opts_.bind_address != "::") {
    pki_opts.hosts.push_back(opts_.bind_address);
  }
  FLOTILLA_ASSIGN_OR_RETURN(pki_, EnsurePki(pki_opts));
  return Status::Ok();
}

Status Server::OpenStore() {
  storage::StoreOptions store_opts = opts_.store_options;
  if (store_opts.clock == nullptr) store_opts.clock = opts_.clock;
  if (opts_.storage == "memory") {
    store_ = storage::NewMemoryStore(store_opts);
  } else if (opts_.storage == "sqlite") {
    std::error_code ec;
    std::filesystem::create_directories(opts_.data_dir + "/db", ec);
    FLOTILLA_ASSIGN_OR_RETURN(
        store_, storage::OpenSqliteStore(opts_.data_dir + "/db/state.db", store_opts));
  } else if (opts_.storage == "etcd") {
    storage::EtcdOptions etcd = opts_.etcd;
    etcd.history_events = opts_.store_options.history_events;
    etcd.set_revision = WithResourceVersion;
    FLOTILLA_ASSIGN_OR_RETURN(store_, storage::OpenEtcdStore(etcd));
  } else {
    return Status::BadRequest("--storage must be sqlite, memory or etcd, not " + opts_.storage);
  }
  if (opts_.side_store != nullptr) {
    store_ = storage::NewRoutedStore(std::move(store_), opts_.side_prefix, opts_.side_store);
  }
  return Status::Ok();
}

// The audit log, when a path and a policy are given.
Status Server::OpenAudit() {
  if (opts_.audit_log.path.empty()) return Status::Ok();
  if (opts_.audit_policy_file.empty()) {
    spdlog::warn("--audit-log-path without --audit-policy-file: nothing is audited");
    return Status::Ok();
  }
  FLOTILLA_ASSIGN_OR_RETURN(std::string text, ReadFile(opts_.audit_policy_file));
  auto policy = AuditPolicy::Parse(text);
  if (!policy.ok()) {
    return Status::BadRequest(opts_.audit_policy_file + ": " + policy.status().message());
  }
  FLOTILLA_ASSIGN_OR_RETURN(audit_,
                            AuditLog::Open(opts_.audit_log, std::move(*policy),
                                           opts_.clock != nullptr ? *opts_.clock : RealClock()));
  return Status::Ok();
}

// The API over the store: default namespaces, RBAC, service-account
// tokens checked against their Secrets, the garbage collector.
Status Server::StartApi() {
  ApiServerOptions api_opts;
  api_opts.registry = opts_.registry;
  api_opts.git_version = opts_.git_version;
  api_opts.store = store_.get();
  api_opts.clock = opts_.clock != nullptr ? opts_.clock : &RealClock();
  api_opts.schemas = opts_.schemas;
  api_opts.authenticator = authn_.get();
  api_opts.service_account_tokens = sa_tokens_.get();
  api_opts.audit_log = audit_.get();
  api_opts.extra_paths = opts_.extra_paths;
  api_opts.proxy = opts_.proxy;
  api_opts.tunnel = opts_.tunnel;
  api_opts.register_agent = opts_.register_agent;
  api_opts.pod_logs = opts_.pod_logs;
  api_opts.pod_delete = opts_.pod_delete;
  api_opts.pod_connect = opts_.pod_connect;
  api_opts.controller_groups = opts_.controller_groups;
  api_opts.inflight = opts_.inflight;
  api_opts.event_ttl = opts_.event_ttl;
  api_ = std::make_unique<ApiServer>(api_opts);
  FLOTILLA_RETURN_IF_ERROR(api_->EnsureDefaultNamespaces());
  FLOTILLA_RETURN_IF_ERROR(api_->StartRbac());
  FLOTILLA_RETURN_IF_ERROR(api_->StartCustomResources());
  authn_->SetTokenValidator(
      ServerTokenValidator(*sa_tokens_, {std::string(kServiceAccountIssuer)}, api_->objects()));
  gc_ = std::make_unique<GarbageCollector>(api_->objects());
  return gc_->Start();
}

Status Server::StartHttp() {
  HttpServerOptions http_opts;
  http_opts.bind_address = opts_.bind_address;
  http_opts.port = opts_.port;
  http_opts.cert_path = pki_.serving_cert_path;
  http_opts.key_path = pki_.serving_key_path;
  http_opts.client_ca_path = pki_.ca_cert_path;
  http_opts.chain_path = pki_.ca_cert_path;
  http_opts.max_stream_buffer_bytes = opts_.watch_buffer_bytes;
  http_opts.http2 = opts_.http2;
  http_opts.http2_max_streams = opts_.http2_max_streams;
  // Reads of the API come from memory (the watch cache) and are served on
  // the event loop; not on etcd, where a GET is a round trip, nor behind a
  // filter, which may wait (a member's injected latency), nor a
  // subresource that goes elsewhere (a cluster's proxy waits for the member
  // on this same loop, a pod's log for the kubelet).
  if (opts_.storage != "etcd" && !opts_.http_filter) {
    http_opts.runs_on_loop = [](const Request& req) {
      if (req.method != "GET" && req.method != "HEAD") return false;
      RequestPath path = ParseRequestPath(req);
      bool in_memory =
          path.subresource.empty() || path.subresource == "status" || path.subresource == "scale";
      // A GET of one object (verb get) or a watch; not a list.
      return path.resource_request && in_memory && (!path.name.empty() || path.watch);
    };
  }
  ApiServer* api = api_.get();
  auto filter = opts_.http_filter;
  FLOTILLA_ASSIGN_OR_RETURN(
      http_, HttpServer::Start(http_opts, [api, filter](Request& req, Responder& resp) {
        if (filter && filter(req, resp)) return;
        api->Handle(req, resp);
      }));
  return Status::Ok();
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
