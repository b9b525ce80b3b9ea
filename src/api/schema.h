// The OpenAPI schemas of the kinds we serve, and what the API server does
// with them: decoding checks worded like kube-apiserver's, and the
// strategic-merge metadata of every field.
//
// The definitions are OpenAPI v2 definitions keyed by their Kubernetes names
// ("io.k8s.api.apps.v1.Deployment"): "$ref" ("#/definitions/<name>"),
// "type", "format", "properties", "items", "additionalProperties",
// "required", "description" and the x-kubernetes-* extensions. The builtin
// set is generated at build time from python3-kubernetes plus hand-written
// definitions such as federation/v1beta1 Cluster (docs/openapi.md).
//
// A SchemaSet is immutable once built: every method is thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/patch.h"
#include "base/json.h"
#include "base/status.h"

namespace flotilla::api {

// What Check() found in an object, in document order.
struct CheckResult {
  // Values of the wrong JSON type, and strings their Go type cannot hold
  // (bad base64 in Secret data, malformed quantities). `field` is the path
  // with list indices ("spec.template.spec.containers[0].image"); `message`
  // is what kube-apiserver's decoder says, e.g. "json: cannot unmarshal
  // string into Go struct field DeploymentSpec.spec.replicas of type int32";
  // `type` is "FieldValueTypeInvalid". kube-apiserver reports the first one.
  std::vector<StatusCause> type_errors;
  // Fields that no schema declares, named as kube-apiserver's strict decoder
  // names them: "spec.replicass", "spec.template.spec.containers[0].imagee"
  // (no leading dot; map keys appear as ".key").
  std::vector<std::string> unknown_fields;
};

// The definitions of the types Go decodes with their own UnmarshalJSON.
inline constexpr std::string_view kIntOrStringDefinition =
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
inline constexpr std::string_view kQuantityDefinition =
    "io.k8s.apimachinery.pkg.api.resource.Quantity";
inline constexpr std::string_view kTimeDefinition = "io.k8s.apimachinery.pkg.apis.meta.v1.Time";
inline constexpr std::string_view kMicroTimeDefinition =
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime";

// What a walk of an object reads of one schema object (a definition, or a
// field's schema inside one), with its $ref chain followed.
struct SchemaNode {
  enum class Type : uint8_t { kOther, kObject, kArray, kString, kInteger, kNumber, kBoolean };
  // The schema after its $ref chain; null when a $ref does not resolve.
  const json::object* resolved = nullptr;
  std::string_view ref;  // the last definition followed ("" when none)
  Type type = Type::kOther;
  // A type Go decodes with its own UnmarshalJSON whatever its schema says:
  // IntOrString (and x-kubernetes-int-or-string), Quantity, Time, MicroTime.
  bool decodes_itself = false;
  bool preserve_unknown_fields = false;  // x-kubernetes-preserve-unknown-fields
  bool format_byte = false;              // format "byte"
  bool format_int64 = false;             // format "int64"
  const json::object* properties = nullptr;
  const json::object* additional_properties = nullptr;
  const json::object* items = nullptr;
};

class SchemaSet {
 public:
  // The definitions embedded in this binary, parsed on first use. Never
  // fails: the embedded text is checked at build time, and a parse failure
  // would be a build defect, which aborts with a message.
  static const SchemaSet& Builtin();
  // A set over `definitions_json`, a JSON object of name -> schema (tests
  // and tools). BadRequest when it is not a JSON object.
  static StatusOr<SchemaSet> FromJson(std::string_view definitions_json);

  explicit SchemaSet(json::object definitions);
  // Movable, not copyable: the nodes point into the definitions.
  SchemaSet(SchemaSet&&) = default;
  SchemaSet& operator=(SchemaSet&&) = default;
  SchemaSet(const SchemaSet&) = delete;
  SchemaSet& operator=(const SchemaSet&) = delete;

  // Every definition, by name.
  const json::object& Definitions() const { return definitions_; }
  // The definition called `name`; nullptr when there is none.
  const json::object* Definition(std::string_view name) const;
  // The name of the definition whose x-kubernetes-group-version-kind lists
  // group/version/kind ("" is the core group); nullptr when none does.
  const std::string* DefinitionFor(std::string_view group, std::string_view version,
                                   std::string_view kind) const;

  // Checks `obj` against definition `definition_name` the way
  // kube-apiserver decodes a request body into its Go type, appending what
  // it finds to `out`. null is accepted anywhere (Go decodes it as the zero
  // value); fields of type object without properties (RawExtension,
  // FieldsV1) and fields marked x-kubernetes-preserve-unknown-fields accept
  // anything. An unknown definition name checks nothing.
  void Check(std::string_view definition_name, const json::value& obj, CheckResult* out) const;
  // The same for an object, without copying it into a json::value.
  void Check(std::string_view definition_name, const json::object& obj, CheckResult* out) const;

  // The strategic-merge lookup for objects of definition `definition_name`:
  // a path of field names from the root, list positions elided, gives that
  // field's x-kubernetes-patch-strategy and x-kubernetes-patch-merge-key
  // ({} for unknown paths). The lookup refers to this set, which must
  // outlive it.
  PatchInfoLookup PatchInfo(std::string_view definition_name) const;

  // `schema` described: found once, when the set was built, for every
  // schema object of its definitions (a walk then costs one lookup per
  // field instead of a search per keyword); made now for any other.
  SchemaNode Node(const json::object& schema) const;

 private:
  FieldPatchInfo LookupPatchInfo(const std::string& root,
                                 const std::vector<std::string>& path) const;

  // Adds `schema` and the schemas inside it (properties, items,
  // additionalProperties) to nodes_.
  void AddNodes(const json::object& schema);
  SchemaNode MakeNode(const json::object& schema) const;

  json::object definitions_;
  // Every schema object in definitions_, by address. A moved set keeps
  // them: a json::object's members stay where they are when it moves.
  std::unordered_map<const json::object*, SchemaNode> nodes_;
  // "group/version/kind" -> definition name.
  std::map<std::string, std::string, std::less<>> by_gvk_;
};

// Follows `schema`'s "$ref" chain through `definitions`; returns `schema`
// itself when it has no $ref and nullptr when a $ref does not resolve.
// `*ref_name`, when given, receives the last definition name followed
// ("" when none), a view into `definitions`.
const json::object* ResolveSchema(const json::object& definitions, const json::object& schema,
                                  std::string_view* ref_name = nullptr);

// The 400 kube-apiserver answers when a body for `kind` in `version` does not
// decode: the first type error, or, when `strict` (fieldValidation=Strict)
// and there is no type error, the unknown fields:
//   Deployment in version "v1" cannot be handled as a Deployment: json:
//   cannot unmarshal string into Go struct field ...
//   Deployment in version "v1" cannot be handled as a Deployment: strict
//   decoding error: unknown field "spec.replicass", unknown field "..."
// OK when there is nothing to report.
Status DecodeError(std::string_view kind, std::string_view version, const CheckResult& result,
                   bool strict);

// The Warning header texts for fieldValidation=Warn, one per unknown field:
// `unknown field "spec.replicass"`.
std::vector<std::string> UnknownFieldWarnings(const CheckResult& result);

}  // namespace flotilla::api
