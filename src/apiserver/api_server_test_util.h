// Test helpers: an ApiServer over a memory store with the foundation kinds,
// called directly through Handle() with a recording Responder.
#pragma once

#include <atomic>
#include <string>

#include "api/kinds/kinds.h"
#include "api/schema.h"
#include "apiserver/api_server.h"
#include "apiserver/url.h"
#include "base/mutex.h"

namespace flotilla::apiserver::testing {

// A request of `method` for `target` ("/api/v1/pods?watch=true"), its path
// and query split out, no headers.
inline Request RequestTo(const std::string& method, const std::string& target) {
  Request req;
  req.method = method;
  req.target = target;
  SplitTarget(target, &req.path, &req.query);
  return req;
}

class RecordingResponder : public Responder {
 public:
  void Respond(int code, const Headers& headers, std::string body) override {
    MutexLock lock(mu_);
    code_ = code;
    headers_ = headers;
    body_ = std::move(body);
    responded_ = true;
  }
  bool StartStream(int code, const Headers& headers) override {
    MutexLock lock(mu_);
    code_ = code;
    headers_ = headers;
    responded_ = true;
    return true;
  }
  bool WriteChunk(std::string_view data) override {
    MutexLock lock(mu_);
    body_ += data;
    cv_.NotifyAll();
    return true;
  }
  bool ClientGone() override { return gone_; }
  bool WaitClientGone(int) override { return gone_; }
  bool Responded() const override { return responded_; }

  void Leave() { gone_ = true; }
  int code() const { return code_; }
  std::string body() {
    MutexLock lock(mu_);
    return body_;
  }
  json::object Json() {
    auto parsed = ParseJsonObject(body());
    return parsed.ok() ? *parsed : json::object();
  }
  std::string HeaderValue(const std::string& name) const {
    for (const auto& [k, v] : headers_) {
      if (k == name) return v;
    }
    return "";
  }
  // Waits (bounded) until the streamed body contains `needle` `count` times.
  bool WaitFor(const std::string& needle, int count = 1,
               std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    MutexLock lock(mu_);
    return cv_.WaitFor(lock, limit, [&]() REQUIRES(mu_) {
      int n = 0;
      for (size_t p = body_.find(needle); p != std::string::npos; p = body_.find(needle, p + 1))
        ++n;
      return n >= count;
    });
  }

 private:
  Mutex mu_;
  CondVar cv_;
  int code_ = 0;
  Headers headers_;
  std::string body_;
  std::atomic<bool> responded_{false};
  std::atomic<bool> gone_{false};
};

class TestServer {
 public:
  struct Options {
    // Also serve what a member cluster serves (pods, nodes, ...).
    bool member_kinds = false;
    // Authenticate with these static tokens (token,user,uid[,groups]);
    // empty: no authenticator, every request is the admin's.
    std::string tokens_csv;
    const ServiceAccountTokens* service_account_tokens = nullptr;
    // Authorize with RBAC (the bootstrap policy); see started().
    bool rbac = false;
    // Adds to the registry before the server is built (admission rules).
    std::function<void(api::Registry&)> add_to_registry;
    ProxyHandler proxy;       // ApiServerOptions::proxy
    PodLogsHandler pod_logs;  // ApiServerOptions::pod_logs
  };

  explicit TestServer(bool member_kinds = false)
      : TestServer(Options{.member_kinds = member_kinds}) {}
  explicit TestServer(const Options& o) : store_(storage::NewMemoryStore({.clock = &clock_})) {
    api::RegisterFoundationKinds(registry_);
    if (o.member_kinds) api::RegisterMemberKinds(registry_);
    if (o.add_to_registry) o.add_to_registry(registry_);
    if (!o.tokens_csv.empty()) {
      auto authn = Authenticator::FromTokenCsv(o.tokens_csv, "test tokens");
      if (authn.ok()) authn_ = std::move(authn).value();
      if (!authn.ok()) started_ = authn.status();
    }
    ApiServerOptions opts;
    opts.registry = &registry_;
    opts.store = store_.get();
    opts.clock = &clock_;
    opts.schemas = &api::SchemaSet::Builtin();
    opts.authenticator = authn_.get();
    opts.service_account_tokens = o.service_account_tokens;
    opts.proxy = o.proxy;
    opts.pod_logs = o.pod_logs;
    server_ = std::make_unique<ApiServer>(opts);
    server_->SetReady(true);
    Status s = server_->EnsureDefaultNamespaces();
    if (started_.ok()) started_ = s;
    if (o.rbac && started_.ok()) started_ = server_->StartRbac();
  }

  // Whether the tokens, the default namespaces and RBAC were set up.
  const Status& started() const { return started_; }

  // Issues a request; `body` JSON, `content_type` for PATCH.
  void Do(RecordingResponder& resp, const std::string& method, const std::string& target,
          const std::string& body = "", const std::string& content_type = "application/json",
          const std::string& accept = "application/json", const Headers& extra = {}) {
    Request req = RequestTo(method, target);
    req.body = body;
    req.headers["content-type"] = content_type;
    req.headers["accept"] = accept;
    for (const auto& [k, v] : extra) req.headers[k] = v;
    server_->Handle(req, resp);
  }

  ApiServer& api() { return *server_; }
  storage::Store& store() { return *store_; }
  FakeClock& clock() { return clock_; }
  api::Registry& registry() { return registry_; }
  // REQUIRES: Options::tokens_csv was given.
  Authenticator& authn() { return *authn_; }

 private:
  FakeClock clock_;
  api::Registry registry_;
  std::unique_ptr<storage::Store> store_;
  std::unique_ptr<Authenticator> authn_;
  std::unique_ptr<ApiServer> server_;
  Status started_;
};

}  // namespace flotilla::apiserver::testing
