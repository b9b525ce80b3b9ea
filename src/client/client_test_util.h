// Test helpers for the client: a real API server started in-process on port 0
// over a memory store (as `flotilla server --storage memory`), with REST and
// in-process clients for it; and a tiny scripted HTTPS server for the
// transport's behaviour (retries, pooling, timeouts) built from the API
// server's HttpServer and PKI helpers.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "api/kinds/kinds.h"
#include "api/schema.h"
#include "apiserver/server.h"
#include "base/mutex.h"
#include "client/in_process_client.h"
#include "client/rest_client.h"

namespace flotilla::client::testing {

inline const ResourceRef kConfigMaps{"", "v1", "configmaps", true};
inline const ResourceRef kNamespaces{"", "v1", "namespaces", false};

// A fresh directory under $TEST_TMPDIR (else /tmp), removed on destruction.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/flotilla-client-XXXXXX";
    char* made = ::mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline const apiserver::Headers kJson{{"Content-Type", "application/json"}};

// Retries without the waits.
inline RestOptions Fast() {
  RestOptions opts;
  opts.qps = 0;
  opts.initial_backoff = std::chrono::milliseconds(1);
  opts.max_backoff = std::chrono::milliseconds(5);
  return opts;
}

// The REST client over HTTP/2 (what it takes from a server that offers
// it), over HTTP/1.1, and the in-process client.
enum class ClientKind { kRest, kRestHttp11, kInProcess };

inline std::string KindName(const ::testing::TestParamInfo<ClientKind>& info) {
  switch (info.param) {
    case ClientKind::kRest:
      return "Rest";
    case ClientKind::kRestHttp11:
      return "RestHttp11";
    case ClientKind::kInProcess:
      return "InProcess";
  }
  return "";
}

class TestCluster {
 public:
  // `configure`, if given, adjusts the server's options before it starts.
  explicit TestCluster(storage::StoreOptions store_options = {}, Clock* clock = nullptr,
                       const std::function<void(apiserver::ServerOptions&)>& configure = nullptr) {
    api::RegisterFoundationKinds(registry_);
    api::RegisterMemberKinds(registry_);
    // The federation's controllers watch the policies; a test member
    // serving them too changes nothing for the tests that use it as one.
    api::RegisterPolicyKinds(registry_);
    opts_.data_dir = dir_.path();
    opts_.port = 0;
    opts_.storage = "memory";
    opts_.registry = &registry_;
    opts_.schemas = &api::SchemaSet::Builtin();
    opts_.clock = clock;
    opts_.store_options = store_options;
    if (configure) configure(opts_);
    Start();
  }
  ~TestCluster() { Stop(); }

  // Stops the server: an outage (its address stays valid, nothing
  // answers there until Restart).
  void Stop() {
    if (server_) server_->Stop();
  }
  // Stops the server, if it runs, and starts a new one on the port the
  // first one got, with the same PKI (the memory store starts empty).
  void Restart() {
    Stop();
    server_.reset();
    opts_.port = port_;
    Start();
  }

  apiserver::Server& server() { return *server_; }
  const std::string& dir() const { return dir_.path(); }

  // The admin's config: the server's CA and the admin token.
  RestConfig AdminConfig() const {
    RestConfig config;
    config.server = url_;
    config.ca_pem = server_->pki().ca_cert_pem;
    config.token = server_->pki().admin_token;
    return config;
  }

  std::unique_ptr<Client> Rest(const RestConfig& config, const RestOptions& opts = {}) {
    auto client = NewRestClient(config, opts);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(*client) : nullptr;
  }
  std::unique_ptr<Client> InProcess() {
    return NewInProcessClient(server_->api(), server_->pki().admin_token);
  }
  std::unique_ptr<Client> Make(ClientKind kind) {
    switch (kind) {
      case ClientKind::kRest:
        return Rest(AdminConfig());
      case ClientKind::kRestHttp11:
        return Rest(AdminConfig(), RestOptions{.http2 = false});
      case ClientKind::kInProcess:
        return InProcess();
    }
    return nullptr;
  }

 private:
  void Start() {
    auto server = apiserver::Server::Start(opts_);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    port_ = server_->port();
    url_ = server_->url();
  }

  TempDir dir_;
  api::Registry registry_;
  apiserver::ServerOptions opts_;
  std::unique_ptr<apiserver::Server> server_;
  int port_ = 0;     // of the first server; a restart takes it again
  std::string url_;  // its address, valid across Stop and Restart
};

// An HTTPS server whose every request goes to a test-supplied handler; it
// records the requests it saw. Its certificate comes from the PKI helpers.
class ScriptedServer {
 public:
  using Script = std::function<void(apiserver::Request& req, apiserver::Responder& resp)>;

  // `configure`, if given, adjusts the server's options before it starts
  // (HTTP/2 offered or not, its stream limit).
  explicit ScriptedServer(
      Script script, const std::function<void(apiserver::HttpServerOptions&)>& configure = nullptr)
      : script_(std::move(script)) {
    apiserver::PkiOptions pki_opts;
    pki_opts.dir = dir_.path() + "/pki";
    auto pki = apiserver::EnsurePki(pki_opts);
    EXPECT_TRUE(pki.ok()) << pki.status().ToString();
    pki_ = *pki;
    apiserver::HttpServerOptions opts;
    opts.cert_path = pki_.serving_cert_path;
    opts.key_path = pki_.serving_key_path;
    if (configure) configure(opts);
    auto http = apiserver::HttpServer::Start(
        opts, [this](apiserver::Request& req, apiserver::Responder& resp) {
          {
            MutexLock lock(mu_);
            seen_.push_back(req);
            remotes_.insert(req.remote);
          }
          script_(req, resp);
        });
    EXPECT_TRUE(http.ok()) << http.status().ToString();
    http_ = std::move(*http);
  }
  ~ScriptedServer() { Stop(); }

  void Stop() {
    if (http_) http_->Stop();
  }
  int port() const { return http_->port(); }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port()); }
  RestConfig Config() const {
    RestConfig config;
    config.server = url();
    config.ca_pem = pki_.ca_cert_pem;
    return config;
  }
  const apiserver::Pki& pki() const { return pki_; }

  std::vector<apiserver::Request> requests() {
    MutexLock lock(mu_);
    return seen_;
  }
  size_t connections() {
    MutexLock lock(mu_);
    return remotes_.size();
  }

 private:
  TempDir dir_;
  Script script_;
  apiserver::Pki pki_;
  std::unique_ptr<apiserver::HttpServer> http_;
  Mutex mu_;
  std::vector<apiserver::Request> seen_ GUARDED_BY(mu_);
  std::set<std::string> remotes_ GUARDED_BY(mu_);
};

// Collects watch events and the end of the stream, for tests to await.
class WatchRecorder {
 public:
  WatchCallback OnEvent() {
    return [this](const WatchEvent& e) {
      MutexLock lock(mu_);
      events_.push_back(e);
      cv_.NotifyAll();
    };
  }
  WatchDone OnDone() {
    return [this](const Status& s) {
      MutexLock lock(mu_);
      done_.push_back(s);
      cv_.NotifyAll();
    };
  }
  // Waits (bounded) until at least `n` events arrived.
  bool WaitEvents(size_t n, Duration limit = std::chrono::seconds(20)) {
    MutexLock lock(mu_);
    return cv_.WaitFor(lock, limit, [&]() REQUIRES(mu_) { return events_.size() >= n; });
  }
  bool WaitDone(Duration limit = std::chrono::seconds(20)) {
    MutexLock lock(mu_);
    return cv_.WaitFor(lock, limit, [&]() REQUIRES(mu_) { return !done_.empty(); });
  }
  std::vector<WatchEvent> events() {
    MutexLock lock(mu_);
    return events_;
  }
  std::vector<Status> done() {
    MutexLock lock(mu_);
    return done_;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  std::vector<WatchEvent> events_ GUARDED_BY(mu_);
  std::vector<Status> done_ GUARDED_BY(mu_);
};

inline std::string NameOf(const json::object& obj) {
  const json::value* v = Find(obj, "metadata.name");
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : "";
}

inline std::string RvOf(const json::object& obj) {
  const json::value* v = Find(obj, "metadata.resourceVersion");
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : "";
}

}  // namespace flotilla::client::testing
