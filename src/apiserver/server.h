// Server: one API server process assembled from its parts: the data dir
// with its PKI, the Store (sqlite or memory), the ApiServer, the garbage
// collector and the HTTPS listener. `flotilla server`, `flotilla member` and
// the tests start it the same way.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "apiserver/api_server.h"
#include "apiserver/gc.h"
#include "apiserver/http_server.h"
#include "apiserver/pki.h"
#include "base/clock.h"
#include "storage/etcd_store.h"

namespace flotilla::apiserver {

struct ServerOptions {
  std::string data_dir = "./flotilla-data";
  std::string bind_address = "127.0.0.1";
  int port = 6443;                 // 0 picks a free port
  std::string storage = "sqlite";  // "sqlite" | "memory" | "etcd"
  // With storage "etcd": the members, TLS and prefix (set_revision and
  // history_events are filled in by Start).
  storage::EtcdOptions etcd;
  std::vector<std::string> extra_sans;
  const api::Registry* registry = nullptr;  // REQUIRED
  const api::SchemaSet* schemas = nullptr;  // null: no schema checks, no OpenAPI
  std::string git_version = "v1.32.0";      // what /version reports
  Clock* clock = nullptr;                   // null: the real clock
  storage::StoreOptions store_options;      // its clock: `clock` when unset
  // kube-apiserver's --event-ttl: an Event is deleted this long after its
  // last write; zero keeps Events for ever.
  Duration event_ttl = std::chrono::hours(1);
  PathHandler extra_paths;        // see ApiServerOptions
  ProxyHandler proxy;             // see ApiServerOptions
  AgentHandler tunnel;            // see ApiServerOptions
  AgentHandler register_agent;    // see ApiServerOptions
  PodLogsHandler pod_logs;        // see ApiServerOptions
  PodDeleteHandler pod_delete;    // see ApiServerOptions
  PodConnectHandler pod_connect;  // see ApiServerOptions
  // Keys under side_prefix live in side_store instead of the durable store
  // (storage/routed_store.h): the federation's view of its members' pods.
  // No side_store: none.
  std::string side_prefix;
  std::shared_ptr<storage::Store> side_store;
  // See ApiServerOptions::controller_groups.
  std::vector<std::string> controller_groups;
  // kube-apiserver's --max-requests-inflight and
  // --max-mutating-requests-inflight (inflight.h).
  InflightLimits inflight;
  // A watch whose client falls this many bytes behind is cut off
  // (HttpServerOptions::max_stream_buffer_bytes).
  size_t watch_buffer_bytes = 16 * 1024 * 1024;
  // HTTP/2 offered by ALPN beside HTTP/1.1, and kube-apiserver's
  // --http2-max-streams-per-connection (HttpServerOptions).
  bool http2 = true;
  uint32_t http2_max_streams = 100;
  // kube-apiserver's --audit-log-path ("-": standard output),
  // --audit-policy-file, --audit-log-maxsize (MiB) and --audit-log-maxbackup
  // (audit.h). Without a policy file nothing is logged, as in Kubernetes.
  AuditLogOptions audit_log;
  std::string audit_policy_file;
  // Sees every HTTPS request before the API server (not the in-process
  // client's): returns true when it answered the request itself. A member
  // injects its faults here (503s, latency).
  std::function<bool(Request& req, Responder& resp)> http_filter;
};

class Server {
 public:
  static StatusOr<std::unique_ptr<Server>> Start(const ServerOptions& opts);
  ~Server();

  int port() const;
  // "https://127.0.0.1:6443"
  std::string url() const;
  const Pki& pki() const { return pki_; }
  ApiServer& api() { return *api_; }
  storage::Store& store() { return *store_; }
  void Stop();

 private:
  Server() = default;
  // The steps of Start, in order.
  Status PrepareDir();
  Status OpenStore();
  Status OpenAudit();
  Status StartApi();
  Status StartHttp();

  ServerOptions opts_;
  Pki pki_;
  std::unique_ptr<storage::Store> store_;
  std::unique_ptr<Authenticator> authn_;
  std::unique_ptr<ServiceAccountTokens> sa_tokens_;
  std::unique_ptr<AuditLog> audit_;
  std::unique_ptr<ApiServer> api_;
  std::unique_ptr<GarbageCollector> gc_;
  std::unique_ptr<HttpServer> http_;
};

}  // namespace flotilla::apiserver
