#include "apiserver/resource_handler.h"

#include <cctype>
#include <cstdio>

#include "api/protobuf.h"
#include "apiserver/meta.h"
#include "apiserver/responses.h"
#include "apiserver/table.h"
#include "base/yaml.h"

namespace flotilla::apiserver {
namespace {

bool IsJsonContentType(const std::string& ct) {
  return ct.empty() || ct.rfind("application/json", 0) == 0 || ct.rfind("*/*", 0) == 0;
}

// kube-apiserver's PatchOptions/CreateOptions/UpdateOptions error.
Status OptionsInvalid(std::string_view verb, std::string field, std::string type,
                      std::string detail) {
  std::string kind = verb == "patch"    ? "PatchOptions"
                     : verb == "create" ? "CreateOptions"
                                        : "UpdateOptions";
  std::string message = kind + ".meta.k8s.io \"\" is invalid: " + field + ": " + detail;
  return Status::Invalid(std::move(message),
                         {{std::move(type), std::move(detail), std::move(field)}});
}

// The manager a write is recorded under: fieldManager, else the product
// name of the User-Agent ("kubectl" of "kubectl/v1.32.4 (linux/amd64)"),
// printable characters only, at most 128 bytes; "unknown" without either.
std::string ManagerOrUserAgent(const std::string& manager, std::string_view user_agent) {
  if (!manager.empty()) return manager;
  std::string out;
  for (char c : user_agent.substr(0, user_agent.find('/'))) {
    if (out.size() >= 128) break;
    if (std::isprint(static_cast<unsigned char>(c))) out += c;
  }
  return out.empty() ? "unknown" : out;
}

// `s` quoted as Go's %q quotes it (kube-apiserver prints values so).
std::string GoQuote(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\v':
        out += "\\v";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char hex[8];
          std::snprintf(hex, sizeof(hex), "\\x%02x", c);
          out += hex;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

Status CheckFieldManager(std::string_view verb, const std::string& manager) {
  if (manager.size() > 128) {
    return OptionsInvalid(verb, "fieldManager", "FieldValueTooLong",
                          "Too long: may not be more than 128 bytes");
  }
  for (size_t i = 0; i < manager.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(manager[i]);
    if (c < 0x80 && !std::isprint(c)) {
      char code[16];
      std::snprintf(code, sizeof(code), "U+%04X", c);
      return OptionsInvalid(verb, "fieldManager", "FieldValueInvalid",
                            "Invalid value: " + GoQuote(manager) + ": invalid character " + code +
                                " (at position " + std::to_string(i) + ")");
    }
  }
  return Status::Ok();
}

StatusOr<WriteOptions> ParseWriteOptions(const Request& req, std::string_view verb,
                                         std::vector<std::string>* warnings) {
  WriteOptions opts;
  opts.warnings = warnings;
  const bool apply = verb == "patch" && api::IsApplyPatch(req.HeaderView("content-type"));
  std::string manager = req.Query("fieldManager");
  FLOTILLA_RETURN_IF_ERROR(CheckFieldManager(verb, manager));
  if (apply && manager.empty()) {
    return OptionsInvalid(verb, "fieldManager", "FieldValueRequired",
                          "Required value: is required for apply patch");
  }
  if (req.HasQuery("force")) {
    if (!apply) {
      return OptionsInvalid(verb, "force", "FieldValueForbidden",
                            "Forbidden: may not be specified for non-apply patch");
    }
    opts.force = req.QueryBool("force");
  }
  opts.field_manager = ManagerOrUserAgent(manager, req.HeaderView("user-agent"));
  std::string dry = req.Query("dryRun");
  if (!dry.empty() && dry != "All") {
    return Status::BadRequest("Invalid dryRun value: \"" + dry + "\"; must be \"All\"");
  }
  opts.dry_run = dry == "All";
  std::string fv = req.Query("fieldValidation");
  if (fv == "Strict") {
    opts.field_validation = FieldValidation::kStrict;
  } else if (fv == "Ignore") {
    opts.field_validation = FieldValidation::kIgnore;
  } else if (fv.empty() || fv == "Warn") {
    opts.field_validation = FieldValidation::kWarn;
  } else {
    return Status::BadRequest("fieldValidation: Invalid value: \"" + fv +
                              "\": must be one of Ignore, Warn or Strict");
  }
  return opts;
}

Status UnknownFormat() {
  return Status(Reason::kUnsupportedMediaType,
                "the body of the request was in an unknown format - accepted media types "
                "include: application/json");
}

Status TypeMismatch(std::string_view api_version, const std::string& expected_api_version) {
  return Status::BadRequest("the API version in the data (" + std::string(api_version) +
                            ") does not match the expected API version (" + expected_api_version +
                            ")");
}

// A body in the Kubernetes protobuf encoding (kubectl's typed clients),
// decoded into the JSON object a JSON client would have sent. Kinds without
// a protobuf schema keep answering 415.
StatusOr<json::object> ParseProtobufBody(const Request& req,
                                         const std::string& expected_api_version,
                                         const std::string& expected_kind) {
  FLOTILLA_ASSIGN_OR_RETURN(api::ProtobufEnvelope env, api::ParseProtobufEnvelope(req.body));
  const std::string& api_version = env.api_version.empty() ? expected_api_version : env.api_version;
  const std::string& kind = env.kind.empty() ? expected_kind : env.kind;
  if (api_version != expected_api_version || kind != expected_kind) {
    return TypeMismatch(env.api_version, expected_api_version);
  }
  if (!api::HasProtobufSchema(api_version, kind)) return UnknownFormat();
  return api::DecodeProtobufObject(env.raw, api_version, kind);
}

void RespondObject(ResourceContext& ctx, int code, const json::object& obj,
                   const std::vector<std::string>& warnings = {}) {
  std::string accept = ctx.req.Header("accept");
  if (WantsTable(accept) && obj.if_contains("kind") &&
      obj.at("kind") == json::value(ctx.res.kind)) {
    json::object table = ToTable(ctx.res, {obj}, ctx.objects.clock().Now(),
                                 ParseIncludeObject(ctx.req.Query("includeObject")), true);
    RespondJson(ctx.resp, code, json::serialize(table), warnings);
    return;
  }
  RespondJson(ctx.resp, code, json::serialize(obj), warnings);
}

// A List document around already-serialized items: the stored bytes are
// reused as they are (DESIGN §4).
// Responds with a List spliced from the stored JSON of its items, written
// out from the records themselves.
void RespondSplicedList(Responder& resp, const api::Resource& res, const json::object& meta,
                        const std::vector<std::shared_ptr<const storage::KeyValue>>& items) {
  const std::string head = R"({"kind":")" + res.kind + R"(List","apiVersion":")" +
                           res.ApiVersion() + R"(","metadata":)" + json::serialize(meta) +
                           R"(,"items":[)";
  std::vector<std::string_view> parts;
  parts.reserve(2 * items.size() + 2);
  parts.push_back(head);
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) parts.push_back(",");
    parts.push_back(items[i]->value);
  }
  parts.push_back("]}");
  resp.RespondParts(200, JsonHeaders(), parts);
}

void ServeList(ResourceContext& ctx) {
  ListOptions opts;
  opts.label_selector = ctx.req.Query("labelSelector");
  opts.field_selector = ctx.req.Query("fieldSelector");
  opts.continue_token = ctx.req.Query("continue");
  std::string limit = ctx.req.Query("limit");
  if (!limit.empty()) {
    char* end = nullptr;
    opts.limit = std::strtoll(limit.c_str(), &end, 10);
    if (end == nullptr || *end != '\0' || opts.limit < 0) {
      RespondStatus(ctx.resp, Status::BadRequest("invalid limit: " + limit));
      return;
    }
  }
  const bool table = WantsTable(ctx.req.HeaderView("accept"));
  opts.allow_raw = !table;
  auto page = ctx.objects.List(ctx.res, ctx.info.ns, opts);
  if (!page.ok()) return RespondStatus(ctx.resp, page.status(), "", &ctx.res);
  json::object meta{{"resourceVersion", std::to_string(page->revision)}};
  if (!page->continue_token.empty()) meta["continue"] = page->continue_token;
  if (page->remaining >= 0) meta["remainingItemCount"] = page->remaining;
  if (page->raw) return RespondSplicedList(ctx.resp, ctx.res, meta, page->raw_items);
  if (table) {
    json::object table = ToTable(ctx.res, page->items, ctx.objects.clock().Now(),
                                 ParseIncludeObject(ctx.req.Query("includeObject")), true);
    table["metadata"] = std::move(meta);
    RespondJson(ctx.resp, 200, json::serialize(table));
    return;
  }
  json::array items;
  items.reserve(page->items.size());
  for (auto& item : page->items) items.emplace_back(std::move(item));
  json::object list{{"kind", ctx.res.kind + "List"},
                    {"apiVersion", ctx.res.ApiVersion()},
                    {"metadata", std::move(meta)},
                    {"items", std::move(items)}};
  RespondJson(ctx.resp, 200, json::serialize(list));
}

StatusOr<DeleteOptions> DeleteOptionsFrom(const Request& req, const json::object* body) {
  DeleteOptions opts;
  std::string policy = req.Query("propagationPolicy");
  std::string grace = req.Query("gracePeriodSeconds");
  std::string orphan = req.HasQuery("orphanDependents")
                           ? (req.QueryBool("orphanDependents") ? "true" : "false")
                           : "";
  if (req.Query("dryRun") == "All") opts.dry_run = true;
  if (body != nullptr) {
    if (auto p = GetString(*body, "propagationPolicy")) policy = std::string(*p);
    if (auto g = GetInt(*body, "gracePeriodSeconds")) grace = std::to_string(*g);
    if (auto o = GetBool(*body, "orphanDependents")) orphan = *o ? "true" : "false";
    if (const json::object* pre = GetObject(*body, "preconditions")) {
      if (auto uid = GetString(*pre, "uid")) opts.precondition_uid = std::string(*uid);
      if (auto rv = GetString(*pre, "resourceVersion")) {
        opts.precondition_resource_version = std::string(*rv);
      }
    }
    if (const json::array* dry = GetArray(*body, "dryRun"); dry && !dry->empty())
      opts.dry_run = true;
  }
  if (policy == "Orphan" || orphan == "true") {
    opts.propagation = Propagation::kOrphan;
  } else if (policy == "Background" || orphan == "false") {
    opts.propagation = Propagation::kBackground;
  } else if (policy == "Foreground") {
    opts.propagation = Propagation::kForeground;
  } else if (!policy.empty()) {
    return Status::BadRequest("propagationPolicy: Unsupported value: \"" + policy +
                              "\": supported values: \"Foreground\", \"Background\", \"Orphan\"");
  }
  if (!grace.empty()) opts.grace_period_seconds = std::strtoll(grace.c_str(), nullptr, 10);
  return opts;
}

StatusOr<DeleteOptions> ParseDeleteOptions(const Request& req) {
  if (req.body.empty()) return DeleteOptionsFrom(req, nullptr);
  FLOTILLA_ASSIGN_OR_RETURN(json::object body, ParseJsonObject(req.body));
  return DeleteOptionsFrom(req, &body);
}

void ServeDeleteCollection(ResourceContext& ctx, const DeleteOptions& del) {
  ListOptions opts;
  opts.label_selector = ctx.req.Query("labelSelector");
  opts.field_selector = ctx.req.Query("fieldSelector");
  auto page = ctx.objects.List(ctx.res, ctx.info.ns, opts);
  if (!page.ok()) return RespondStatus(ctx.resp, page.status(), "", &ctx.res);
  json::array deleted;
  for (const auto& item : page->items) {
    std::string ns = MetaString(item, "namespace");
    auto d = ctx.objects.Delete(ctx.res, ns, MetaString(item, "name"), del);
    if (d.ok()) {
      deleted.emplace_back(std::move(*d));
    } else if (!d.status().Is(Reason::kNotFound)) {
      return RespondStatus(ctx.resp, d.status(), MetaString(item, "name"), &ctx.res);
    }
  }
  json::object list{{"kind", ctx.res.kind + "List"},
                    {"apiVersion", ctx.res.ApiVersion()},
                    {"metadata", {{"resourceVersion", std::to_string(page->revision)}}},
                    {"items", std::move(deleted)}};
  RespondJson(ctx.resp, 200, json::serialize(list));
}

// An apply to the scale subresource: an autoscaling/v1 Scale whose
// spec.replicas is applied to the object's own spec.replicas, owned
// through "scale".
StatusOr<json::object> ApplyScale(ResourceContext& ctx, const WriteOptions& wopts) {
  auto body = ParseYaml(ctx.req.body);
  if (!body.ok()) return Status::BadRequest("error decoding patch: " + body.status().message());
  if (!body->is_object() || StringAt(body->as_object(), "kind") != "Scale" ||
      StringAt(body->as_object(), "apiVersion") != "autoscaling/v1") {
    return Status::BadRequest(
        "error decoding patch: the scale subresource applies an autoscaling/v1 Scale");
  }
  const json::object& scale = body->as_object();
  json::object config{{"apiVersion", ctx.res.ApiVersion()},
                      {"kind", ctx.res.kind},
                      {"metadata", {{"name", ctx.info.name}}}};
  if (const json::value* replicas = Find(scale, "spec.replicas")) {
    if (!replicas->is_int64() && !replicas->is_uint64()) {
      return Status::BadRequest("Scale.spec.replicas must be an integer");
    }
    config["spec"] = json::object{{"replicas", *replicas}};
  }
  FLOTILLA_RETURN_IF_ERROR(
      ctx.objects.Apply(ctx.res, ctx.info.ns, ctx.info.name, "scale", std::move(config), wopts)
          .status());
  return ctx.objects.GetScale(ctx.res, ctx.info.ns, ctx.info.name);
}

void ServeScale(ResourceContext& ctx, const std::string& verb, WriteOptions& wopts) {
  const auto& ns = ctx.info.ns;
  const auto& name = ctx.info.name;
  StatusOr<json::object> result = Status::Internal("unreachable");
  if (verb == "get") {
    result = ctx.objects.GetScale(ctx.res, ns, name);
  } else if (verb == "update") {
    auto body = ParseJsonObject(ctx.req.body);
    result = body.ok() ? ctx.objects.UpdateScale(ctx.res, ns, name, std::move(*body), wopts)
                       : StatusOr<json::object>(body.status());
  } else if (verb == "patch" && api::IsApplyPatch(ctx.req.HeaderView("content-type"))) {
    result = ApplyScale(ctx, wopts);
  } else if (verb == "patch") {
    auto current = ctx.objects.GetScale(ctx.res, ns, name);
    if (!current.ok()) return RespondStatus(ctx.resp, current.status(), name, &ctx.res);
    auto patched = api::ApplyPatch(ctx.req.HeaderView("content-type"), *current, ctx.req.body,
                                   api::PatchInfoLookup());
    if (!patched.ok()) return RespondStatus(ctx.resp, patched.status(), name, &ctx.res);
    if (!patched->is_object()) {
      return RespondStatus(ctx.resp, Status::BadRequest("patch must produce an object"));
    }
    result = ctx.objects.UpdateScale(ctx.res, ns, name, std::move(patched->as_object()), wopts);
  } else {
    return RespondStatus(ctx.resp,
                         Status(Reason::kMethodNotAllowed, "method not allowed on scale"));
  }
  if (!result.ok()) return RespondStatus(ctx.resp, result.status(), name, &ctx.res);
  RespondJson(ctx.resp, 200, json::serialize(*result));
}

// POST pods/NAME/binding with a v1 Binding (what schedulers write).
void ServeBinding(ResourceContext& ctx, const WriteOptions& wopts) {
  if (ctx.info.verb != "create") {
    return RespondStatus(ctx.resp,
                         Status(Reason::kMethodNotAllowed,
                                "the server does not allow this method on the requested resource"));
  }
  auto body = ParseBody(ctx.req, ctx.res, "v1", "Binding");
  if (!body.ok()) return RespondStatus(ctx.resp, body.status(), ctx.info.name, &ctx.res);
  auto result = ctx.objects.Bind(ctx.res, ctx.info.ns, ctx.info.name, *body, wopts);
  if (!result.ok()) return RespondStatus(ctx.resp, result.status(), ctx.info.name, &ctx.res);
  RespondJson(ctx.resp, 201, json::serialize(*result));
}

// POST pods/NAME/eviction with a policy/v1 (or v1beta1) Eviction (what
// `kubectl drain` sends): the pod is deleted as its deleteOptions say when
// its disruption budget allows.
void ServeEviction(ResourceContext& ctx) {
  if (ctx.info.verb != "create") {
    return RespondStatus(ctx.resp,
                         Status(Reason::kMethodNotAllowed,
                                "the server does not allow this method on the requested resource"));
  }
  auto body = ParseBody(ctx.req, ctx.res, "policy/v1", "Eviction");
  if (!body.ok()) {
    auto beta = ParseBody(ctx.req, ctx.res, "policy/v1beta1", "Eviction");
    if (beta.ok()) body = std::move(beta);
  }
  if (!body.ok()) return RespondStatus(ctx.resp, body.status(), ctx.info.name, &ctx.res);
  auto del = DeleteOptionsFrom(ctx.req, GetObject(*body, "deleteOptions"));
  if (!del.ok()) return RespondStatus(ctx.resp, del.status(), ctx.info.name, &ctx.res);
  auto result = ctx.objects.Evict(ctx.res, ctx.info.ns, ctx.info.name, *body, *del);
  if (!result.ok()) {
    // A budget's refusal names no object (its causes say which budget).
    bool budget = result.status().Is(Reason::kTooManyRequests);
    return RespondStatus(ctx.resp, result.status(), budget ? "" : ctx.info.name,
                         budget ? nullptr : &ctx.res);
  }
  RespondJson(ctx.resp, 201, json::serialize(*result));
}

}  // namespace

StatusOr<json::object> ParseBody(const Request& req, const api::Resource& res,
                                 const std::string& expected_api_version,
                                 const std::string& expected_kind) {
  std::string ct = req.Header("content-type");
  if (api::IsKubernetesProtobuf(ct)) {
    return ParseProtobufBody(req, expected_api_version, expected_kind);
  }
  if (!IsJsonContentType(ct)) return UnknownFormat();
  auto obj = ParseJsonObject(req.body);
  if (!obj.ok()) {
    return Status::BadRequest(expected_kind + " in version \"" + res.version +
                              "\" cannot be handled as a " + expected_kind + ": " +
                              obj.status().message());
  }
  auto api_version = GetString(*obj, "apiVersion");
  auto kind = GetString(*obj, "kind");
  if ((api_version && *api_version != expected_api_version) || (kind && *kind != expected_kind)) {
    return TypeMismatch(api_version.value_or(""), expected_api_version);
  }
  return obj;
}

void ServeResourceRequest(ResourceContext& ctx) {
  const std::string& verb = ctx.info.verb;
  const std::string& sub = ctx.info.subresource;
  const auto& ns = ctx.info.ns;
  const auto& name = ctx.info.name;
  std::vector<std::string> warnings;
  auto wopts = ParseWriteOptions(ctx.req, verb, &warnings);
  if (!wopts.ok()) return RespondStatus(ctx.resp, wopts.status());
  wopts->admit = ctx.admit;
  if (sub == "scale" && ctx.res.has_scale) return ServeScale(ctx, verb, *wopts);
  if (sub == "binding" && HasBinding(ctx.res)) return ServeBinding(ctx, *wopts);
  if (sub == "eviction" && HasEviction(ctx.res)) return ServeEviction(ctx);
  if (!sub.empty() && !(sub == "status" && ctx.res.has_status) &&
      !(sub == "finalize" && ctx.res.plural == "namespaces")) {
    return RespondStatus(ctx.resp,
                         Status::NotFound("the server could not find the requested resource"));
  }
  std::string effective_sub = sub == "finalize" ? "" : sub;
  // A write's answer is the JSON it stored, when that is the object as
  // served: no second serialization (DESIGN §4).
  const bool answer_stored = ctx.res.StoredAsServed() && !WantsTable(ctx.req.HeaderView("accept"));
  StoredJson stored_json;
  if (answer_stored) wopts->stored_json = &stored_json;
  StatusOr<json::object> result = Status::Internal("unreachable");
  std::string error_name = name;  // details.name of an error
  int code = 200;
  if (verb == "get") {
    if (answer_stored) {
      // The stored bytes are the answer (DESIGN §4).
      auto stored = ctx.objects.GetStored(ctx.res, ns, name);
      if (!stored.ok()) return RespondStatus(ctx.resp, stored.status(), name, &ctx.res);
      return RespondJson(ctx.resp, 200, std::move(*stored), warnings);
    }
    result = ctx.objects.Get(ctx.res, ns, name);
  } else if (verb == "list") {
    return ServeList(ctx);
  } else if (verb == "create") {
    if (!name.empty() || !sub.empty()) {
      return RespondStatus(
          ctx.resp, Status(Reason::kMethodNotAllowed,
                           "the server does not allow this method on the requested resource"));
    }
    auto body = ParseBody(ctx.req, ctx.res, ctx.res.ApiVersion(), ctx.res.kind);
    if (!body.ok()) return RespondStatus(ctx.resp, body.status(), "", &ctx.res);
    error_name = MetaString(*body, "name");
    result = ctx.objects.Create(ctx.res, ns, std::move(*body), *wopts);
    code = 201;
  } else if (verb == "update") {
    auto body = ParseBody(ctx.req, ctx.res, ctx.res.ApiVersion(), ctx.res.kind);
    if (!body.ok()) return RespondStatus(ctx.resp, body.status(), name, &ctx.res);
    result = ctx.objects.Update(ctx.res, ns, name, effective_sub, std::move(*body), *wopts);
  } else if (verb == "patch") {
    PatchRequest patch{ctx.req.Header("content-type"), ctx.req.body};
    bool created = false;
    result = ctx.objects.Patch(ctx.res, ns, name, effective_sub, patch, *wopts, &created);
    if (created) code = 201;
  } else if (verb == "delete" || verb == "deletecollection") {
    auto del = ParseDeleteOptions(ctx.req);
    if (!del.ok()) return RespondStatus(ctx.resp, del.status(), name, &ctx.res);
    if (verb == "deletecollection") return ServeDeleteCollection(ctx, *del);
    result = ctx.objects.Delete(ctx.res, ns, name, *del);
  } else {
    return RespondStatus(ctx.resp, Status(Reason::kMethodNotAllowed, "method not allowed"));
  }
  if (!result.ok()) return RespondStatus(ctx.resp, result.status(), error_name, &ctx.res);
  // The JSON left is the answer only if it is of the write answered (not
  // of another write the request made, nor of none: a no-op update).
  if (stored_json.revision != 0 && ResourceVersionOf(*result) == stored_json.revision) {
    return RespondJson(ctx.resp, code, std::move(stored_json.json), warnings);
  }
  RespondObject(ctx, code, *result, warnings);
}

}  // namespace flotilla::apiserver
