#include "apiserver/api_server.h"

#include <algorithm>
#include <set>
#include <type_traits>

#include "api/protobuf.h"
#include "apiserver/openapi_proto.h"
#include "apiserver/resource_handler.h"
#include "apiserver/responses.h"
#include "apiserver/reviews.h"
#include "base/log.h"

namespace flotilla::apiserver {
namespace {

// The subresources a kubelet streams over an upgraded connection.
bool IsConnectSubresource(std::string_view sub) {
  return sub == "exec" || sub == "attach" || sub == "portforward";
}

bool IsHealthPath(const std::string& p) {
  return p == "/healthz" || p == "/livez" || p == "/readyz" || p.rfind("/healthz/", 0) == 0 ||
         p.rfind("/livez/", 0) == 0 || p.rfind("/readyz/", 0) == 0;
}

void RespondText(Responder& resp, int code, const std::string& body,
                 const std::string& type = "text/plain; charset=utf-8") {
  resp.Respond(code, {{"Content-Type", type}, {"Cache-Control", "no-cache, private"}}, body);
}

// Passes everything through and remembers the status code for metrics and
// the audit log, with the body when the audit log needs it (a failure's
// status for any audited request, the whole body at RequestResponse); adds the
// Audit-ID header of an audited request.
class CodeRecorder : public Responder {
 public:
  CodeRecorder(Responder& inner, AuditRequest& audit) : inner_(inner), audit_(audit) {}
  void Respond(int code, const Headers& headers, std::string body) override {
    code_ = code;
    if (audit_.WantsResponseBody() || (code >= 400 && audit_.Recording())) body_ = body;
    WithAuditId(headers, [&](const Headers& h) { inner_.Respond(code, h, std::move(body)); });
  }
  void RespondParts(int code, const Headers& headers,
                    const std::vector<std::string_view>& parts) override {
    code_ = code;
    if (audit_.WantsResponseBody()) {
      for (std::string_view p : parts) body_ += p;
    }
    WithAuditId(headers, [&](const Headers& h) { inner_.RespondParts(code, h, parts); });
  }
  bool StartStream(int code, const Headers& headers) override {
    code_ = code;
    audit_.ResponseStarted(code);
    return WithAuditId(headers, [&](const Headers& h) { return inner_.StartStream(code, h); });
  }
  std::shared_ptr<ChunkStream> StartAsyncStream(int code, const Headers& headers) override {
    code_ = code;
    audit_.ResponseStarted(code);
    return WithAuditId(headers, [&](const Headers& h) { return inner_.StartAsyncStream(code, h); });
  }
  bool SwitchProtocols(const Headers& headers, std::function<void(http2::Upgraded)> take) override {
    if (!WithAuditId(headers, [&](const Headers& h) {
          return inner_.SwitchProtocols(h, std::move(take));
        })) {
      return false;
    }
    code_ = 101;
    audit_.ResponseStarted(101);
    return true;
  }
  bool TakeConnection(std::function<void(http2::Upgraded)> take) override {
    if (!inner_.TakeConnection(std::move(take))) return false;
    code_ = 101;
    audit_.ResponseStarted(101);
    return true;
  }
  bool WriteChunk(std::string_view data) override { return inner_.WriteChunk(data); }
  bool ClientGone() override { return inner_.ClientGone(); }
  bool WaitClientGone(int millis) override { return inner_.WaitClientGone(millis); }
  void NotifyWhenGone(std::function<void()> wake) override {
    inner_.NotifyWhenGone(std::move(wake));
  }
  bool Responded() const override { return inner_.Responded(); }
  int code() const { return code_; }
  const std::string& body() const { return body_; }

 private:
  // `fn` of the headers, with the Audit-ID header added for an audited
  // request (the headers copied then only).
  template <typename Fn>
  std::invoke_result_t<Fn, const Headers&> WithAuditId(const Headers& headers, Fn fn) const {
    if (audit_.audit_id().empty()) return fn(headers);
    Headers out = headers;
    out.emplace_back("Audit-ID", audit_.audit_id());
    return fn(out);
  }

  Responder& inner_;
  AuditRequest& audit_;
  int code_ = 0;
  std::string body_;
};

// The request body as JSON text for the audit log: a protobuf body is
// decoded, as kube-apiserver logs the decoded object; "" when it cannot be.
std::string AuditBody(const Request& req, const AuditLog* log) {
  if (log == nullptr || req.body.empty()) return "";
  if (!api::IsKubernetesProtobuf(req.HeaderView("content-type"))) return req.body;
  auto env = api::ParseProtobufEnvelope(req.body);
  if (!env.ok() || !api::HasProtobufSchema(env->api_version, env->kind)) return "";
  auto obj = api::DecodeProtobufObject(env->raw, env->api_version, env->kind);
  return obj.ok() ? json::serialize(*obj) : "";
}

// What the audit policy and the authorizer see of a request.
RequestAttributes AttributesOf(const Request& req, const RequestInfo& info) {
  if (info.resource_request) {
    return {info.verb, info.group, info.resource, info.subresource,
            info.ns,   info.name,  true,          info.path};
  }
  std::string verb = req.method == "GET" || req.method == "HEAD" ? "get" : info.verb;
  return {verb, "", "", "", "", "", false, info.path};
}

// The proxied path and query of a proxy subresource's request, as they
// were received (still percent-encoded): the raw path's segments after
// {name}/proxy.
ProxyTarget ProxyTargetOf(const Request& req, const RequestInfo& info, const api::Resource& res) {
  ProxyTarget t{&res, info.ns, info.name, "/", ""};
  std::string_view raw = req.target;
  size_t q = raw.find('?');
  if (q != std::string_view::npos) {
    t.query = std::string(raw.substr(q + 1));
    raw = raw.substr(0, q);
  }
  // api[s], [group], version, [namespaces, ns], plural, name, proxy.
  size_t skip = (info.api_prefix == "apis" ? 3 : 2) + (info.ns.empty() ? 0 : 2) + 3;
  size_t i = 0;
  for (size_t seen = 0; seen < skip && i < raw.size();) {
    while (i < raw.size() && raw[i] == '/') ++i;
    size_t end = raw.find('/', i);
    i = end == std::string_view::npos ? raw.size() : end;
    ++seen;
  }
  if (i < raw.size()) t.path = std::string(raw.substr(i));
  return t;
}

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
      inflight_(opts.inflight),
      rbac_(objects_, opts.controller_groups) {
  metrics_.SetSource("inflight", [this] { return inflight_.RenderMetrics(); });
  metrics_.SetSource("storage_objects", [this] { return RenderStorageObjects(); });
  objects_.SetEventTtl(opts.event_ttl);
  Publish({});
  objects_.SetKindResolver([this](std::string_view group, std::string_view plural) {
    std::shared_ptr<const Served> served = this->served();
    for (const auto& r : served->registry.All()) {
      if (r->group == group && r->plural == plural && r->version == r->StorageVersion()) return r;
    }
    return std::shared_ptr<api::Resource>();
  });
  if (opts_.schemas != nullptr) {
    const api::SchemaSet* schemas = opts_.schemas;
    objects_.SetSchemaChecker([schemas](const api::Resource& res, json::object& obj,
                                        FieldValidation validation,
                                        std::vector<std::string>* warnings) -> Status {
      api::CheckResult result;
      if (res.prune_fn) {
        // A custom kind: its own schema prunes; its metadata is ObjectMeta.
        if (json::value* meta = obj.if_contains("metadata")) {
          api::CheckResult in_meta;
          schemas->Check("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", *meta, &in_meta);
          for (StatusCause& c : in_meta.type_errors) {
            c.field = "metadata." + c.field;
            result.type_errors.push_back(std::move(c));
          }
          for (const std::string& f : in_meta.unknown_fields) {
            result.unknown_fields.push_back("metadata." + f);
          }
        }
        res.prune_fn(obj, &result.unknown_fields);
      } else {
        schemas->Check(res.schema_name, obj, &result);
      }
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
    objects_.SetTyping([schemas](const api::Resource& res) {
      if (res.definitions != nullptr) {
        return api::Typed(res.definitions.get(), GetObject(*res.definitions, res.schema_name));
      }
      return api::Typed(&schemas->Definitions(), schemas->Definition(res.schema_name));
    });
  }
}

ApiServer::~ApiServer() {
  if (custom_resources_) custom_resources_->Stop();
}

const OpenApi* ApiServer::Served::openapi() const {
  if (schemas == nullptr) return nullptr;
  std::call_once(openapi_once_,
                 [this] { openapi_ = std::make_unique<OpenApi>(registry, *schemas); });
  return openapi_.get();
}

std::shared_ptr<const ApiServer::Served> ApiServer::served() const {
  MutexLock lock(served_mu_);
  return served_;
}

void ApiServer::Publish(std::vector<std::shared_ptr<api::Resource>> custom) {
  for (const auto& r : custom) opts_.registry->PrepareCustomKind(*r);  // fresh ones
  if (opts_.schemas != nullptr) {
    // Each custom kind carries the definitions its objects are typed by.
    static const char kObjectMeta[] = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
    json::object meta_closure;
    std::vector<std::string> pending{kObjectMeta};
    while (!pending.empty()) {
      std::string name = std::move(pending.back());
      pending.pop_back();
      const json::object* def = opts_.schemas->Definition(name);
      if (def == nullptr || meta_closure.contains(name)) continue;
      meta_closure[name] = *def;
      CollectDefinitionRefs(*def, pending);
    }
    for (const auto& r : custom) {
      if (r->definitions != nullptr) continue;
      auto defs = std::make_shared<json::object>(meta_closure);
      (*defs)[r->schema_name] = r->schema_definition;
      r->definitions = std::move(defs);
    }
  }
  auto next = std::make_shared<Served>(opts_.registry->Extended(custom));
  if (opts_.schemas != nullptr) {
    next->schemas = opts_.schemas;
    if (!custom.empty()) {
      json::object all = opts_.schemas->Definitions();
      for (const auto& r : custom) all[r->schema_name] = r->schema_definition;
      next->own_schemas = std::make_unique<api::SchemaSet>(std::move(all));
      next->schemas = next->own_schemas.get();
    }
  }
  MutexLock lock(served_mu_);
  served_ = std::move(next);
}

Status ApiServer::StartCustomResources() {
  const api::Resource* crds =
      opts_.registry->Find("apiextensions.k8s.io", "v1", "customresourcedefinitions");
  if (crds == nullptr) return Status::Ok();
  custom_resources_ = std::make_unique<CustomResources>(
      objects_, *crds,
      [this](std::vector<std::shared_ptr<api::Resource>> custom) { Publish(std::move(custom)); },
      opts_.registry->Find("rbac.authorization.k8s.io", "v1", "clusterroles"));
  return custom_resources_->Start();
}

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

const AgentHandler* ApiServer::AgentHandlerFor(const api::Resource& res,
                                               const std::string& subresource) const {
  if (!res.has_agent) return nullptr;
  const AgentHandler* handler = subresource == "tunnel"     ? &opts_.tunnel
                                : subresource == "register" ? &opts_.register_agent
                                                            : nullptr;
  return handler != nullptr && *handler ? handler : nullptr;
}

std::shared_ptr<const api::Resource> ApiServer::ResolveResource(const RequestInfo& info) const {
  return served()->registry.FindShared(info.group, info.version, info.resource);
}

void ApiServer::Handle(Request& req, Responder& outer) {
  auto start = std::chrono::steady_clock::now();
  RequestInfo info = ParseRequestInfo(req);
  // Without an audit log, nothing of the request is copied for it.
  AuditRequest audit =
      opts_.audit_log == nullptr
          ? AuditRequest()
          : AuditRequest(opts_.audit_log, req.method, req.target, req.remote,
                         req.Header("user-agent"), AttributesOf(req, info), info.version);
  CodeRecorder resp(outer, audit);
  Identity id = Identify(req);
  audit.Received(id.authenticated ? &*id.authenticated : nullptr,
                 id.impersonated ? &*id.impersonated : nullptr, AuditBody(req, opts_.audit_log));
  if (!id.impersonation.ok()) {
    RespondStatus(resp, id.impersonation);
    audit.ResponseComplete(resp.code(), resp.body());
    return;
  }
  const std::optional<UserInfo>& user = id.user();
  std::unique_ptr<InflightLimiter::Slot> slot;
  if (user && !IsHealthPath(info.path) && !IsSystemMaster(*user)) {
    slot = inflight_.TryAcquire(ClassifyRequest(info));
  }
  if (!user && !IsHealthPath(info.path)) {
    RespondStatus(resp, Status::Unauthorized(id.unauthenticated.empty()
                                                 ? "Unauthorized"
                                                 : "Unauthorized: " + id.unauthenticated));
  } else if (user && !IsHealthPath(info.path) && !IsSystemMaster(*user) && !slot) {
    RespondTooManyRequests(resp);
  } else if (info.resource_request) {
    HandleResource(req, info, *user, resp, audit);
  } else if (user && opts_.extra_paths && opts_.extra_paths(req, *user, resp)) {
    // answered by the extra paths
  } else if (!IsHealthPath(info.path) && !AuthorizedNonResource(*user, req, info, audit)) {
    RespondStatus(resp, Status::Forbidden(ForbiddenMessage(*user, AttributesOf(req, info))));
  } else {
    HandleNonResource(req, info, resp);
  }
  // A watch answered to a synchronous responder is served here, on the
  // caller's thread; an event-driven server's goes on without a thread.
  outer.RunDetachedStream();
  audit.ResponseComplete(resp.code(), resp.body());
  // A watch's duration is its lifetime, not a latency: count it, don't time it.
  double secs =
      info.verb == "watch"
          ? 0
          : std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  metrics_.ObserveRequest(info.resource_request ? info.verb : req.method,
                          info.resource_request ? std::string_view(info.resource) : "", resp.code(),
                          secs);
}

ApiServer::Identity ApiServer::Identify(const Request& req) const {
  Identity id;
  if (opts_.authenticator == nullptr) {
    id.authenticated = InProcessUser();
    return id;
  }
  id.authenticated = opts_.authenticator->Authenticate(req.HeaderView("authorization"),
                                                       req.peer_cert, &id.unauthenticated);
  // Headers sort by name: any Impersonate-* header is at or after the prefix.
  constexpr std::string_view kImpersonate = "impersonate-";
  auto first = req.headers.lower_bound(kImpersonate);
  if (!id.authenticated || first == req.headers.end() || !first->first.starts_with(kImpersonate)) {
    return id;
  }
  StatusOr<UserInfo> effective = Impersonate(req, *id.authenticated);
  if (!effective.ok()) {
    id.impersonation = effective.status();
    return id;
  }
  // Without Impersonate-User the others are refused: `effective` is the
  // authenticated user.
  if (!req.HeaderView("impersonate-user").empty()) id.impersonated = std::move(*effective);
  return id;
}

bool ApiServer::AuthorizedNonResource(const UserInfo& user, const Request& req,
                                      const RequestInfo& info, AuditRequest& audit) const {
  Decision d = rbac_.Authorize(user, AttributesOf(req, info));
  audit.Decided(d);
  return d.allowed;
}

StatusOr<UserInfo> ApiServer::Impersonate(const Request& req, UserInfo user) const {
  std::string as_user = req.Header("impersonate-user");
  std::string as_groups = req.Header("impersonate-group");
  std::string as_uid = req.Header("impersonate-uid");
  std::vector<std::pair<std::string, std::string>> extras;
  constexpr std::string_view kExtra = "impersonate-extra-";
  for (const auto& [name, value] : req.headers) {
    if (name.starts_with(kExtra)) extras.emplace_back(name.substr(kExtra.size()), value);
  }
  if (as_user.empty()) {
    if (as_groups.empty() && as_uid.empty() && extras.empty()) return user;
    return Status::BadRequest(
        "requested impersonation of groups, a uid or extra fields "
        "without impersonating a user");
  }
  auto check = [&](RequestAttributes attrs) -> Status {
    if (rbac_.Authorize(user, attrs).allowed) return Status::Ok();
    return Status::Forbidden(ForbiddenMessage(user, attrs));
  };
  UserInfo as{as_user, as_uid, {}};
  constexpr std::string_view kSaPrefix = "system:serviceaccount:";
  size_t colon = as_user.rfind(':');
  if (as_user.starts_with(kSaPrefix) && colon > kSaPrefix.size()) {
    std::string ns = as_user.substr(kSaPrefix.size(), colon - kSaPrefix.size());
    std::string name = as_user.substr(colon + 1);
    FLOTILLA_RETURN_IF_ERROR(
        check({"impersonate", "", "serviceaccounts", "", ns, name, true, req.path}));
    as.groups = ServiceAccountGroups(ns);
  } else {
    FLOTILLA_RETURN_IF_ERROR(check({"impersonate", "", "users", "", "", as_user, true, req.path}));
  }
  for (size_t start = 0; !as_groups.empty() && start <= as_groups.size();) {
    size_t comma = as_groups.find(',', start);
    std::string group = as_groups.substr(start, comma == std::string::npos ? comma : comma - start);
    start = comma == std::string::npos ? as_groups.size() + 1 : comma + 1;
    if (group.empty()) continue;
    FLOTILLA_RETURN_IF_ERROR(check({"impersonate", "", "groups", "", "", group, true, req.path}));
    if (std::find(as.groups.begin(), as.groups.end(), group) == as.groups.end()) {
      as.groups.push_back(group);
    }
  }
  if (!as_uid.empty()) {
    FLOTILLA_RETURN_IF_ERROR(
        check({"impersonate", "authentication.k8s.io", "uids", "", "", as_uid, true, req.path}));
  }
  for (const auto& [key, value] : extras) {
    FLOTILLA_RETURN_IF_ERROR(check(
        {"impersonate", "authentication.k8s.io", "userextras", key, "", value, true, req.path}));
  }
  if (as_user != "system:anonymous" &&
      std::find(as.groups.begin(), as.groups.end(), kGroupAuthenticated) == as.groups.end()) {
    as.groups.emplace_back(kGroupAuthenticated);
  }
  return as;
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
    // "v1.19.16" -> major "1", minor "19".
    std::string_view gv = opts_.git_version;
    if (gv.starts_with("v")) gv.remove_prefix(1);
    std::string_view major = gv.substr(0, gv.find('.'));
    std::string_view minor = gv.size() > major.size() ? gv.substr(major.size() + 1) : "";
    minor = minor.substr(0, minor.find('.'));
    json::object v{
        {"major", major},     {"minor", minor},          {"gitVersion", opts_.git_version},
        {"gitCommit", ""},    {"gitTreeState", "clean"}, {"buildDate", ""},
        {"goVersion", "n/a"}, {"compiler", "flotilla"},  {"platform", "linux/amd64"}};
    return RespondJson(resp, 200, json::serialize(v));
  }
  if (p == "/metrics") {
    return RespondText(resp, 200, metrics_.Render(), "text/plain; version=0.0.4; charset=utf-8");
  }
  std::shared_ptr<const Served> served = this->served();
  const bool wants_openapi = p.rfind("/openapi/v", 0) == 0;
  const OpenApi* openapi = wants_openapi ? served->openapi() : nullptr;
  if (p == "/openapi/v2" || p == "/openapi/v2/") {
    if (!openapi) return RespondStatus(resp, Status::NotFound("OpenAPI is not served"));
    std::string accept = req.Header("accept");
    if (accept.find("application/json") == std::string::npos &&
        accept.find(kOpenApiV2ProtobufType) != std::string::npos) {
      return resp.Respond(
          200,
          {{"Content-Type", kOpenApiV2ProtobufContentType}, {"Cache-Control", "no-cache, private"}},
          openapi->V2Protobuf());
    }
    if (accept.find("application/json") == std::string::npos &&
        accept.find("protobuf") != std::string::npos) {
      return RespondStatus(resp, Status(Reason::kNotAcceptable,
                                        "application/json and " +
                                            std::string(kOpenApiV2ProtobufType) + " are served"));
    }
    return RespondJson(resp, 200, openapi->V2());
  }
  if (p == "/openapi/v3" || p == "/openapi/v3/") {
    if (!openapi) return RespondStatus(resp, Status::NotFound("OpenAPI is not served"));
    return RespondJson(resp, 200, openapi->V3Index());
  }
  if (p.rfind("/openapi/v3/", 0) == 0 && openapi) {
    const std::string* doc = openapi->V3(p.substr(std::string("/openapi/v3/").size()));
    if (doc == nullptr)
      return RespondStatus(resp,
                           Status::NotFound("the server could not find the requested resource"));
    return RespondJson(resp, 200, *doc);
  }
  if (info.is_discovery) {
    if ((p == "/api" || p == "/apis" || p == "/api/" || p == "/apis/") &&
        WantsAggregatedDiscovery(req.Header("accept"))) {
      return RespondJson(resp, 200, *served->discovery.Aggregated(p), {},
                         kAggregatedDiscoveryContentType);
    }
    if (const std::string* doc = served->discovery.Legacy(p)) return RespondJson(resp, 200, *doc);
  }
  RespondStatus(resp, Status::NotFound("the server could not find the requested resource"));
}

void ApiServer::HandleResource(Request& req, const RequestInfo& info, const UserInfo& user,
                               Responder& resp, AuditRequest& audit) {
  std::shared_ptr<const api::Resource> keep = ResolveResource(info);
  const api::Resource* res = keep.get();
  if (res == nullptr) {
    return RespondStatus(resp,
                         Status::NotFound("the server could not find the requested resource"));
  }
  RequestAttributes attrs = AttributesOf(req, info);
  Decision decision = rbac_.Authorize(user, attrs);
  audit.Decided(decision);
  if (!decision.allowed) {
    return RespondStatus(resp, Status::Forbidden(ForbiddenMessage(user, attrs)), info.name, res);
  }
  if (info.subresource == "proxy" && res->has_proxy && opts_.proxy) {
    return opts_.proxy(req, ProxyTargetOf(req, info, *res), user, resp);
  }
  if (const AgentHandler* agent = AgentHandlerFor(*res, info.subresource)) {
    if (info.verb != "create") {
      return RespondStatus(resp,
                           Status(Reason::kMethodNotAllowed,
                                  "the " + info.subresource + " subresource takes POST only"));
    }
    return (*agent)(req, info.name, user, resp);
  }
  if (info.subresource == "log" && HasLog(*res) && opts_.pod_logs && info.verb == "get") {
    auto pod = objects_.Get(*res, info.ns, info.name);
    if (!pod.ok()) return RespondStatus(resp, pod.status(), info.name, res);
    auto reread = [this, keep, ns = info.ns, name = info.name] {
      return objects_.Get(*keep, ns, name);
    };
    return opts_.pod_logs(req, *pod, std::move(reread), user, resp);
  }
  if (IsConnectSubresource(info.subresource) && HasLog(*res) && opts_.pod_connect &&
      (info.verb == "get" || info.verb == "create")) {
    if (info.verb == "get") {
      // A WebSocket client's GET asks for what kubectl's POST (SPDY) asks:
      // create, as Kubernetes 1.35 requires (AuthorizePodWebsocketUpgrade-
      // CreatePermission) so that `get` on pods/exec alone runs nothing.
      RequestAttributes create = attrs;
      create.verb = "create";
      if (!rbac_.Authorize(user, create).allowed) {
        return RespondStatus(resp, Status::Forbidden(ForbiddenMessage(user, create)), info.name,
                             res);
      }
    }
    auto pod = objects_.Get(*res, info.ns, info.name);
    if (!pod.ok()) return RespondStatus(resp, pod.status(), info.name, res);
    auto reread = [this, keep, ns = info.ns, name = info.name] {
      return objects_.Get(*keep, ns, name);
    };
    return opts_.pod_connect(req, info.subresource, *pod, std::move(reread), user, resp);
  }
  if (info.subresource.empty() && info.verb == "delete" && res->group.empty() &&
      res->plural == "pods" && opts_.pod_delete) {
    auto pod = objects_.Get(*res, info.ns, info.name);
    if (!pod.ok()) return RespondStatus(resp, pod.status(), info.name, res);
    return opts_.pod_delete(req, *pod, user, resp);
  }
  if (res->namespaced && info.ns.empty() && info.verb != "list" && info.verb != "watch" &&
      info.verb != "deletecollection") {
    return RespondStatus(resp,
                         Status::NotFound("the server could not find the requested resource"));
  }
  ResourceContext ctx{*res, info, req, resp, objects_, metrics_, std::move(keep)};
  ReviewServices reviews{rbac_,
                         opts_.authenticator,
                         opts_.service_account_tokens,
                         {std::string(kServiceAccountIssuer)}};
  if (ServeReview(ctx, user, reviews)) return;
  if (res->group == rbac::kGroup) {
    ctx.admit = [this, &user, res, ns = info.ns](const json::object& obj, const json::object* old) {
      return rbac_.Admit(user, *res, ns, obj, old);
    };
  }
  if (info.verb == "watch") return ServeWatch(ctx);
  ServeResourceRequest(ctx);
}

std::string ApiServer::RenderStorageObjects() {
  std::string out =
      "# HELP apiserver_storage_objects Number of stored objects at the time of last check split "
      "by kind.\n# TYPE apiserver_storage_objects gauge\n";
  std::set<std::string> seen;  // resources sharing a storage (versions) count once
  std::shared_ptr<const Served> served = this->served();
  for (const auto& res : served->registry.All()) {
    const auto& verbs = res->verbs;
    if (std::find(verbs.begin(), verbs.end(), "list") == verbs.end()) continue;  // reviews
    if (!seen.insert(Objects::Prefix(*res, "")).second) continue;
    auto n = store_.Count(Objects::Prefix(*res, ""));
    if (!n.ok()) continue;
    out += "apiserver_storage_objects{resource=\"" + res->GroupResource() + "\"} " +
           std::to_string(*n) + "\n";
  }
  return out;
}

}  // namespace flotilla::apiserver
