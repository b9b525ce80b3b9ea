#include "apiserver/openapi.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "apiserver/openapi_proto.h"

namespace flotilla::apiserver {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;
using ::testing::Not;

api::Resource MakeResource(std::string group, std::string version, std::string kind,
                           std::string plural, bool namespaced, std::string schema) {
  api::Resource r;
  r.group = std::move(group);
  r.version = std::move(version);
  r.kind = std::move(kind);
  r.plural = std::move(plural);
  r.namespaced = namespaced;
  r.has_status = true;
  r.schema_name = std::move(schema);
  return r;
}

api::Registry TestRegistry() {
  api::Registry reg;
  reg.Add(MakeResource("", "v1", "Namespace", "namespaces", false, "io.k8s.api.core.v1.Namespace"));
  reg.Add(MakeResource("", "v1", "ConfigMap", "configmaps", true, "io.k8s.api.core.v1.ConfigMap"));
  api::Resource deploy = MakeResource("apps", "v1", "Deployment", "deployments", true,
                                      "io.k8s.api.apps.v1.Deployment");
  deploy.has_scale = true;
  reg.Add(std::move(deploy));
  reg.Add(MakeResource("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers",
                       true, "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler"));
  reg.Add(MakeResource("autoscaling", "v1", "HorizontalPodAutoscaler", "horizontalpodautoscalers",
                       true, "io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler"));
  reg.Add(MakeResource("federation", "v1beta1", "Cluster", "clusters", false,
                       "io.flotilla.federation.v1beta1.Cluster"));
  api::Resource widget =
      MakeResource("example.com", "v1", "Widget", "widgets", true, "com.example.v1.Widget");
  widget.verbs = {"get", "list"};
  reg.Add(std::move(widget));
  return reg;
}

const api::Registry& Registry() {
  static const api::Registry kRegistry = TestRegistry();
  return kRegistry;
}

const OpenApi& Docs() {
  static const OpenApi kDocs(Registry(), api::SchemaSet::Builtin());
  return kDocs;
}

json::object ParseObject(const std::string& text) {
  auto o = ParseJsonObject(text);
  EXPECT_TRUE(o.ok()) << o.status().ToString();
  return o.ok() ? *o : json::object();
}

json::object V3Doc(std::string_view gv) {
  const std::string* doc = Docs().V3(gv);
  EXPECT_NE(doc, nullptr) << gv;
  return doc ? ParseObject(*doc) : json::object();
}

const json::object& Op(const json::object& doc, std::string_view path, std::string_view method) {
  static const json::object kEmpty;
  const json::value* p = doc.at("paths").as_object().if_contains(path);
  EXPECT_NE(p, nullptr) << path;
  if (p == nullptr || !p->as_object().contains(method)) return kEmpty;
  return p->as_object().at(method).as_object();
}

std::vector<std::string> ParamNames(const json::object& op) {
  std::vector<std::string> names;
  if (const json::array* params = GetArray(op, "parameters")) {
    for (const auto& p : *params) names.emplace_back(*GetString(p.as_object(), "name"));
  }
  return names;
}

json::value Gvk(std::string_view group, std::string_view version, std::string_view kind) {
  return json::object{{"group", group}, {"kind", kind}, {"version", version}};
}

void CollectRefs(const json::value& v, std::vector<std::string>& out) {
  if (v.is_array()) {
    for (const auto& e : v.get_array()) CollectRefs(e, out);
  } else if (v.is_object()) {
    for (const auto& [k, e] : v.get_object()) {
      if (k == "$ref") out.emplace_back(e.as_string());
      CollectRefs(e, out);
    }
  }
}

TEST(OpenApiTest, V3IndexPointsAtHashedDocuments) {
  json::object index = ParseObject(Docs().V3Index());
  const json::object& paths = index.at("paths").as_object();
  for (const char* gv : {"api/v1", "apis/apps/v1", "apis/autoscaling/v2", "apis/autoscaling/v1",
                         "apis/federation/v1beta1", "apis/example.com/v1"}) {
    ASSERT_TRUE(paths.contains(gv)) << gv;
    const std::string& hash = Docs().V3Hash(gv);
    EXPECT_EQ(hash.size(), 128u);
    EXPECT_EQ(hash.find_first_not_of("0123456789ABCDEF"), std::string::npos);
    EXPECT_EQ(*GetString(paths.at(gv).as_object(), "serverRelativeURL"),
              "/openapi/v3/" + std::string(gv) + "?hash=" + hash);
  }
  EXPECT_NE(Docs().V3Hash("api/v1"), Docs().V3Hash("apis/apps/v1"));
}

TEST(OpenApiTest, V3LookupIgnoresQueryAndSlashes) {
  EXPECT_EQ(Docs().V3("apis/apps/v1"), Docs().V3("/apis/apps/v1/?hash=abc"));
  EXPECT_EQ(Docs().V3("apis/apps/v2"), nullptr);
  EXPECT_EQ(Docs().V3Hash("apis/none/v1"), "");
}

TEST(OpenApiTest, WriteOperationsDeclareFieldValidation) {
  json::object doc = V3Doc("apis/apps/v1");
  EXPECT_EQ(*GetString(doc, "openapi"), "3.0.0");
  std::string item = "/apis/apps/v1/namespaces/{namespace}/deployments/{name}";
  const json::object& patch = Op(doc, item, "patch");
  EXPECT_THAT(ParamNames(patch),
              IsSupersetOf({"fieldValidation", "dryRun", "fieldManager", "force"}));
  EXPECT_EQ(*GetString(patch, "x-kubernetes-action"), "patch");
  EXPECT_EQ(*patch.if_contains("x-kubernetes-group-version-kind"), Gvk("apps", "v1", "Deployment"));
  EXPECT_TRUE(Find(patch, "requestBody.content")
                  ->as_object()
                  .contains("application/strategic-merge-patch+json"));
  EXPECT_THAT(ParamNames(Op(doc, item, "put")), Contains("fieldValidation"));
  EXPECT_THAT(ParamNames(Op(doc, item + "/status", "patch")), Contains("fieldValidation"));
  EXPECT_THAT(ParamNames(Op(doc, "/apis/apps/v1/namespaces/{namespace}/deployments", "post")),
              IsSupersetOf({"fieldValidation", "dryRun", "fieldManager"}));
  EXPECT_EQ(*Op(doc, item + "/scale", "patch").if_contains("x-kubernetes-group-version-kind"),
            Gvk("autoscaling", "v1", "Scale"));
  EXPECT_THAT(ParamNames(Op(doc, item, "get")), Not(Contains("fieldValidation")));
  const json::object& path = doc.at("paths").at(item).as_object();
  EXPECT_THAT(ParamNames(path), IsSupersetOf({"name", "namespace", "pretty"}));
}

// What kubectl explain does: find the kind on the resource's paths, then the
// schema listing that kind, then follow the field path through refs.
TEST(OpenApiTest, EveryKindIsExplainable) {
  for (const auto& res : Registry().All()) {
    std::string gv =
        res->group.empty() ? "api/" + res->version : "apis/" + res->group + "/" + res->version;
    json::object doc = V3Doc(gv);
    std::string ns = res->namespaced ? "/namespaces/{namespace}/" : "/";
    std::string path = "/" + gv + ns + res->plural;
    json::value gvk = Gvk(res->group, res->version, res->kind);
    EXPECT_EQ(*Op(doc, path, "get").if_contains("x-kubernetes-group-version-kind"), gvk) << path;
    int matches = 0;
    for (const auto& [name, schema] : doc.at("components").at("schemas").as_object()) {
      const json::value* gvks = schema.as_object().if_contains("x-kubernetes-group-version-kind");
      if (gvks == nullptr) continue;
      for (const auto& g : gvks->as_array()) matches += g == gvk;
    }
    EXPECT_EQ(matches, 1) << res->kind;
  }
}

TEST(OpenApiTest, SchemasAreSelfContainedOpenApi3) {
  json::object doc = V3Doc("apis/apps/v1");
  const json::object& schemas = doc.at("components").at("schemas").as_object();
  std::vector<std::string> refs;
  CollectRefs(doc, refs);
  EXPECT_GT(refs.size(), 100u);
  for (const std::string& ref : refs) {
    ASSERT_TRUE(ref.starts_with("#/components/schemas/")) << ref;
    EXPECT_TRUE(schemas.contains(ref.substr(21))) << ref;
  }
  const json::object& deployment = schemas.at("io.k8s.api.apps.v1.Deployment").as_object();
  const json::value* spec_ref = Find(deployment, "properties.spec.allOf");
  ASSERT_NE(spec_ref, nullptr);
  EXPECT_EQ(spec_ref->as_array()[0].at("$ref"),
            "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec");
  EXPECT_THAT(
      std::string(*GetString(*Find(deployment, "properties.spec")->if_object(), "description")),
      HasSubstr("desired behavior"));
  const json::object& replicas =
      Find(schemas.at("io.k8s.api.apps.v1.DeploymentSpec"), "properties.replicas")->as_object();
  EXPECT_EQ(*GetString(replicas, "type"), "integer");
  const json::object& int_or_string =
      schemas.at("io.k8s.apimachinery.pkg.util.intstr.IntOrString").as_object();
  EXPECT_FALSE(int_or_string.contains("type"));
  EXPECT_EQ(int_or_string.at("oneOf").as_array().size(), 2u);
  const json::object& containers =
      Find(schemas.at("io.k8s.api.core.v1.PodSpec"), "properties.containers")->as_object();
  EXPECT_EQ(*GetString(containers, "x-kubernetes-patch-merge-key"), "name");
  EXPECT_FALSE(schemas.contains("io.k8s.api.core.v1.Namespace"));
}

TEST(OpenApiTest, ClusterScopedPathsHaveNoNamespace) {
  json::object doc = V3Doc("api/v1");
  const json::object& paths = doc.at("paths").as_object();
  EXPECT_TRUE(paths.contains("/api/v1/namespaces/{name}"));
  EXPECT_TRUE(paths.contains("/api/v1/namespaces/{name}/status"));
  EXPECT_TRUE(paths.contains("/api/v1/configmaps"));  // all namespaces
  EXPECT_TRUE(paths.contains("/api/v1/watch/namespaces/{namespace}/configmaps/{name}"));
  EXPECT_THAT(ParamNames(paths.at("/api/v1/namespaces/{name}").as_object()),
              Not(Contains("namespace")));
  EXPECT_EQ(*GetString(Op(doc, "/api/v1/namespaces", "get"), "operationId"), "listCoreV1Namespace");
  EXPECT_EQ(
      *GetString(Op(doc, "/api/v1/namespaces/{namespace}/configmaps", "delete"), "operationId"),
      "deleteCoreV1CollectionNamespacedConfigMap");
}

TEST(OpenApiTest, UnknownSchemasGetStubsAndVerbsLimitOperations) {
  json::object doc = V3Doc("apis/example.com/v1");
  const json::object& widget =
      doc.at("components").at("schemas").at("com.example.v1.Widget").as_object();
  EXPECT_EQ(widget.at("x-kubernetes-preserve-unknown-fields"), true);
  std::string collection = "/apis/example.com/v1/namespaces/{namespace}/widgets";
  const json::object& path = doc.at("paths").at(collection).as_object();
  EXPECT_TRUE(path.contains("get"));
  EXPECT_FALSE(path.contains("post"));
  EXPECT_FALSE(doc.at("paths").as_object().contains("/apis/example.com/v1/watch/widgets"));
}

TEST(OpenApiTest, V2IsSwagger) {
  json::object doc = ParseObject(Docs().V2());
  EXPECT_EQ(*GetString(doc, "swagger"), "2.0");
  const json::object& defs = doc.at("definitions").as_object();
  EXPECT_TRUE(defs.contains("io.k8s.api.apps.v1.Deployment"));
  EXPECT_TRUE(defs.contains("io.flotilla.federation.v1beta1.Cluster"));
  const json::object& post = Op(doc, "/apis/apps/v1/namespaces/{namespace}/deployments", "post");
  const json::object& body = post.at("parameters").as_array()[0].as_object();
  EXPECT_EQ(*GetString(body, "in"), "body");
  EXPECT_EQ(*Find(body, "schema.$ref"), "#/definitions/io.k8s.api.apps.v1.Deployment");
  EXPECT_THAT(ParamNames(post), Contains("fieldValidation"));
  EXPECT_THAT(Docs().V2(), Not(HasSubstr("#/components/")));
}

// gnostic's wire format, read back by hand: Document.swagger (field 1),
// Definitions (9) of NamedSchema (1: name, 2: Schema), Schema.type (22:
// TypeItem.value 1), Schema.properties (25), vendor extensions (31: name,
// Any.yaml 2).
TEST(OpenApiProtobufTest, EncodesTheDefinitionsKubectlReads) {
  json::object swagger = json::parse(R"({"swagger": "2.0", "info": {"title": "t", "version": "v"},
      "definitions": {"io.k8s.api.core.v1.ConfigMap": {"type": "object",
        "properties": {"data": {"type": "object", "additionalProperties": {"type": "string"}}},
        "x-kubernetes-group-version-kind": [{"group": "", "kind": "ConfigMap", "version": "v1"}]}}})")
                             .as_object();
  std::string pb = OpenApiV2Protobuf(swagger);
  // swagger = "2.0": tag 0x0a, length 3.
  ASSERT_GE(pb.size(), 5u);
  EXPECT_EQ(pb.substr(0, 5), std::string("\x0a\x03"
                                         "2.0",
                                         5));
  EXPECT_THAT(pb, HasSubstr("io.k8s.api.core.v1.ConfigMap"));
  // TypeItem{value: "object"}: 0xb2 0x01 (field 22, length-delimited), 8, 0x0a 6 "object".
  EXPECT_THAT(pb, HasSubstr(std::string("\xb2\x01\x08\x0a\x06object", 11)));
  // The GVK as a vendor extension whose value is its JSON (YAML) text.
  EXPECT_THAT(pb, HasSubstr("x-kubernetes-group-version-kind"));
  EXPECT_THAT(pb, HasSubstr(R"([{"group":"","kind":"ConfigMap","version":"v1"}])"));
  EXPECT_EQ(OpenApiV2Protobuf(swagger), pb);  // deterministic
}

}  // namespace
}  // namespace flotilla::apiserver
