#include "apiserver/api_server.h"

#include "apiserver/resource_handler.h"
#include "apiserver/responses.h"
#include "base/log.h"

namespace flotilla::apiserver {
namespace {

bool IsHealthPath(const std::string& p) {
  return p == "/healthz" || p == "/livez" || p == "/readyz" || p.rfind("/healthz/", 0) == 0 ||
         p.rfind("/livez/", 0) == 0 || p.rfind("/readyz/", 0) == 0;
}

void RespondText(Responder& resp, int code, const std::string& body,
                 const std::string& type = "text/plain; charset=utf-8") {
  resp.Respond(code, {{"Content-Type", type}, {"Cache-Control", "no-cache, private"}}, body);
}

bool AuthorizedNonResource(const UserInfo& user, const Request& req, const RequestInfo& info) {
  std::string verb = req.method == "GET" || req.method == "HEAD" ? "get" : info.verb;
  RequestAttributes attrs{verb, "", "", "", "", "", false, info.path};
  return Authorize(user, attrs).allowed;
}

// Passes everything through and remembers the status code for metrics.
class CodeRecorder : public Responder {
 public:
  explicit CodeRecorder(Responder& inner) : inner_(inner) {}
  void Respond(int code, const Headers& headers, std::string body) override {
    code_ = code;
    inner_.Respond(code, headers, std::move(body));
  }
  void RespondParts(int code, const Headers& headers,
                    const std::vector<std::string_view>& parts) override {
    code_ = code;
    inner_.RespondParts(code, headers, parts);
  }
  bool StartStream(int code, const Headers& headers) override {
    code_ = code;
    return inner_.StartStream(code, headers);
  }
  bool WriteChunk(std::string_view data) override { return inner_.WriteChunk(data); }
  bool ClientGone() override { return inner_.ClientGone(); }
  bool WaitClientGone(int millis) override { return inner_.WaitClientGone(millis); }
  void NotifyWhenGone(std::function<void()> wake) override {
    inner_.NotifyWhenGone(std::move(wake));
  }
  bool Responded() const override { return inner_.Responded(); }
  int code() const { return code_; }

 private:
  Responder& inner_;
  int code_ = 0;
};

const UserInfo& InProcessUser() {
  static const UserInfo kUser{"system:apiserver", "", {"system:masters", "system:authenticated"}};
  return kUser;
}

// What kube-apiserver's max-in-flight filter answers, as a Status, with the
// Retry-After clients wait out.
void RespondTooManyRequests(Responder& resp) {
  json::object body =
      StatusObject(Status(Reason::kTooManyRequests, "too many requests, please try again later"));
  body["details"] = json::object{{"retryAfterSeconds", 1}};
  Headers headers = JsonHeaders();
  headers.emplace_back("Retry-After", "1");
  resp.Respond(429, headers, json::serialize(body));
}

bool IsSystemMaster(const UserInfo& user) {
  for (const std::string& g : user.groups) {
    if (g == kGroupMasters) return true;
  }
  return false;
}

}  // namespace

ApiServer::ApiServer(const ApiServerOptions& opts)
    : opts_(opts),
      store_(*opts.store, metrics_),
      objects_(*opts.registry, store_, *opts.clock),
      discovery_(*opts.registry),
      inflight_(opts.inflight) {
  metrics_.SetSource("inflight", [this] { return inflight_.RenderMetrics(); });
  if (opts_.schemas != nullptr) {
    openapi_ = std::make_unique<OpenApi>(*opts_.registry, *opts_.schemas);
    const api::SchemaSet* schemas = opts_.schemas;
    objects_.SetSchemaChecker([schemas](const api::Resource& res, json::object& obj,
                                        FieldValidation validation,
                                        std::vector<std::string>* warnings) -> Status {
      api::CheckResult result;
      schemas->Check(res.schema_name, obj, &result);
      FLOTILLA_RETURN_IF_ERROR(
          api::DecodeError(res.kind, res.version, result, validation == FieldValidation::kStrict));
      if (validation == FieldValidation::kWarn && warnings != nullptr) {
        for (auto& w : api::UnknownFieldWarnings(result)) warnings->push_back(std::move(w));
      }
      PruneFields(obj, result.unknown_fields);
      return Status::Ok();
    });
    objects_.SetPatchInfo(
        [schemas](const api::Resource& res) { return schemas->PatchInfo(res.schema_name); });
  }
}

ApiServer::~ApiServer() = default;

Status ApiServer::EnsureDefaultNamespaces() {
  const api::Resource* ns = opts_.registry->Find("", "v1", "namespaces");
  if (ns == nullptr) return Status::Ok();
  for (const char* name : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    json::object obj{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
    auto created = objects_.Create(*ns, "", std::move(obj), {});
    if (!created.ok() && !created.status().Is(Reason::kAlreadyExists)) return created.status();
  }
  return Status::Ok();
}

const api::Resource* ApiServer::ResolveResource(const RequestInfo& info) const {
  return opts_.registry->Find(info.group, info.version, info.resource);
}

void ApiServer::Handle(Request& req, Responder& outer) {
  auto start = std::chrono::steady_clock::now();
  CodeRecorder resp(outer);
  RequestInfo info = ParseRequestInfo(req);
  std::optional<UserInfo> user;
  if (opts_.authenticator == nullptr) {
    user = InProcessUser();
  } else {
    user = opts_.authenticator->Authenticate(req.Header("authorization"), req.peer_cert);
  }
  std::unique_ptr<InflightLimiter::Slot> slot;
  if (user && !IsHealthPath(info.path) && !IsSystemMaster(*user)) {
    slot = inflight_.TryAcquire(ClassifyRequest(info));
  }
  if (!user && !IsHealthPath(info.path)) {
    RespondStatus(resp, Status::Unauthorized("Unauthorized"));
  } else if (user && !IsHealthPath(info.path) && !IsSystemMaster(*user) && !slot) {
    RespondTooManyRequests(resp);
  } else if (info.resource_request) {
    HandleResource(req, info, *user, resp);
  } else if (user && opts_.extra_paths && opts_.extra_paths(req, *user, resp)) {
    // answered by the extra paths
  } else if (!IsHealthPath(info.path) && !AuthorizedNonResource(*user, req, info)) {
    RequestAttributes attrs{"get", "", "", "", "", "", false, info.path};
    RespondStatus(resp, Status::Forbidden(ForbiddenMessage(*user, attrs)));
  } else {
    HandleNonResource(req, info, resp);
  }
  // A watch's duration is its lifetime, not a latency: count it, don't time it.
  double secs =
      info.verb == "watch"
          ? 0
          : std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  metrics_.ObserveRequest(info.resource_request ? info.verb : req.method,
                          info.resource_request ? info.resource : "", resp.code(), secs);
}

void ApiServer::HandleNonResource(Request& req, const RequestInfo& info, Responder& resp) {
  const std::string& p = info.path;
  if (req.method != "GET" && req.method != "HEAD") {
    return RespondStatus(resp,
                         Status(Reason::kMethodNotAllowed,
                                "the server does not allow this method on the requested resource"));
  }
  if (p == "/readyz" || p.rfind("/readyz/", 0) == 0) {
    return ready_ ? RespondText(resp, 200, "ok")
                  : RespondText(resp, 500, "[-]readyz failed: not ready\n");
  }
  if (IsHealthPath(p)) return RespondText(resp, 200, "ok");
  if (p == "/version" || p == "/version/") {
    json::object v{
        {"major", "1"},       {"minor", "32"},           {"gitVersion", opts_.git_version},
        {"gitCommit", ""},    {"gitTreeState", "clean"}, {"buildDate", ""},
        {"goVersion", "n/a"}, {"compiler", "flotilla"},  {"platform", "linux/amd64"}};
    return RespondJson(resp, 200, json::serialize(v));
  }
  if (p == "/metrics") {
    return RespondText(resp, 200, metrics_.Render(), "text/plain; version=0.0.4; charset=utf-8");
  }
  if (p == "/openapi/v2" || p == "/openapi/v2/") {
    if (!openapi_) return RespondStatus(resp, Status::NotFound("OpenAPI is not served"));
    std::string accept = req.Header("accept");
    if (accept.find("application/json") == std::string::npos &&
        accept.find("protobuf") != std::string::npos) {
      return RespondStatus(resp, Status(Reason::kNotAcceptable, "only application/json is served"));
    }
    return RespondJson(resp, 200, openapi_->V2());
  }
  if (p == "/openapi/v3" || p == "/openapi/v3/") {
    if (!openapi_) return RespondStatus(resp, Status::NotFound("OpenAPI is not served"));
    return RespondJson(resp, 200, openapi_->V3Index());
  }
  if (p.rfind("/openapi/v3/", 0) == 0 && openapi_) {
    const std::string* doc = openapi_->V3(p.substr(std::string("/openapi/v3/").size()));
    if (doc == nullptr)
      return RespondStatus(resp,
                           Status::NotFound("the server could not find the requested resource"));
    return RespondJson(resp, 200, *doc);
  }
  if (info.is_discovery) {
    if ((p == "/api" || p == "/apis" || p == "/api/" || p == "/apis/") &&
        WantsAggregatedDiscovery(req.Header("accept"))) {
      return RespondJson(resp, 200, *discovery_.Aggregated(p), {}, kAggregatedDiscoveryContentType);
    }
    if (const std::string* doc = discovery_.Legacy(p)) return RespondJson(resp, 200, *doc);
  }
  RespondStatus(resp, Status::NotFound("the server could not find the requested resource"));
}

void ApiServer::HandleResource(Request& req, const RequestInfo& info, const UserInfo& user,
                               Responder& resp) {
  const api::Resource* res = ResolveResource(info);
  if (res == nullptr) {
    return RespondStatus(resp,
                         Status::NotFound("the server could not find the requested resource"));
  }
  RequestAttributes attrs{info.verb, info.group, info.resource, info.subresource,
                          info.ns,   info.name,  true,          info.path};
  Decision decision = Authorize(user, attrs);
  if (!decision.allowed) {
    return RespondStatus(resp, Status::Forbidden(ForbiddenMessage(user, attrs)), info.name, res);
  }
  if (res->namespaced && info.ns.empty() && info.verb != "list" && info.verb != "watch" &&
      info.verb != "deletecollection") {
    return RespondStatus(resp,
                         Status::NotFound("the server could not find the requested resource"));
  }
  ResourceContext ctx{*res, info, req, resp, objects_, metrics_};
  if (info.verb == "watch") return ServeWatch(ctx);
  ServeResourceRequest(ctx);
}

}  // namespace flotilla::apiserver
