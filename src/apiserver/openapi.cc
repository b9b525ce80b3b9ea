#include "apiserver/openapi.h"

#include <openssl/evp.h>

#include <set>
#include <vector>

#include "apiserver/openapi_paths.h"
#include "apiserver/openapi_proto.h"

namespace flotilla::apiserver {
namespace {

using openapi_internal::Dialect;
using openapi_internal::ResourceSchemas;

constexpr std::string_view kDefinitionsRef = "#/definitions/";
constexpr std::string_view kComponentsRef = "#/components/schemas/";
constexpr std::string_view kIntOrString = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
constexpr std::string_view kQuantity = "io.k8s.apimachinery.pkg.api.resource.Quantity";

const json::object& Info() {
  static const json::object kInfo{{"title", "Kubernetes"}, {"version", "unversioned"}};
  return kInfo;
}

json::object BearerTokenScheme() {
  return {{"description", "Bearer Token authentication"},
          {"in", "header"},
          {"name", "authorization"},
          {"type", "apiKey"}};
}

// "api/v1" or "apis/apps/v1": how /openapi/v3 names a group-version.
std::string GvPath(const api::Resource& res) {
  return openapi_internal::GroupVersionPrefix(res.group, res.version).substr(1);
}

json::object Sorted(const json::object& o) {
  std::map<std::string_view, const json::value*> keys;
  for (const auto& [k, v] : o) keys.emplace(k, &v);
  json::object out;
  out.reserve(o.size());
  for (const auto& [k, v] : keys) out.emplace(k, *v);
  return out;
}

json::object Gvk(std::string_view group, std::string_view version, std::string_view kind) {
  return {{"group", group}, {"kind", kind}, {"version", version}};
}

// A definition standing in for a kind the schema set does not describe.
json::object Stub(const api::Resource& res, std::string_view kind) {
  return {{"description", std::string(kind) + " of " + res.ApiVersion() + "."},
          {"type", "object"},
          {"x-kubernetes-preserve-unknown-fields", true},
          {"x-kubernetes-group-version-kind", json::array{Gvk(res.group, res.version, kind)}}};
}

// The definitions of a resource's object and list, added to `all` as stubs
// when missing.
ResourceSchemas EnsureSchemas(const api::Resource& res, json::object& all) {
  ResourceSchemas s;
  s.object = res.schema_name;
  if (s.object.empty()) s.object = (res.group.empty() ? "core" : res.group) + "." + res.kind;
  s.list = s.object + "List";
  if (!all.contains(s.object)) all[s.object] = Stub(res, res.kind);
  if (!all.contains(s.list)) all[s.list] = Stub(res, res.kind + "List");
  return s;
}

// The definitions `roots` need, roots included, sorted by name.
json::object Closure(const json::object& all, std::vector<std::string> roots) {
  std::set<std::string> seen;
  while (!roots.empty()) {
    std::string name = std::move(roots.back());
    roots.pop_back();
    const json::value* def = all.if_contains(name);
    if (def == nullptr || !seen.insert(name).second) continue;
    CollectDefinitionRefs(*def, roots);
  }
  json::object out;
  for (const std::string& name : seen) out[name] = all.at(name);
  return out;
}

// An OpenAPI 3 schema from a v2 one: refs point into components, and a $ref
// with siblings (a described field) becomes allOf, as kube-apiserver
// writes it.
json::value ToV3(const json::value& v) {
  if (v.is_array()) {
    json::array out;
    for (const auto& e : v.get_array()) out.push_back(ToV3(e));
    return out;
  }
  if (!v.is_object()) return v;
  const json::object& o = v.get_object();
  json::object out;
  for (const auto& [k, e] : o) {
    if (k != "$ref") {
      out[k] = ToV3(e);
      continue;
    }
    std::string_view ref = e.is_string() ? std::string_view(e.get_string()) : "";
    if (ref.starts_with(kDefinitionsRef)) {
      json::string rewritten(std::string(kComponentsRef) +
                             std::string(ref.substr(kDefinitionsRef.size())));
      if (o.size() == 1) return json::object{{"$ref", rewritten}};
      out["allOf"] = json::array{json::object{{"$ref", rewritten}}};
    } else {
      out[k] = e;
    }
  }
  return out;
}

// IntOrString and Quantity are one-of types in OpenAPI 3.
json::object V3Definition(std::string_view name, const json::object& def) {
  json::object out = ToV3(def).as_object();
  if (name == kIntOrString || name == kQuantity) {
    out.erase("type");
    json::array one_of{{{"type", "integer"}}, {{"type", "string"}}};
    if (name == kQuantity) one_of = {{{"type", "string"}}, {{"type", "number"}}};
    out["oneOf"] = std::move(one_of);
  }
  return out;
}

std::string Sha512Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha512(), nullptr);
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  return out;
}

// Definitions every document needs besides its kinds'.
std::vector<std::string> CommonRoots() {
  return {std::string(openapi_internal::kStatusSchema),
          std::string(openapi_internal::kDeleteOptionsSchema),
          std::string(openapi_internal::kWatchEventSchema),
          std::string(openapi_internal::kPatchSchema),
          std::string(openapi_internal::kApiResourceListSchema)};
}

// Paths of `resources` (all in one dialect) and the roots of their schemas.
json::object BuildPaths(Dialect d, const std::vector<const api::Resource*>& resources,
                        json::object& all, std::vector<std::string>& roots) {
  json::object paths;
  std::set<std::string> gvs;
  for (const api::Resource* res : resources) {
    ResourceSchemas s = EnsureSchemas(*res, all);
    openapi_internal::AddResourcePaths(d, *res, s, paths);
    roots.push_back(s.object);
    roots.push_back(s.list);
    if (res->has_scale) roots.emplace_back(openapi_internal::kScaleSchema);
    if (gvs.insert(GvPath(*res)).second) {
      openapi_internal::AddDiscoveryPath(d, res->group, res->version, paths);
    }
  }
  return Sorted(paths);
}

std::string BuildV2(const std::vector<const api::Resource*>& resources, json::object all) {
  std::vector<std::string> roots = CommonRoots();
  json::object paths = BuildPaths(Dialect::kSwagger2, resources, all, roots);
  json::object doc{{"swagger", "2.0"}, {"info", Info()}, {"paths", std::move(paths)}};
  doc["definitions"] = Closure(all, std::move(roots));
  doc["securityDefinitions"] = {{"BearerToken", BearerTokenScheme()}};
  doc["security"] = json::array{{{"BearerToken", json::array()}}};
  return json::serialize(doc);
}

std::string BuildV3(const std::vector<const api::Resource*>& resources, json::object all) {
  std::vector<std::string> roots = CommonRoots();
  json::object paths = BuildPaths(Dialect::kOpenApi3, resources, all, roots);
  json::object schemas;
  for (const auto& [name, def] : Closure(all, std::move(roots))) {
    schemas[name] = V3Definition(name, def.as_object());
  }
  json::object components{{"schemas", std::move(schemas)},
                          {"securitySchemes", {{"BearerToken", BearerTokenScheme()}}}};
  json::object doc{{"openapi", "3.0.0"}, {"info", Info()}, {"paths", std::move(paths)}};
  doc["components"] = std::move(components);
  doc["security"] = json::array{{{"BearerToken", json::array()}}};
  return json::serialize(doc);
}

}  // namespace

void CollectDefinitionRefs(const json::value& v, std::vector<std::string>& out) {
  if (v.is_array()) {
    for (const auto& e : v.get_array()) CollectDefinitionRefs(e, out);
  } else if (v.is_object()) {
    for (const auto& [k, e] : v.get_object()) {
      if (k == "$ref" && e.is_string() && e.get_string().starts_with(kDefinitionsRef)) {
        out.emplace_back(e.get_string().subview().substr(kDefinitionsRef.size()));
      } else {
        CollectDefinitionRefs(e, out);
      }
    }
  }
}

OpenApi::OpenApi(const api::Registry& registry, const api::SchemaSet& schemas) {
  std::vector<const api::Resource*> resources;
  std::map<std::string, std::vector<const api::Resource*>> by_gv;
  for (const auto& res : registry.All()) {
    resources.push_back(res.get());
    by_gv[GvPath(*res)].push_back(res.get());
  }
  v2_ = BuildV2(resources, schemas.Definitions());
  json::object index;
  for (const auto& [gv, members] : by_gv) {
    Document doc;
    doc.json = BuildV3(members, schemas.Definitions());
    doc.hash = Sha512Hex(doc.json);
    index[gv] = {{"serverRelativeURL", "/openapi/v3/" + gv + "?hash=" + doc.hash}};
    v3_.emplace(gv, std::move(doc));
  }
  v3_index_ = json::serialize(json::object{{"paths", std::move(index)}});
}

const std::string& OpenApi::V2Protobuf() const {
  std::call_once(v2_protobuf_once_, [this] {
    auto doc = ParseJsonObject(v2_);
    v2_protobuf_ = OpenApiV2Protobuf(doc.ok() ? *doc : json::object{});
  });
  return v2_protobuf_;
}

const OpenApi::Document* OpenApi::Find(std::string_view gv_path) const {
  gv_path = gv_path.substr(0, gv_path.find('?'));
  while (gv_path.starts_with('/')) gv_path.remove_prefix(1);
  while (gv_path.ends_with('/')) gv_path.remove_suffix(1);
  auto it = v3_.find(gv_path);
  return it == v3_.end() ? nullptr : &it->second;
}

const std::string* OpenApi::V3(std::string_view gv_path) const {
  const Document* doc = Find(gv_path);
  return doc == nullptr ? nullptr : &doc->json;
}

const std::string& OpenApi::V3Hash(std::string_view gv_path) const {
  static const std::string kNone;
  const Document* doc = Find(gv_path);
  return doc == nullptr ? kNone : doc->hash;
}

}  // namespace flotilla::apiserver
