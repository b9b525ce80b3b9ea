// Structural schemas: the OpenAPI v3 schema a CustomResourceDefinition
// version carries (spec.versions[].schema.openAPIV3Schema), as
// kube-apiserver's apiextensions server reads and applies it.
//
// - ParseStructural checks that the schema is structural (every field has a
//   type, or is x-kubernetes-int-or-string or
//   x-kubernetes-preserve-unknown-fields; no $ref; properties and
//   additionalProperties not both; only name and generateName under the
//   root's metadata; the root an object) and reports what is not with the
//   field paths of the CRD, as kube-apiserver's 422 does.
// - Prune drops the fields the schema does not declare, naming them as the
//   strict decoder does (`spec.foo`), so a request can be refused with
//   fieldValidation=Strict, warned with Warn, or pruned silently.
// - Default fills `default`s in, top down, where a field is absent (or
//   null and not nullable).
// - Validate checks values against the schema with kube-apiserver's
//   messages and field paths: types, required, enum, pattern, format,
//   minimum/maximum (exclusive too), multipleOf, minLength/maxLength,
//   minItems/maxItems, uniqueItems, minProperties/maxProperties, nullable,
//   x-kubernetes-list-type set and map (keys unique), allOf/anyOf/oneOf/not,
//   and the apiVersion and kind of x-kubernetes-embedded-resource objects.
//
// Not enforced (docs/crds.md): x-kubernetes-validations (CEL rules) are kept
// and published, and a create or update answers with a Warning header
// saying so; `pattern` is an ECMAScript regular expression here (Go's RE2
// in Kubernetes: the common subset behaves the same).
//
// Every function is pure and thread-safe; a parsed Schema is immutable.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace flotilla::api::crd {

struct Schema {
  std::string type;  // "object", "array", "string", "integer", "number", "boolean", or ""
  std::string format;
  std::map<std::string, std::shared_ptr<const Schema>> properties;
  std::shared_ptr<const Schema> items;
  std::shared_ptr<const Schema> additional_properties;  // a schema for every other key
  std::vector<std::string> required;
  std::optional<json::value> default_value;
  std::vector<json::value> enum_values;
  std::optional<std::regex> pattern;
  std::string pattern_text;
  std::optional<double> minimum, maximum, multiple_of;
  bool exclusive_minimum = false, exclusive_maximum = false;
  std::optional<int64_t> min_length, max_length, min_items, max_items, min_properties,
      max_properties;
  bool unique_items = false;
  bool nullable = false;
  bool preserve_unknown = false;
  bool int_or_string = false;
  bool embedded_resource = false;
  std::string list_type;  // "", "atomic", "set", "map"
  std::vector<std::string> list_map_keys;
  std::vector<std::shared_ptr<const Schema>> all_of, any_of, one_of;
  std::shared_ptr<const Schema> not_schema;
  bool has_cel_rules = false;  // x-kubernetes-validations somewhere at or under this node
};

// Parses `schema` (an openAPIV3Schema) and checks that it is structural.
// `path` is where it sits in the CRD, e.g.
// "spec.versions[0].schema.openAPIV3Schema"; every problem is appended to
// `causes` with such a path. Returns null when there were problems.
std::shared_ptr<const Schema> ParseStructural(const json::value& schema, const std::string& path,
                                              std::vector<StatusCause>* causes);

// Drops what `schema` does not declare from the custom object `obj` (the
// root: apiVersion, kind and metadata stay; metadata is the server's to
// check) and appends the dropped fields' paths to `unknown`.
void Prune(const Schema& schema, json::object& obj, std::vector<std::string>* unknown);

// Applies the schema's defaults to `obj`.
void Default(const Schema& schema, json::object& obj);

// Checks `obj` against `schema`; the causes are kube-apiserver's, with
// paths from the root ("spec.replicas").
std::vector<StatusCause> Validate(const Schema& schema, const json::object& obj);

// The schema as published in OpenAPI (v3: as written; v2: without what
// Swagger 2.0 cannot say: nullable, oneOf/anyOf/allOf/not, and
// x-kubernetes-int-or-string fields lose their type), with apiVersion, kind
// and metadata (a reference to ObjectMeta, `objectmeta_ref`) at the root.
json::object Published(const json::value& schema, bool v2, const std::string& objectmeta_ref);

}  // namespace flotilla::api::crd
