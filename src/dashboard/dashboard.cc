// The dashboard's server (dashboard.h).
#include "dashboard/dashboard.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "apiserver/http_server.h"
#include "base/json.h"
#include "client/rest_client.h"
#include "dashboard/assets.h"

namespace flotilla::dashboard {
namespace {

using apiserver::Headers;
using apiserver::Request;
using apiserver::Responder;

// How often a proxied watch looks for a browser that went away while the
// federation had nothing to send.
constexpr int kGoneCheckMillis = 500;

const Headers& PageHeaders() {
  static const Headers kHeaders = {
      {"Content-Security-Policy",
       "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'"},
      {"X-Content-Type-Options", "nosniff"},
      {"X-Frame-Options", "DENY"},
      {"Referrer-Policy", "no-referrer"},
      {"Cache-Control", "no-cache"}};
  return kHeaders;
}

Headers With(Headers headers, std::string name, std::string value) {
  headers.emplace_back(std::move(name), std::move(value));
  return headers;
}

void RespondStatus(Responder& out, int code, const std::string& reason,
                   const std::string& message) {
  json::object status{{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
                      {"status", "Failure"}, {"message", message}, {"reason", reason},
                      {"code", code}};
  out.Respond(code, With(PageHeaders(), "Content-Type", "application/json"), ToJson(status));
}

// "localhost", "127.0.0.1" or "[::1]", with or without a port.
bool LoopbackHost(const std::string& host) {
  std::string name = host;
  if (!name.empty() && name.front() == '[') {
    name = name.substr(0, name.find(']') + 1);
  } else if (auto colon = name.find(':'); colon != std::string::npos) {
    name.resize(colon);
  }
  return name == "localhost" || name == "127.0.0.1" || name == "[::1]";
}

bool Proxied(const std::string& path) {
  return path == "/version" || path.rfind("/api/", 0) == 0 || path == "/api" ||
         path.rfind("/apis/", 0) == 0 || path == "/apis";
}

bool IsWatch(const Request& req) {
  return req.QueryBool("watch") || req.path.find("/watch/") != std::string::npos;
}

// Feeds a watch's bytes from the federation to the browser as they come.
class ProxySink : public client::StreamSink {
 public:
  explicit ProxySink(Responder& out) : out_(out) {}

  void OnHead(int code, std::string error_body) override {
    Headers headers = With(PageHeaders(), "Content-Type", "application/json");
    if (code < 200 || code > 299) {
      out_.Respond(code, headers, std::move(error_body));
    } else if (!out_.StartStream(code, headers)) {
      Cancel();
    }
  }
  bool OnData(std::string_view data) override {
    if (out_.WriteChunk(data)) return true;
    Cancel();
    return false;
  }
  bool Cancelled() const override {
    std::lock_guard lock(mu_);
    return cancelled_;
  }
  bool WaitCancelled(int millis) override {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(millis), [&] { return cancelled_; });
    return cancelled_;
  }
  void SetCanceller(std::function<void()> cancel) override {
    std::lock_guard lock(mu_);
    canceller_ = std::move(cancel);
  }
  void Cancel() {
    std::lock_guard lock(mu_);
    cancelled_ = true;
    if (canceller_) canceller_();
    cv_.notify_all();
  }

 private:
  Responder& out_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool cancelled_ = false;           // GUARDED_BY(mu_)
  std::function<void()> canceller_;  // GUARDED_BY(mu_)
};

class DashboardImpl : public Dashboard {
 public:
  explicit DashboardImpl(std::shared_ptr<client::Transport> federation)
      : federation_(std::move(federation)) {}
  ~DashboardImpl() override { Stop(); }

  Status Listen(int port) {
    apiserver::HttpServerOptions opts{.bind_address = "127.0.0.1", .port = port};
    opts.max_body_bytes = 64 * 1024;  // nothing is written through it
    auto server = apiserver::HttpServer::Start(
        opts, [this](Request& req, Responder& out) { Handle(req, out); });
    if (!server.ok()) return server.status();
    server_ = std::move(*server);
    return Status::Ok();
  }

  int port() const override { return server_->port(); }
  void Stop() override {
    if (server_) server_->Stop();
  }

 private:
  void Handle(Request& req, Responder& out) {
    if (!LoopbackHost(req.Header("host"))) {
      RespondStatus(out, 403, "Forbidden",
                    "the dashboard answers only to localhost, 127.0.0.1 or [::1]");
      return;
    }
    if (req.method != "GET") {
      out.Respond(405,
                  With(With(PageHeaders(), "Allow", "GET"), "Content-Type", "application/json"),
                  ToJson(json::object{{"kind", "Status"},
                                      {"apiVersion", "v1"},
                                      {"status", "Failure"},
                                      {"reason", "MethodNotAllowed"},
                                      {"code", 405},
                                      {"message", "the dashboard only reads the federation"}}));
      return;
    }
    if (Proxied(req.path)) return Proxy(req, out);
    for (size_t i = 0; i < kAssetCount; ++i) {
      if (kAssets[i].path == req.path) {
        out.Respond(200, With(PageHeaders(), "Content-Type", std::string(kAssets[i].content_type)),
                    std::string(kAssets[i].body));
        return;
      }
    }
    RespondStatus(out, 404, "NotFound", "the dashboard has no page " + req.path);
  }

  void Proxy(Request& req, Responder& out) {
    client::ApiRequest api{.method = "GET"};
    api.path = req.target.substr(0, req.target.find('?'));
    for (const auto& [k, v] : req.query) api.query.emplace_back(k, v);
    if (!IsWatch(req)) {
      auto got = federation_->Do(api);
      if (!got.ok()) {
        RespondStatus(out, 503, "ServiceUnavailable",
                      "the federation did not answer: " + got.status().message());
        return;
      }
      out.Respond(got->code, With(PageHeaders(), "Content-Type", "application/json"),
                  std::move(got->body));
      return;
    }
    ProxySink sink(out);
    std::atomic<bool> done = false;
    // The federation may send nothing for a long time: notice a browser
    // that left in the meantime and end the upstream watch with it.
    std::thread gone([&] {
      while (!done && !sink.Cancelled()) {
        if (out.WaitClientGone(kGoneCheckMillis)) sink.Cancel();
      }
    });
    Status s = federation_->Stream(api, sink);
    done = true;
    gone.join();
    if (!out.Responded()) {
      RespondStatus(out, 503, "ServiceUnavailable",
                    "the federation did not answer: " + s.message());
    }
  }

  std::shared_ptr<client::Transport> federation_;
  std::unique_ptr<apiserver::HttpServer> server_;
};

}  // namespace

StatusOr<std::unique_ptr<Dashboard>> Dashboard::Start(const DashboardOptions& options) {
  // Watches are long: no per-request deadline on their bodies (the REST
  // transport applies none), none on the client side either.
  client::RestOptions rest{.qps = 0, .max_retries = 2};
  FLOTILLA_ASSIGN_OR_RETURN(auto transport, client::NewRestTransport(options.federation, rest));
  auto dashboard = std::make_unique<DashboardImpl>(std::move(transport));
  FLOTILLA_RETURN_IF_ERROR(dashboard->Listen(options.port));
  return std::unique_ptr<Dashboard>(std::move(dashboard));
}

}  // namespace flotilla::dashboard
