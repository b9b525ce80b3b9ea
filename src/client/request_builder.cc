// Request building for the Client verbs (request_builder.h).
#include "client/request_builder.h"

#include <cctype>

namespace flotilla::client {
namespace {

constexpr std::string_view kJson = "application/json";

// client-go's IsValidPathSegmentName, worded as client-go words its errors.
Status CheckSegment(std::string_view what, std::string_view value, bool required) {
  if (value.empty()) {
    if (!required) return Status::Ok();
    return Status::BadRequest(std::string(what) + " may not be empty");
  }
  if (value == "." || value == "..") {
    return Status::BadRequest(std::string(what) + " may not be '" + std::string(value) + "'");
  }
  for (char c : value) {
    if (c == '/' || c == '%') {
      return Status::BadRequest(std::string(what) + " may not contain '" + std::string(1, c) + "'");
    }
  }
  return Status::Ok();
}

Status CheckTarget(const ResourceRef& res, std::string_view ns, std::string_view name,
                   bool name_required, std::string_view subresource = "") {
  FLOTILLA_RETURN_IF_ERROR(CheckSegment("resource", res.resource, true));
  FLOTILLA_RETURN_IF_ERROR(CheckSegment("namespace", ns, false));
  FLOTILLA_RETURN_IF_ERROR(CheckSegment("resource name", name, name_required));
  return CheckSegment("subresource", subresource, false);
}

std::string ObjectMetaString(const json::object& obj, std::string_view field) {
  const json::object* meta = GetObject(obj, "metadata");
  if (meta == nullptr) return "";
  return std::string(GetString(*meta, field).value_or(""));
}

void AddIfSet(ApiRequest& req, const char* key, const std::string& value) {
  if (!value.empty()) req.query.emplace_back(key, value);
}

std::string_view PatchContentType(PatchType type) {
  switch (type) {
    case PatchType::kJson:
      return "application/json-patch+json";
    case PatchType::kStrategic:
      return "application/strategic-merge-patch+json";
    case PatchType::kMerge:
      break;
  }
  return "application/merge-patch+json";
}

}  // namespace

std::string ApiRequest::Target() const {
  std::string target = path;
  char sep = '?';
  for (const auto& [key, value] : query) {
    target += sep;
    target += PercentEncode(key);
    target += '=';
    target += PercentEncode(value);
    sep = '&';
  }
  return target;
}

std::string ResourcePath(const ResourceRef& res, std::string_view ns, std::string_view name,
                         std::string_view subresource) {
  std::string path = res.group.empty()
                         ? "/api/" + PercentEncode(res.version)
                         : "/apis/" + PercentEncode(res.group) + "/" + PercentEncode(res.version);
  if (res.namespaced && !ns.empty()) path += "/namespaces/" + PercentEncode(ns);
  path += "/" + PercentEncode(res.resource);
  if (!name.empty()) path += "/" + PercentEncode(name);
  if (!subresource.empty()) path += "/" + PercentEncode(subresource);
  return path;
}

StatusOr<ApiRequest> BuildGet(const ResourceRef& res, const std::string& ns,
                              const std::string& name, const std::string& subresource) {
  FLOTILLA_RETURN_IF_ERROR(CheckTarget(res, ns, name, true, subresource));
  return ApiRequest{"GET", ResourcePath(res, ns, name, subresource), {}, "", ""};
}

StatusOr<ApiRequest> BuildList(const ResourceRef& res, const std::string& ns,
                               const ListOptions& opts) {
  FLOTILLA_RETURN_IF_ERROR(CheckTarget(res, ns, "", false));
  ApiRequest req{"GET", ResourcePath(res, ns), {}, "", ""};
  AddIfSet(req, "labelSelector", opts.label_selector);
  AddIfSet(req, "fieldSelector", opts.field_selector);
  AddIfSet(req, "resourceVersion", opts.resource_version);
  AddIfSet(req, "resourceVersionMatch", opts.resource_version_match);
  if (opts.limit > 0) req.query.emplace_back("limit", std::to_string(opts.limit));
  AddIfSet(req, "continue", opts.continue_token);
  if (opts.timeout_seconds > 0) {
    req.query.emplace_back("timeoutSeconds", std::to_string(opts.timeout_seconds));
  }
  return req;
}

StatusOr<ApiRequest> BuildWatch(const ResourceRef& res, const std::string& ns,
                                const WatchOptions& opts) {
  FLOTILLA_RETURN_IF_ERROR(CheckTarget(res, ns, "", false));
  ApiRequest req{"GET", ResourcePath(res, ns), {{"watch", "true"}}, "", ""};
  AddIfSet(req, "labelSelector", opts.label_selector);
  AddIfSet(req, "fieldSelector", opts.field_selector);
  AddIfSet(req, "resourceVersion", opts.resource_version);
  if (opts.allow_bookmarks) req.query.emplace_back("allowWatchBookmarks", "true");
  if (opts.timeout_seconds > 0) {
    req.query.emplace_back("timeoutSeconds", std::to_string(opts.timeout_seconds));
  }
  return req;
}

StatusOr<ApiRequest> BuildCreate(const ResourceRef& res, const std::string& ns,
                                 const json::object& obj) {
  std::string effective_ns = ns.empty() ? ObjectMetaString(obj, "namespace") : ns;
  FLOTILLA_RETURN_IF_ERROR(CheckTarget(res, effective_ns, "", false));
  return ApiRequest{
      "POST", ResourcePath(res, effective_ns), {}, json::serialize(obj), std::string(kJson)};
}

StatusOr<ApiRequest> BuildUpdate(const ResourceRef& res, const std::string& ns,
                                 const json::object& obj, const std::string& subresource) {
  std::string name = ObjectMetaString(obj, "name");
  std::string effective_ns = ns.empty() ? ObjectMetaString(obj, "namespace") : ns;
  FLOTILLA_RETURN_IF_ERROR(CheckTarget(res, effective_ns, name, true, subresource));
  return ApiRequest{"PUT",
                    ResourcePath(res, effective_ns, name, subresource),
                    {},
                    json::serialize(obj),
                    std::string(kJson)};
}

StatusOr<ApiRequest> BuildPatch(const ResourceRef& res, const std::string& ns,
                                const std::string& name, PatchType type, const std::string& patch,
                                const std::string& subresource) {
  FLOTILLA_RETURN_IF_ERROR(CheckTarget(res, ns, name, true, subresource));
  return ApiRequest{"PATCH",
                    ResourcePath(res, ns, name, subresource),
                    {},
                    patch,
                    std::string(PatchContentType(type))};
}

StatusOr<ApiRequest> BuildDelete(const ResourceRef& res, const std::string& ns,
                                 const std::string& name, const DeleteOptions& opts) {
  FLOTILLA_RETURN_IF_ERROR(CheckTarget(res, ns, name, true));
  ApiRequest req{"DELETE", ResourcePath(res, ns, name), {}, "", ""};
  json::object body{{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
  if (!opts.propagation_policy.empty()) body["propagationPolicy"] = opts.propagation_policy;
  if (opts.grace_period_seconds) body["gracePeriodSeconds"] = *opts.grace_period_seconds;
  json::object preconditions;
  if (opts.precondition_uid) preconditions["uid"] = *opts.precondition_uid;
  if (opts.precondition_resource_version) {
    preconditions["resourceVersion"] = *opts.precondition_resource_version;
  }
  if (!preconditions.empty()) body["preconditions"] = std::move(preconditions);
  if (body.size() > 2) {
    req.body = json::serialize(body);
    req.content_type = kJson;
  }
  return req;
}

StatusOr<ApiRequest> BuildCreateSubresource(const ResourceRef& res, const std::string& ns,
                                            const std::string& name, const std::string& subresource,
                                            const json::object& body) {
  if (subresource.empty()) return Status::BadRequest("subresource name may not be empty");
  FLOTILLA_RETURN_IF_ERROR(CheckTarget(res, ns, name, true, subresource));
  return ApiRequest{"POST",
                    ResourcePath(res, ns, name, subresource),
                    {},
                    json::serialize(body),
                    std::string(kJson)};
}

StatusOr<ApiRequest> BuildUpdateScale(const ResourceRef& res, const std::string& ns,
                                      const std::string& name, int64_t replicas) {
  if (replicas < 0) {
    return Status::BadRequest("replicas may not be negative: " + std::to_string(replicas));
  }
  json::object patch{{"spec", {{"replicas", replicas}}}};
  return BuildPatch(res, ns, name, PatchType::kMerge, json::serialize(patch), "scale");
}

}  // namespace flotilla::client
