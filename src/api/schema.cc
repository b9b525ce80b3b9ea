#include "api/schema.h"

#include <cstdio>
#include <cstdlib>

#include "api/schemas/embedded.h"

namespace flotilla::api {
namespace {

constexpr std::string_view kRefPrefix = "#/definitions/";
// Longer $ref chains than this mean a cycle of aliases.
constexpr int kMaxRefHops = 32;

std::string GvkKey(std::string_view group, std::string_view version, std::string_view kind) {
  std::string key(group);
  key.append("/").append(version).append("/").append(kind);
  return key;
}

std::string StringMember(const json::object& o, std::string_view key) {
  auto s = GetString(o, key);
  return s ? std::string(*s) : std::string();
}

// The schema a path step continues in: lists are elided from patch paths,
// so an array stands for its items.
const json::object* SkipArrays(const json::object& definitions, const json::object* schema) {
  for (int i = 0; schema != nullptr && i < kMaxRefHops; ++i) {
    if (GetString(*schema, "type") != "array") return schema;
    const json::object* items = GetObject(*schema, "items");
    schema = items == nullptr ? nullptr : ResolveSchema(definitions, *items);
  }
  return schema;
}

}  // namespace

const json::object* ResolveSchema(const json::object& definitions, const json::object& schema,
                                  std::string_view* ref_name) {
  if (ref_name != nullptr) *ref_name = {};
  const json::object* cur = &schema;
  for (int i = 0; i < kMaxRefHops; ++i) {
    auto ref = GetString(*cur, "$ref");
    if (!ref) return cur;
    if (ref->substr(0, kRefPrefix.size()) != kRefPrefix) return nullptr;
    std::string_view name = ref->substr(kRefPrefix.size());
    const json::value* next = definitions.if_contains(name);
    if (next == nullptr || !next->is_object()) return nullptr;
    if (ref_name != nullptr) *ref_name = name;
    cur = &next->get_object();
  }
  return nullptr;
}

SchemaSet::SchemaSet(json::object definitions) : definitions_(std::move(definitions)) {
  for (const auto& [name, schema] : definitions_) {
    if (!schema.is_object()) continue;
    AddNodes(schema.get_object());
    const json::array* gvks = GetArray(schema.get_object(), "x-kubernetes-group-version-kind");
    if (gvks == nullptr) continue;
    for (const json::value& gvk : *gvks) {
      if (!gvk.is_object()) continue;
      const json::object& g = gvk.get_object();
      by_gvk_.emplace(
          GvkKey(StringMember(g, "group"), StringMember(g, "version"), StringMember(g, "kind")),
          std::string(name));
    }
  }
}

void SchemaSet::AddNodes(const json::object& schema) {
  if (!nodes_.emplace(&schema, MakeNode(schema)).second) return;
  if (const json::object* props = GetObject(schema, "properties")) {
    for (const auto& [name, field] : *props) {
      if (field.is_object()) AddNodes(field.get_object());
    }
  }
  for (std::string_view inner : {"items", "additionalProperties"}) {
    if (const json::object* o = GetObject(schema, inner)) AddNodes(*o);
  }
}

SchemaNode SchemaSet::MakeNode(const json::object& schema) const {
  SchemaNode n;
  n.resolved = ResolveSchema(definitions_, schema, &n.ref);
  if (n.resolved == nullptr) return n;
  const json::object& s = *n.resolved;
  std::string_view type = GetString(s, "type").value_or("");
  using Type = SchemaNode::Type;
  n.type = type == "object"    ? Type::kObject
           : type == "array"   ? Type::kArray
           : type == "string"  ? Type::kString
           : type == "integer" ? Type::kInteger
           : type == "number"  ? Type::kNumber
           : type == "boolean" ? Type::kBoolean
                               : Type::kOther;
  n.decodes_itself = n.ref == kIntOrStringDefinition || n.ref == kQuantityDefinition ||
                     n.ref == kTimeDefinition || n.ref == kMicroTimeDefinition ||
                     s.contains("x-kubernetes-int-or-string");
  n.preserve_unknown_fields = GetBool(s, "x-kubernetes-preserve-unknown-fields").value_or(false);
  std::string_view format = GetString(s, "format").value_or("");
  n.format_byte = format == "byte";
  n.format_int64 = format == "int64";
  n.properties = GetObject(s, "properties");
  n.additional_properties = GetObject(s, "additionalProperties");
  n.items = GetObject(s, "items");
  return n;
}

SchemaNode SchemaSet::Node(const json::object& schema) const {
  auto it = nodes_.find(&schema);
  return it != nodes_.end() ? it->second : MakeNode(schema);
}

StatusOr<SchemaSet> SchemaSet::FromJson(std::string_view definitions_json) {
  FLOTILLA_ASSIGN_OR_RETURN(json::object definitions, ParseJsonObject(definitions_json));
  return SchemaSet(std::move(definitions));
}

const SchemaSet& SchemaSet::Builtin() {
  static const SchemaSet kBuiltin = [] {
    std::string text;
    for (size_t i = 0; i < schemas::kEmbeddedDefinitionPartCount; ++i) {
      text += schemas::kEmbeddedDefinitionParts[i];
    }
    StatusOr<SchemaSet> set = FromJson(text);
    if (!set.ok()) {
      std::fprintf(stderr, "flotilla: the embedded OpenAPI definitions do not parse: %s\n",
                   set.status().ToString().c_str());
      std::abort();
    }
    return std::move(set).value();
  }();
  return kBuiltin;
}

const json::object* SchemaSet::Definition(std::string_view name) const {
  const json::value* v = definitions_.if_contains(name);
  return v != nullptr && v->is_object() ? &v->get_object() : nullptr;
}

const std::string* SchemaSet::DefinitionFor(std::string_view group, std::string_view version,
                                            std::string_view kind) const {
  auto it = by_gvk_.find(GvkKey(group, version, kind));
  return it == by_gvk_.end() ? nullptr : &it->second;
}

PatchInfoLookup SchemaSet::PatchInfo(std::string_view definition_name) const {
  return [this, root = std::string(definition_name)](const std::vector<std::string>& path) {
    return LookupPatchInfo(root, path);
  };
}

FieldPatchInfo SchemaSet::LookupPatchInfo(const std::string& root,
                                          const std::vector<std::string>& path) const {
  const json::object* node = Definition(root);
  const json::object* field = nullptr;
  for (const std::string& name : path) {
    node = SkipArrays(definitions_, node);
    if (node == nullptr) return {};
    const json::object* props = GetObject(*node, "properties");
    const json::value* next = props != nullptr ? props->if_contains(name) : nullptr;
    if (next == nullptr) next = node->if_contains("additionalProperties");
    if (next == nullptr || !next->is_object()) return {};
    field = &next->get_object();
    node = ResolveSchema(definitions_, *field);
  }
  if (field == nullptr) return {};
  return {StringMember(*field, "x-kubernetes-patch-strategy"),
          StringMember(*field, "x-kubernetes-patch-merge-key")};
}

Status DecodeError(std::string_view kind, std::string_view version, const CheckResult& result,
                   bool strict) {
  std::string detail;
  if (!result.type_errors.empty()) {
    detail = result.type_errors.front().message;
  } else if (strict && !result.unknown_fields.empty()) {
    detail = "strict decoding error: ";
    for (size_t i = 0; i < result.unknown_fields.size(); ++i) {
      if (i > 0) detail += ", ";
      detail += "unknown field \"" + result.unknown_fields[i] + "\"";
    }
  } else {
    return Status::Ok();
  }
  std::string message(kind);
  message.append(" in version \"").append(version).append("\" cannot be handled as a ");
  message.append(kind).append(": ").append(detail);
  return Status::BadRequest(std::move(message));
}

std::vector<std::string> UnknownFieldWarnings(const CheckResult& result) {
  std::vector<std::string> warnings;
  warnings.reserve(result.unknown_fields.size());
  for (const std::string& field : result.unknown_fields) {
    warnings.push_back("unknown field \"" + field + "\"");
  }
  return warnings;
}

}  // namespace flotilla::api
