// Access reviews, TokenReview and TokenRequest (reviews.h).
#include "apiserver/reviews.h"

#include "api/validation.h"
#include "apiserver/bootstrap_token.h"
#include "apiserver/meta.h"
#include "apiserver/responses.h"

namespace flotilla::apiserver {
namespace {

constexpr int64_t kDefaultTokenSeconds = 3600;
constexpr int64_t kMinTokenSeconds = 600;
constexpr int64_t kMaxTokenSeconds = int64_t{1} << 32;

Status InvalidSpec(const api::Resource& res, std::string field, const json::value& value,
                   std::string_view detail) {
  std::vector<StatusCause> causes{api::FieldInvalid(std::move(field), value, detail)};
  std::string message = res.kind + "." + res.group + " \"\" is invalid: " + causes.front().field +
                        ": " + causes.front().message;
  return Status::Invalid(std::move(message), std::move(causes));
}

// The attributes a review asks about, from spec.resourceAttributes or
// spec.nonResourceAttributes.
StatusOr<RequestAttributes> ReviewAttributes(const api::Resource& res, const json::object& spec) {
  const json::object* ra = GetObject(spec, "resourceAttributes");
  const json::object* nra = GetObject(spec, "nonResourceAttributes");
  if ((ra == nullptr) == (nra == nullptr)) {
    return InvalidSpec(res, "spec.resourceAttributes", json::value(nullptr),
                       "exactly one of nonResourceAttributes or resourceAttributes must be "
                       "specified");
  }
  if (nra != nullptr) {
    return RequestAttributes{StringAt(*nra, "verb"), "", "", "", "", "", false,
                             StringAt(*nra, "path")};
  }
  return RequestAttributes{StringAt(*ra, "verb"),
                           StringAt(*ra, "group"),
                           StringAt(*ra, "resource"),
                           StringAt(*ra, "subresource"),
                           StringAt(*ra, "namespace"),
                           StringAt(*ra, "name"),
                           true,
                           ""};
}

void RespondReview(ResourceContext& ctx, json::object obj) {
  obj["apiVersion"] = ctx.res.ApiVersion();
  obj["kind"] = ctx.res.kind;
  json::value& meta = obj["metadata"];
  if (!meta.is_object()) meta = json::object();
  meta.as_object()["creationTimestamp"] = nullptr;
  RespondJson(ctx.resp, 201, json::serialize(obj));
}

void ServeAccessReview(ResourceContext& ctx, const UserInfo& requester,
                       const ReviewServices& services, json::object body) {
  json::object& spec = EnsureObject(body, "spec");
  auto attrs = ReviewAttributes(ctx.res, spec);
  if (!attrs.ok()) return RespondStatus(ctx.resp, attrs.status(), "", &ctx.res);
  UserInfo subject = requester;
  if (ctx.res.kind != "SelfSubjectAccessReview") {
    subject = UserInfo{StringAt(spec, "user"), StringAt(spec, "uid"), StringsAt(spec, "groups")};
    if (subject.name.empty() && subject.groups.empty()) {
      return RespondStatus(ctx.resp,
                           InvalidSpec(ctx.res, "spec.user", json::value(""),
                                       "at least one of user or group must be specified"),
                           "", &ctx.res);
    }
  }
  if (ctx.res.kind == "LocalSubjectAccessReview" && attrs->resource_request &&
      attrs->ns != ctx.info.ns) {
    return RespondStatus(ctx.resp,
                         InvalidSpec(ctx.res, "spec.resourceAttributes.namespace",
                                     json::value(attrs->ns), "must match metadata.namespace"),
                         "", &ctx.res);
  }
  Decision d = services.rbac.Authorize(subject, *attrs);
  json::object status{{"allowed", d.allowed}};
  if (d.allowed && !d.reason.empty()) status["reason"] = d.reason;
  body["status"] = std::move(status);
  RespondReview(ctx, std::move(body));
}

void ServeRulesReview(ResourceContext& ctx, const UserInfo& user, const ReviewServices& services,
                      json::object body) {
  std::string ns = StringAt(body, "spec.namespace");
  json::array resource_rules, non_resource_rules;
  for (const rbac::PolicyRule& r : services.rbac.RulesFor(user, ns)) {
    if (!r.non_resource_urls.empty()) {
      non_resource_rules.push_back(json::object{
          {"verbs", ToJsonArray(r.verbs)}, {"nonResourceURLs", ToJsonArray(r.non_resource_urls)}});
      continue;
    }
    json::object rule{{"verbs", ToJsonArray(r.verbs)},
                      {"apiGroups", ToJsonArray(r.api_groups)},
                      {"resources", ToJsonArray(r.resources)}};
    if (!r.resource_names.empty()) rule["resourceNames"] = ToJsonArray(r.resource_names);
    resource_rules.push_back(std::move(rule));
  }
  body["status"] = json::object{{"resourceRules", std::move(resource_rules)},
                                {"nonResourceRules", std::move(non_resource_rules)},
                                {"incomplete", false}};
  RespondReview(ctx, std::move(body));
}

void ServeTokenReview(ResourceContext& ctx, const ReviewServices& services, json::object body) {
  std::string token = StringAt(body, "spec.token");
  std::optional<UserInfo> user;
  if (services.authenticator != nullptr && !token.empty()) {
    user = services.authenticator->Authenticate("Bearer " + token, nullptr);
  }
  json::object status;
  if (user) {
    status["authenticated"] = true;
    status["user"] = json::object{
        {"username", user->name}, {"uid", user->uid}, {"groups", ToJsonArray(user->groups)}};
    status["audiences"] = ToJsonArray(services.audiences);
  } else {
    status["error"] = "invalid bearer token";
  }
  body["status"] = std::move(status);
  RespondReview(ctx, std::move(body));
}

// POST .../serviceaccounts/NAME/token.
void ServeTokenRequest(ResourceContext& ctx, const ReviewServices& services) {
  if (services.tokens == nullptr) {
    return RespondStatus(ctx.resp,
                         Status::NotFound("the server could not find the requested resource"));
  }
  auto body = ParseBody(ctx.req, ctx.res, "authentication.k8s.io/v1", "TokenRequest");
  if (!body.ok()) return RespondStatus(ctx.resp, body.status(), ctx.info.name, &ctx.res);
  auto sa = ctx.objects.Get(ctx.res, ctx.info.ns, ctx.info.name);
  if (!sa.ok()) return RespondStatus(ctx.resp, sa.status(), ctx.info.name, &ctx.res);
  json::object& spec = EnsureObject(*body, "spec");
  const json::value* seconds = spec.if_contains("expirationSeconds");
  if (seconds != nullptr && !seconds->is_null() && !seconds->is_int64()) {
    return RespondStatus(ctx.resp, Status::BadRequest("TokenRequest: spec.expirationSeconds must "
                                                      "be an integer"));
  }
  int64_t secs =
      seconds != nullptr && seconds->is_int64() ? seconds->as_int64() : kDefaultTokenSeconds;
  if (secs < kMinTokenSeconds || secs > kMaxTokenSeconds) {
    std::string detail = secs < kMinTokenSeconds
                             ? "may not specify a duration less than 10 minutes"
                             : "may not specify a duration larger than 2^32 seconds";
    std::vector<StatusCause> causes{
        api::FieldInvalid("spec.expirationSeconds", json::value(secs), detail)};
    std::string message = "TokenRequest.authentication.k8s.io " + api::QuoteGo(ctx.info.name) +
                          " is invalid: " + causes.front().field + ": " + causes.front().message;
    return RespondStatus(ctx.resp, Status::Invalid(std::move(message), std::move(causes)),
                         ctx.info.name, &ctx.res);
  }
  std::vector<std::string> audiences = StringsAt(spec, "audiences");
  if (audiences.empty()) audiences = services.audiences;
  TimePoint now = ctx.objects.clock().Now();
  ServiceAccountClaims claims{ctx.info.ns, ctx.info.name, StringAt(*sa, "metadata.uid"),
                              audiences,   now,           now + std::chrono::seconds(secs)};
  auto token = services.tokens->Issue(claims);
  if (!token.ok()) return RespondStatus(ctx.resp, token.status());
  spec["audiences"] = ToJsonArray(audiences);
  spec["expirationSeconds"] = secs;
  json::object out{
      {"apiVersion", "authentication.k8s.io/v1"},
      {"kind", "TokenRequest"},
      {"metadata",
       {{"name", ctx.info.name},
        {"namespace", ctx.info.ns},
        {"creationTimestamp", FormatRfc3339(now)}}},
      {"spec", std::move(spec)},
      {"status", {{"token", *token}, {"expirationTimestamp", FormatRfc3339(claims.expiry)}}}};
  RespondJson(ctx.resp, 201, json::serialize(out));
}

}  // namespace

std::vector<std::string> ServiceAccountGroups(std::string_view ns) {
  return {"system:serviceaccounts", "system:serviceaccounts:" + std::string(ns),
          std::string(kGroupAuthenticated)};
}

bool ServeReview(ResourceContext& ctx, const UserInfo& user, const ReviewServices& services) {
  const api::Resource& res = ctx.res;
  if (res.group.empty() && res.plural == "serviceaccounts" && ctx.info.subresource == "token") {
    if (ctx.info.verb != "create") {
      RespondStatus(ctx.resp, Status(Reason::kMethodNotAllowed,
                                     "the server does not allow this method on the requested "
                                     "resource"));
    } else {
      ServeTokenRequest(ctx, services);
    }
    return true;
  }
  if (res.group != "authorization.k8s.io" && res.group != "authentication.k8s.io") return false;
  if (ctx.info.verb != "create" || !ctx.info.name.empty()) {
    RespondStatus(ctx.resp,
                  Status(Reason::kMethodNotAllowed,
                         "the server does not allow this method on the requested resource"));
    return true;
  }
  auto body = ParseBody(ctx.req, res, res.ApiVersion(), res.kind);
  if (body.ok()) {
    WriteOptions strict{.field_validation = FieldValidation::kStrict};
    Status checked = ctx.objects.CheckSchema(res, *body, strict);
    if (!checked.ok()) body = checked;
  }
  if (!body.ok()) {
    RespondStatus(ctx.resp, body.status(), "", &res);
    return true;
  }
  if (res.kind == "SelfSubjectReview") {
    (*body)["status"] = json::object{
        {"userInfo",
         {{"username", user.name}, {"uid", user.uid}, {"groups", ToJsonArray(user.groups)}}}};
    RespondReview(ctx, std::move(*body));
  } else if (res.kind == "SelfSubjectRulesReview") {
    ServeRulesReview(ctx, user, services, std::move(*body));
  } else if (res.kind == "TokenReview") {
    ServeTokenReview(ctx, services, std::move(*body));
  } else {
    ServeAccessReview(ctx, user, services, std::move(*body));
  }
  return true;
}

std::optional<UserInfo> AuthenticateServiceAccountToken(std::string_view token,
                                                        const ServiceAccountTokens& tokens,
                                                        const std::vector<std::string>& audiences,
                                                        Objects& objects) {
  auto claims = tokens.Verify(token, objects.clock().Now(), audiences);
  if (!claims.ok()) return std::nullopt;
  const api::Resource* sa_res = objects.registry().Find("", "v1", "serviceaccounts");
  if (sa_res == nullptr) return std::nullopt;
  auto sa = objects.Get(*sa_res, claims->ns, claims->name);
  // A deleted service account, or a new one of the same name, ends its tokens.
  if (!sa.ok() || StringAt(*sa, "metadata.uid") != claims->uid ||
      !StringAt(*sa, "metadata.deletionTimestamp").empty()) {
    return std::nullopt;
  }
  return UserInfo{rbac::ServiceAccountUser(claims->ns, claims->name), claims->uid,
                  ServiceAccountGroups(claims->ns)};
}

Authenticator::TokenValidator ServerTokenValidator(const ServiceAccountTokens& tokens,
                                                   std::vector<std::string> audiences,
                                                   Objects& objects) {
  return [&tokens, audiences = std::move(audiences), &objects](
             std::string_view token, std::string* why) -> std::optional<UserInfo> {
    if (auto bootstrap = ParseBootstrapToken(token)) {
      return AuthenticateBootstrapToken(*bootstrap, objects, why);
    }
    if (!LooksLikeJwt(token)) return std::nullopt;
    return AuthenticateServiceAccountToken(token, tokens, audiences, objects);
  };
}

}  // namespace flotilla::apiserver
