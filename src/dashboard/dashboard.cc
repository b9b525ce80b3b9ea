// The dashboard's server (dashboard.h).
#include "dashboard/dashboard.h"

#include "apiserver/http_server.h"
#include "base/json.h"
#include "base/utf8.h"
#include "client/rest_client.h"
#include "dashboard/assets.h"
#include "dashboard/streams.h"

namespace flotilla::dashboard {
namespace {

using apiserver::Headers;
using apiserver::Request;
using apiserver::Responder;

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
  json::object status{{"kind", "Status"},
                      {"apiVersion", "v1"},
                      {"metadata", json::object()},
                      {"status", "Failure"},
                      {"message", ToValidUtf8(message)},
                      {"reason", reason},
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

class DashboardImpl : public Dashboard {
 public:
  DashboardImpl(std::shared_ptr<client::Transport> federation,
                const std::vector<DashboardWorkload>& workloads)
      : federation_(std::move(federation)), workloads_(WorkloadsJson(workloads)) {}
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
    if (req.path == "/workloads.json") {
      out.Respond(200, With(PageHeaders(), "Content-Type", "application/json"), workloads_);
      return;
    }
    if (req.path == "/watch") {
      auto specs = ParseWatchSpecs(req);
      if (!specs.ok()) return RespondStatus(out, 400, "BadRequest", specs.status().message());
      return ServeMergedWatch(*federation_, *specs, out);
    }
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
    ForwardWatch(*federation_, api, out);
  }

  std::shared_ptr<client::Transport> federation_;
  // The workload kinds the page lists, as /workloads.json.
  static std::string WorkloadsJson(const std::vector<DashboardWorkload>& workloads) {
    json::array out;
    for (const DashboardWorkload& w : workloads) {
      out.push_back(json::object{
          {"kind", w.kind}, {"path", w.path}, {"breakdownAnnotation", w.breakdown_annotation}});
    }
    return ToJson(out);
  }

  std::unique_ptr<apiserver::HttpServer> server_;
  const std::string workloads_;
};

}  // namespace

StatusOr<std::unique_ptr<Dashboard>> Dashboard::Start(const DashboardOptions& options) {
  // Watches are long: no per-request deadline on their bodies (the REST
  // transport applies none), none on the client side either.
  client::RestOptions rest{.qps = 0, .max_retries = 2};
  FLOTILLA_ASSIGN_OR_RETURN(auto transport, client::NewRestTransport(options.federation, rest));
  auto dashboard = std::make_unique<DashboardImpl>(std::move(transport), options.workloads);
  FLOTILLA_RETURN_IF_ERROR(dashboard->Listen(options.port));
  return std::unique_ptr<Dashboard>(std::move(dashboard));
}

}  // namespace flotilla::dashboard
