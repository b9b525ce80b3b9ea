#include "fuzz/api_server.h"

#include <memory>

#include "api/kinds/kinds.h"
#include "api/schema.h"
#include "apiserver/api_server.h"
#include "apiserver/url.h"
#include "base/clock.h"
#include "base/json.h"
#include "federation/admission/admission.h"
#include "federation/controllers.h"
#include "fuzz/targets.h"
#include "storage/store.h"

namespace flotilla::fuzz {
namespace {

class Capture : public apiserver::Responder {
 public:
  void Respond(int code, const apiserver::Headers&, std::string body) override {
    response.code = code;
    response.body = std::move(body);
    responded = true;
  }
  bool StartStream(int code, const apiserver::Headers&) override {
    response.code = code;
    responded = true;
    return false;
  }
  bool WriteChunk(std::string_view) override { return false; }
  bool ClientGone() override { return true; }
  bool WaitClientGone(int) override { return true; }
  bool Responded() const override { return responded; }

  Response response;
  bool responded = false;
};

constexpr char kExisting[] = R"({"apiVersion": "apps/v1", "kind": "Deployment",
  "metadata": {"name": "existing", "labels": {"app": "web"},
               "annotations": {"federation.kubernetes.io/deployment-preferences":
                               "{\"clusters\": {\"*\": {\"weight\": 1}}}"}},
  "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
    "template": {"metadata": {"labels": {"app": "web"}},
      "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
        "ports": [{"containerPort": 80, "name": "http"}],
        "env": [{"name": "A", "value": "1"}],
        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}}})";

struct Server {
  Server() {
    api::RegisterFoundationKinds(registry);
    federation::AddFederationAdmission(registry, federation::BuiltInKinds());
    store = storage::NewMemoryStore();
    api = std::make_unique<apiserver::ApiServer>(
        apiserver::ApiServerOptions{.registry = &registry,
                                    .store = store.get(),
                                    .clock = &RealClock(),
                                    .schemas = &api::SchemaSet::Builtin()});
    if (!api->EnsureDefaultNamespaces().ok()) Broken("setup", "no default namespace");
    Response r = Handle("POST", "/apis/apps/v1/namespaces/default/deployments", "application/json",
                        kExisting);
    if (r.code != 201) Broken("setup: creating the existing Deployment", r.body);
  }

  Response Handle(std::string_view method, std::string_view target, std::string_view content_type,
                  std::string_view body) {
    apiserver::Request req;
    req.method = std::string(method);
    req.target = std::string(target);
    apiserver::SplitTarget(req.target, &req.path, &req.query);
    if (!content_type.empty()) req.headers["content-type"] = std::string(content_type);
    req.headers["accept"] = "application/json";
    req.body = std::string(body);
    req.remote = "127.0.0.1:1";
    Capture out;
    api->Handle(req, out);
    return out.response;
  }

  api::Registry registry;
  std::unique_ptr<storage::Store> store;
  std::unique_ptr<apiserver::ApiServer> api;
};

Server& TheServer() {
  static Server* server = new Server();  // kept for the process, never destroyed
  return *server;
}

}  // namespace

Response Call(std::string_view method, std::string_view target, std::string_view content_type,
              std::string_view body) {
  return TheServer().Handle(method, target, content_type, body);
}

void ExpectClean(const Response& r, std::string_view request) {
  if (r.code >= 500 || r.code < 200) {
    Broken("a bad request got " + std::to_string(r.code) + ": " + std::string(request), r.body);
  }
  if (!ParseJsonObject(r.body).ok()) {
    Broken("an answer that is not a JSON object: " + std::string(request), r.body);
  }
}

}  // namespace flotilla::fuzz
