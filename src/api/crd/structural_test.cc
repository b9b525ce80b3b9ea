#include "api/crd/structural.h"

#include <gtest/gtest.h>

#include "base/json.h"

namespace flotilla::api::crd {
namespace {

json::value J(std::string_view text) { return json::parse(text); }

std::shared_ptr<const Schema> Parse(std::string_view text, std::vector<StatusCause>* causes) {
  return ParseStructural(J(text), "spec.versions[0].schema.openAPIV3Schema", causes);
}

// What each cause reads like in a 422 ("field: message").
std::vector<std::string> Lines(const std::vector<StatusCause>& causes) {
  std::vector<std::string> out;
  for (const StatusCause& c : causes) out.push_back(c.field + ": " + c.message);
  return out;
}

constexpr std::string_view kCronTab = R"({
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "required": ["cronSpec"],
      "properties": {
        "cronSpec": {"type": "string", "pattern": "^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$"},
        "image": {"type": "string", "maxLength": 10},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
        "policy": {"type": "string", "enum": ["Allow", "Forbid"], "default": "Allow"},
        "ports": {"type": "array", "maxItems": 2, "x-kubernetes-list-type": "map",
                  "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "required": ["name"],
                            "properties": {"name": {"type": "string"},
                                           "port": {"x-kubernetes-int-or-string": true}}}},
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                     "x-kubernetes-preserve-unknown-fields": true}
      }
    },
    "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}
  }
})";

TEST(StructuralTest, AStructuralSchemaParses) {
  std::vector<StatusCause> causes;
  auto s = Parse(kCronTab, &causes);
  ASSERT_NE(s, nullptr) << json::serialize(json::value_from(Lines(causes)));
  EXPECT_TRUE(causes.empty());
  EXPECT_EQ(s->type, "object");
  EXPECT_FALSE(s->has_cel_rules);
}

TEST(StructuralTest, NonStructuralSchemasAreRefusedWithTheirPaths) {
  struct Case {
    std::string schema;
    std::string line;
  } cases[] = {
      {R"({"type": "object", "properties": {"spec": {"properties": {}}}})",
       "spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not "
       "be empty for specified object fields"},
      {R"({"type": "string"})",
       "spec.versions[0].schema.openAPIV3Schema.type: Invalid value: \"string\": must be object "
       "at the root"},
      {R"({"type": "object", "properties": {"a": {"$ref": "#/x"}}})",
       "spec.versions[0].schema.openAPIV3Schema.properties[a].$ref: Forbidden: $ref is not "
       "supported"},
      {R"({"type": "object", "properties": {"a": {"type": "object", "properties": {},
           "additionalProperties": {"type": "string"}}}})",
       "spec.versions[0].schema.openAPIV3Schema.properties[a].additionalProperties: Forbidden: "
       "additionalProperties and properties are mutual exclusive"},
      {R"({"type": "object", "properties": {"metadata": {"type": "object",
           "properties": {"labels": {"type": "object"}}}}})",
       "spec.versions[0].schema.openAPIV3Schema.properties[metadata].properties[labels]: "
       "Forbidden: must not specify anything other than name and generateName, but metadata is "
       "implicitly specified"},
      {R"({"type": "object", "properties": {"a": {"type": "array"}}})",
       "spec.versions[0].schema.openAPIV3Schema.properties[a].items: Required value: must be "
       "specified"},
      {R"({"type": "object", "properties": {"a": {"type": "integer", "x-kubernetes-int-or-string": true}}})",
       "spec.versions[0].schema.openAPIV3Schema.properties[a].type: Forbidden: must be empty if "
       "x-kubernetes-int-or-string is true"},
      {R"({"type": "object", "properties": {"a": {"type": "integer", "default": "x"}}})",
       "spec.versions[0].schema.openAPIV3Schema.properties[a].default: Invalid value: "
       "\"string\": spec.versions[0].schema.openAPIV3Schema.properties[a].default in body must "
       "be of type integer: \"string\""},
      {R"({"type": "object", "properties": {"a": {"type": "date"}}})",
       "spec.versions[0].schema.openAPIV3Schema.properties[a].type: Unsupported value: "
       "\"date\": supported values: \"object\", \"array\", \"string\", \"integer\", \"number\", "
       "\"boolean\""},
  };
  for (const Case& c : cases) {
    std::vector<StatusCause> causes;
    EXPECT_EQ(Parse(c.schema, &causes), nullptr) << c.schema;
    std::vector<std::string> lines = Lines(causes);
    EXPECT_NE(std::find(lines.begin(), lines.end(), c.line), lines.end())
        << c.schema << " gave " << json::serialize(json::value_from(lines));
  }
}

TEST(StructuralTest, ValuesAreCheckedWithKubernetesMessages) {
  std::vector<StatusCause> causes;
  auto s = Parse(kCronTab, &causes);
  ASSERT_NE(s, nullptr);
  struct Case {
    std::string spec;
    std::string line;
  } cases[] = {
      {R"({"cronSpec": 5})",
       "spec.cronSpec: Invalid value: \"integer\": spec.cronSpec in body must be of type string: "
       "\"integer\""},
      {R"({})", "spec.cronSpec: Required value"},
      {R"({"cronSpec": "every minute"})",
       "spec.cronSpec: Invalid value: \"every minute\": spec.cronSpec in body should match "
       "'^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'"},
      {R"({"cronSpec": "* * * * *", "replicas": 0})",
       "spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal "
       "to 1"},
      {R"({"cronSpec": "* * * * *", "replicas": 11})",
       "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to "
       "10"},
      {R"({"cronSpec": "* * * * *", "policy": "Replace"})",
       "spec.policy: Unsupported value: \"Replace\": supported values: \"Allow\", \"Forbid\""},
      {R"({"cronSpec": "* * * * *", "ports": [{"name": "a"}, {"name": "a"}]})",
       "spec.ports[1]: Duplicate value: {\"name\":\"a\"}"},
      {R"({"cronSpec": "* * * * *", "ports": [{"name": "a"}, {"name": "b"}, {"name": "c"}]})",
       "spec.ports: Too many: 3: must have at most 2 items"},
      {R"({"cronSpec": "* * * * *", "ports": [{"name": "a", "port": true}]})",
       "spec.ports[0].port: Invalid value: \"boolean\": spec.ports[0].port in body must be of "
       "type integer,string: \"boolean\""},
      {R"({"cronSpec": "* * * * *", "tags": ["x", "x"]})", "spec.tags[1]: Duplicate value: \"x\""},
      {R"({"cronSpec": "* * * * *", "labels": {"a": 1}})",
       "spec.labels.a: Invalid value: \"integer\": spec.labels.a in body must be of type string: "
       "\"integer\""},
      {R"({"cronSpec": "* * * * *", "template": {"kind": "Pod"}})",
       "spec.template.apiVersion: Required value: must not be empty"},
  };
  for (const Case& c : cases) {
    json::object obj{{"apiVersion", "stable.example.com/v1"},
                     {"kind", "CronTab"},
                     {"metadata", json::object{{"name", "x"}}},
                     {"spec", J(c.spec)}};
    std::vector<std::string> lines = Lines(Validate(*s, obj));
    EXPECT_NE(std::find(lines.begin(), lines.end(), c.line), lines.end())
        << c.spec << " gave " << json::serialize(json::value_from(lines));
  }
  json::object good{
      {"apiVersion", "stable.example.com/v1"},
      {"kind", "CronTab"},
      {"metadata", json::object{{"name", "x"}}},
      {"spec", J(R"({"cronSpec": "*/5 * * * *", "ports": [{"name": "a", "port": "http"},
                                    {"name": "b", "port": 80}], "free": {"x": [1]}})")}};
  EXPECT_TRUE(Validate(*s, good).empty())
      << json::serialize(json::value_from(Lines(Validate(*s, good))));
}

TEST(StructuralTest, UnknownFieldsArePrunedAndNamed) {
  std::vector<StatusCause> causes;
  auto s = Parse(kCronTab, &causes);
  ASSERT_NE(s, nullptr);
  json::object obj = J(R"({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
      "metadata": {"name": "x"}, "extra": 1,
      "spec": {"cronSpec": "* * * * *", "imagee": "a", "free": {"kept": 1},
               "ports": [{"name": "a", "bad": 2}], "labels": {"any": "v"},
               "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "x": 1}},
      "status": {"replicas": 1, "phase": "x"}})")
                         .as_object();
  std::vector<std::string> unknown;
  Prune(*s, obj, &unknown);
  EXPECT_EQ(unknown,
            (std::vector<std::string>{"extra", "spec.imagee", "spec.ports[0].bad", "status.phase"}))
      << json::serialize(json::value_from(unknown));
  EXPECT_EQ(obj.at("spec").at("free"), J(R"({"kept": 1})"));
  EXPECT_EQ(obj.at("spec").at("labels"), J(R"({"any": "v"})"));
  EXPECT_EQ(obj.at("spec").at("template").at("x"), json::value(1));
  EXPECT_TRUE(obj.contains("metadata"));
}

TEST(StructuralTest, DefaultsFillAbsentAndNullFields) {
  std::vector<StatusCause> causes;
  auto s = Parse(kCronTab, &causes);
  ASSERT_NE(s, nullptr);
  json::object obj = J(R"({"spec": {"cronSpec": "* * * * *", "policy": null}})").as_object();
  Default(*s, obj);
  EXPECT_EQ(obj.at("spec").at("replicas"), json::value(1));
  EXPECT_EQ(obj.at("spec").at("policy"), json::value("Allow"));
  json::object set = J(R"({"spec": {"replicas": 3}})").as_object();
  Default(*s, set);
  EXPECT_EQ(set.at("spec").at("replicas"), json::value(3));
  EXPECT_FALSE(set.contains("status"));
}

TEST(StructuralTest, CelRulesAreNoticedAndPublishedSchemasLoseWhatSwaggerCannotSay) {
  std::vector<StatusCause> causes;
  auto s = Parse(R"({"type": "object", "properties": {"spec": {"type": "object",
      "x-kubernetes-validations": [{"rule": "self.a > 0"}],
      "properties": {"a": {"type": "integer", "nullable": true},
                     "b": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]}}}}})",
                 &causes);
  ASSERT_NE(s, nullptr) << json::serialize(json::value_from(Lines(causes)));
  EXPECT_TRUE(s->has_cel_rules);
  json::object v2 = Published(J(R"({"type": "object", "properties": {"a": {"type": "integer",
      "nullable": true}}})"),
                              true, "#/definitions/meta");
  EXPECT_FALSE(v2.at("properties").at("a").as_object().contains("nullable"));
  EXPECT_EQ(v2.at("properties").at("metadata").at("$ref"), json::value("#/definitions/meta"));
  EXPECT_TRUE(v2.at("properties").as_object().contains("apiVersion"));
}

}  // namespace
}  // namespace flotilla::api::crd
