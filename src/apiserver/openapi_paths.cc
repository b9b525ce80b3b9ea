#include "apiserver/openapi_paths.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace flotilla::apiserver::openapi_internal {
namespace {

struct QueryParam {
  std::string_view name;
  std::string_view type;
  std::string_view description;
};

constexpr QueryParam kQueryParams[] = {
    {"allowWatchBookmarks", "boolean",
     "Asks for watch events of type BOOKMARK, which carry only a newer resourceVersion. Servers "
     "may ignore the request."},
    {"continue", "string",
     "The token of the previous page of a paginated list. A token that has expired gets 410 "
     "Expired with a fresh token."},
    {"dryRun", "string",
     "When present, the request is processed but nothing is persisted. The only valid value is "
     "All."},
    {"fieldManager", "string",
     "The name of the actor making the change: at most 128 printable characters. Required for "
     "apply patches."},
    {"fieldSelector", "string", "Selects objects by their fields. Defaults to everything."},
    {"fieldValidation", "string",
     "How the server treats unknown or duplicate fields in the object: Ignore drops them "
     "silently, Warn (the default) drops them and returns a Warning header for each, Strict "
     "fails the request with 400 BadRequest naming all of them."},
    {"force", "boolean",
     "Forces an apply patch to take fields owned by other managers. Must be unset for other "
     "patch types."},
    {"gracePeriodSeconds", "integer",
     "Seconds before the object is deleted; 0 deletes it now. Defaults to the object's own "
     "grace period."},
    {"labelSelector", "string", "Selects objects by their labels. Defaults to everything."},
    {"limit", "integer",
     "The most objects to return; when there are more, metadata.continue holds the token of the "
     "next page."},
    {"orphanDependents", "boolean",
     "Deprecated: use propagationPolicy. Whether the dependents of the object are orphaned."},
    {"propagationPolicy", "string",
     "What happens to the dependents of the object: Orphan, Background or Foreground."},
    {"resourceVersion", "string",
     "For a list, the resourceVersion the result must be at least as new as (with "
     "resourceVersionMatch) or exactly; for a watch, where to start. Unset means the most recent."},
    {"resourceVersionMatch", "string",
     "How resourceVersion applies to a list: NotOlderThan or Exact."},
    {"sendInitialEvents", "boolean",
     "With watch=true, starts the watch with synthetic ADDED events for the current objects, "
     "ended by a BOOKMARK."},
    {"timeoutSeconds", "integer", "How long a list or watch call may last, at most."},
    {"watch", "boolean",
     "Watches for changes to the described objects and returns them as a stream of events."},
};

// Query parameters per verb, space-separated.
constexpr std::string_view kListParams =
    "allowWatchBookmarks continue fieldSelector labelSelector limit resourceVersion "
    "resourceVersionMatch sendInitialEvents timeoutSeconds watch";
constexpr std::string_view kDeleteCollectionParams =
    "continue dryRun fieldSelector gracePeriodSeconds labelSelector limit orphanDependents "
    "propagationPolicy resourceVersion resourceVersionMatch sendInitialEvents timeoutSeconds";
constexpr std::string_view kWriteParams = "dryRun fieldManager fieldValidation";
constexpr std::string_view kPatchParams = "dryRun fieldManager fieldValidation force";
constexpr std::string_view kDeleteParams =
    "dryRun gracePeriodSeconds orphanDependents propagationPolicy";
constexpr std::string_view kPatchTypes[] = {
    "application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json",
    "application/strategic-merge-patch+json"};

enum class Body { kNone, kObject, kPatch, kDeleteOptions };

// One operation, before rendering.
struct Operation {
  std::string_view method;
  std::string_view action;  // x-kubernetes-action
  std::string id;
  std::string description;
  std::string_view params;  // space-separated query parameter names
  Body body = Body::kNone;
  std::string response;  // definition name of the 200 response
  bool created = false;  // also 201 (and 202 for create)
  bool watch = false;    // a stream of watch events
};

// What every operation of one path shares.
struct PathContext {
  Dialect dialect;
  std::string_view group, version, kind;  // x-kubernetes-group-version-kind
  std::string tag;
};

json::object Param(Dialect d, std::string_view in, std::string_view name, std::string_view type,
                   std::string_view description, bool required) {
  json::object p{{"description", description}, {"in", in}, {"name", name}};
  if (required) p["required"] = true;
  if (d == Dialect::kSwagger2) {
    p["type"] = type;
    p["uniqueItems"] = true;
  } else {
    p["schema"] = {{"type", type}, {"uniqueItems", true}};
  }
  return p;
}

json::object NamedQueryParam(Dialect d, std::string_view name) {
  for (const QueryParam& q : kQueryParams) {
    if (q.name == name) return Param(d, "query", q.name, q.type, q.description, false);
  }
  return Param(d, "query", name, "string", "", false);
}

json::object SchemaObject(Dialect d, std::string_view name) {
  return {{"$ref", SchemaRef(d, name)}};
}

json::object Response(Dialect d, std::string_view description, std::string_view schema,
                      bool watch) {
  json::object r{{"description", description}};
  if (d == Dialect::kSwagger2) {
    r["schema"] = SchemaObject(d, schema);
    return r;
  }
  json::object content;
  std::vector<std::string_view> types = {"application/json", "application/yaml"};
  if (watch) types = {"application/json", "application/json;stream=watch"};
  for (std::string_view t : types) content[t] = {{"schema", SchemaObject(d, schema)}};
  r["content"] = std::move(content);
  return r;
}

json::object Responses(Dialect d, const Operation& op) {
  json::object responses{{"200", Response(d, "OK", op.response, op.watch)}};
  if (op.created) {
    responses["201"] = Response(d, "Created", op.response, false);
    if (op.method == "post") responses["202"] = Response(d, "Accepted", op.response, false);
  }
  if (op.method == "delete" && op.action == "delete") {
    responses["202"] = Response(d, "Accepted", op.response, false);
  }
  responses["401"] = {{"description", "Unauthorized"}};
  return responses;
}

// A create or replace sends what it gets back.
std::string_view BodySchema(const Operation& op) {
  if (op.body == Body::kPatch) return kPatchSchema;
  if (op.body == Body::kDeleteOptions) return kDeleteOptionsSchema;
  return op.response;
}

void AddBody(Dialect d, const Operation& op, std::string_view schema, json::object& out,
             json::array& params) {
  if (op.body == Body::kNone) return;
  if (d == Dialect::kSwagger2) {
    json::object p{{"in", "body"}, {"name", "body"}, {"schema", SchemaObject(d, schema)}};
    if (op.body != Body::kDeleteOptions) p["required"] = true;
    params.insert(params.begin(), std::move(p));
    return;
  }
  json::object content;
  if (op.body == Body::kPatch) {
    for (std::string_view t : kPatchTypes) content[t] = {{"schema", SchemaObject(d, schema)}};
  } else {
    content["*/*"] = {{"schema", SchemaObject(d, schema)}};
  }
  json::object body{{"content", std::move(content)}};
  if (op.body != Body::kDeleteOptions) body["required"] = true;
  out["requestBody"] = std::move(body);
}

void AddSwaggerMediaTypes(const Operation& op, json::object& out) {
  json::array consumes;
  if (op.body == Body::kPatch) {
    for (std::string_view t : kPatchTypes) consumes.emplace_back(t);
  } else {
    consumes.emplace_back("*/*");
  }
  json::array produces{"application/json", "application/yaml"};
  if (op.watch) produces = {"application/json", "application/json;stream=watch"};
  out["consumes"] = std::move(consumes);
  out["produces"] = std::move(produces);
  out["schemes"] = json::array{"https"};
}

json::object Render(const PathContext& c, const Operation& op) {
  json::object out{{"description", op.description}, {"operationId", op.id}};
  json::array params;
  for (std::string_view rest = op.params; !rest.empty();) {
    size_t space = rest.find(' ');
    params.push_back(NamedQueryParam(c.dialect, rest.substr(0, space)));
    rest = space == std::string_view::npos ? "" : rest.substr(space + 1);
  }
  AddBody(c.dialect, op, BodySchema(op), out, params);
  if (c.dialect == Dialect::kSwagger2) AddSwaggerMediaTypes(op, out);
  if (!params.empty()) out["parameters"] = std::move(params);
  out["responses"] = Responses(c.dialect, op);
  out["tags"] = json::array{json::string(c.tag)};
  out["x-kubernetes-action"] = op.action;
  out["x-kubernetes-group-version-kind"] = {
      {"group", c.group}, {"kind", c.kind}, {"version", c.version}};
  return out;
}

bool HasVerb(const api::Resource& res, std::string_view verb) {
  return std::find(res.verbs.begin(), res.verbs.end(), verb) != res.verbs.end();
}

std::string Capitalized(std::string_view s) {
  std::string out(s);
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

// "AppsV1", "CoreV1", "CoordinationV1": the group part of operation ids.
std::string IdGroup(const api::Resource& res) {
  std::string_view group = res.group.empty() ? "core" : std::string_view(res.group);
  return Capitalized(group.substr(0, group.find('.'))) + Capitalized(res.version);
}

std::string Tag(const api::Resource& res) {
  std::string_view group = res.group.empty() ? "core" : std::string_view(res.group);
  return std::string(group.substr(0, group.find('.'))) + "_" + res.version;
}

// The path-level parameters: name, namespace, pretty.
json::array PathParams(Dialect d, const api::Resource& res, bool item, bool namespaced) {
  json::array params;
  if (item) params.push_back(Param(d, "path", "name", "string", "name of the " + res.kind, true));
  if (namespaced) {
    params.push_back(Param(d, "path", "namespace", "string",
                           "object name and auth scope, such as for teams and projects", true));
  }
  params.push_back(Param(d, "query", "pretty", "string",
                         "If 'true', then the output is pretty printed.", false));
  return params;
}

void AddPath(json::object& paths, const std::string& path, json::array params, const PathContext& c,
             const std::vector<Operation>& ops) {
  if (ops.empty()) return;
  json::object item;
  for (const Operation& op : ops) item[op.method] = Render(c, op);
  item["parameters"] = std::move(params);
  paths[path] = std::move(item);
}

std::vector<Operation> CollectionOps(const api::Resource& res, const ResourceSchemas& schemas,
                                     const std::string& scope) {
  std::string id = IdGroup(res) + scope + res.kind;
  std::vector<Operation> ops;
  if (HasVerb(res, "list")) {
    ops.push_back({"get", "list", "list" + id, "list or watch objects of kind " + res.kind,
                   kListParams, Body::kNone, schemas.list});
  }
  if (HasVerb(res, "create")) {
    ops.push_back({"post", "post", "create" + id, "create a " + res.kind, kWriteParams,
                   Body::kObject, schemas.object, true});
  }
  if (HasVerb(res, "deletecollection")) {
    ops.push_back({"delete", "deletecollection",
                   "delete" + IdGroup(res) + "Collection" + scope + res.kind,
                   "delete collection of " + res.kind, kDeleteCollectionParams,
                   Body::kDeleteOptions, std::string(kStatusSchema)});
  }
  return ops;
}

// Operations on one object, or on its status or scale subresource
// (`sub` = "", "Status", "Scale"; `what` = "", "status of ", "scale of ").
std::vector<Operation> ItemOps(const api::Resource& res, const std::string& scope,
                               std::string_view sub, std::string_view what,
                               const std::string& schema) {
  std::string id = IdGroup(res) + scope + res.kind + std::string(sub);
  std::string target = std::string(what) + "the specified " + res.kind;
  std::vector<Operation> ops;
  if (HasVerb(res, "get")) {
    ops.push_back({"get", "get", "read" + id, "read " + target, {}, Body::kNone, schema});
  }
  if (HasVerb(res, "update")) {
    ops.push_back({"put", "put", "replace" + id, "replace " + target, kWriteParams, Body::kObject,
                   schema, true});
  }
  if (HasVerb(res, "patch")) {
    ops.push_back({"patch", "patch", "patch" + id, "partially update " + target, kPatchParams,
                   Body::kPatch, schema, true});
  }
  if (sub.empty() && HasVerb(res, "delete")) {
    ops.push_back({"delete", "delete", "delete" + id, "delete a " + res.kind, kDeleteParams,
                   Body::kDeleteOptions, std::string(kStatusSchema)});
  }
  return ops;
}

Operation WatchOp(const api::Resource& res, std::string_view action, const std::string& id,
                  std::string description) {
  return {"get",       action,      "watch" + IdGroup(res) + id,    std::move(description),
          kListParams, Body::kNone, std::string(kWatchEventSchema), false,
          true};
}

void AddWatchPaths(Dialect d, const api::Resource& res, const PathContext& c, json::object& paths) {
  std::string prefix = GroupVersionPrefix(res.group, res.version) + "/watch";
  std::string scope = res.namespaced ? "Namespaced" : "";
  std::string base = prefix + (res.namespaced ? "/namespaces/{namespace}/" : "/") + res.plural;
  std::string deprecated = ". deprecated: use the 'watch' parameter with a list operation instead";
  AddPath(paths, base, PathParams(d, res, false, res.namespaced), c,
          {WatchOp(res, "watchlist", scope + res.kind + "List",
                   "watch individual changes to a list of " + res.kind + deprecated + ".")});
  AddPath(paths, base + "/{name}", PathParams(d, res, true, res.namespaced), c,
          {WatchOp(res, "watch", scope + res.kind,
                   "watch changes to an object of kind " + res.kind + deprecated +
                       ", filtered to a single item with the 'fieldSelector' parameter.")});
  if (res.namespaced) {
    AddPath(paths, prefix + "/" + res.plural, PathParams(d, res, false, false), c,
            {WatchOp(res, "watchlist", res.kind + "ListForAllNamespaces",
                     "watch individual changes to a list of " + res.kind + deprecated + ".")});
  }
}

}  // namespace

std::string GroupVersionPrefix(std::string_view group, std::string_view version) {
  if (group.empty()) return "/api/" + std::string(version);
  return "/apis/" + std::string(group) + "/" + std::string(version);
}

std::string SchemaRef(Dialect d, std::string_view name) {
  return (d == Dialect::kSwagger2 ? "#/definitions/" : "#/components/schemas/") + std::string(name);
}

void AddResourcePaths(Dialect d, const api::Resource& res, const ResourceSchemas& schemas,
                      json::object& paths) {
  PathContext c{d, res.group, res.version, res.kind, Tag(res)};
  std::string prefix = GroupVersionPrefix(res.group, res.version);
  std::string scope = res.namespaced ? "Namespaced" : "";
  std::string collection =
      prefix + (res.namespaced ? "/namespaces/{namespace}/" : "/") + res.plural;
  std::string item = collection + "/{name}";
  AddPath(paths, collection, PathParams(d, res, false, res.namespaced), c,
          CollectionOps(res, schemas, scope));
  AddPath(paths, item, PathParams(d, res, true, res.namespaced), c,
          ItemOps(res, scope, "", "", schemas.object));
  if (res.has_status) {
    AddPath(paths, item + "/status", PathParams(d, res, true, res.namespaced), c,
            ItemOps(res, scope, "Status", "status of ", schemas.object));
  }
  if (res.has_scale) {
    PathContext scale{d, "autoscaling", "v1", "Scale", c.tag};
    AddPath(paths, item + "/scale", PathParams(d, res, true, res.namespaced), scale,
            ItemOps(res, scope, "Scale", "scale of ", std::string(kScaleSchema)));
  }
  if (res.namespaced && HasVerb(res, "list")) {
    Operation all{"get",
                  "list",
                  "list" + IdGroup(res) + res.kind + "ForAllNamespaces",
                  "list or watch objects of kind " + res.kind,
                  kListParams,
                  Body::kNone,
                  schemas.list};
    AddPath(paths, prefix + "/" + res.plural, PathParams(d, res, false, false), c, {all});
  }
  if (HasVerb(res, "watch")) AddWatchPaths(d, res, c, paths);
}

void AddDiscoveryPath(Dialect d, std::string_view group, std::string_view version,
                      json::object& paths) {
  api::Resource gv;
  gv.group = std::string(group);
  gv.version = std::string(version);
  Operation op{"get", "",          "get" + IdGroup(gv) + "APIResources", "get available resources",
               {},    Body::kNone, std::string(kApiResourceListSchema)};
  PathContext c{d, group, version, "", Tag(gv)};
  json::object rendered = Render(c, op);
  rendered.erase("x-kubernetes-action");
  rendered.erase("x-kubernetes-group-version-kind");
  paths[GroupVersionPrefix(group, version) + "/"] = {{"get", std::move(rendered)}};
}

}  // namespace flotilla::apiserver::openapi_internal
