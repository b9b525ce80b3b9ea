// SchemaSet::Check: a walk of an object against its definition that reports
// what kube-apiserver's decoder (sigs.k8s.io/json, case-sensitive, strict)
// would: wrong JSON types with the Go wording, the errors of the types that
// decode themselves (IntOrString, Quantity, Time, []byte), and unknown
// fields with the strict decoder's paths.
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>

#include "api/schema.h"

namespace flotilla::api {
namespace {

constexpr std::string_view kQuantityFormatError =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr std::string_view kQuantitySuffixError = "unable to parse quantity's suffix";
constexpr int kMaxDepth = 64;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The number as Go would quote it in "number <literal>".
std::string NumberText(const json::value& v) {
  if (v.is_int64()) return std::to_string(v.get_int64());
  if (v.is_uint64()) return std::to_string(v.get_uint64());
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v.get_double());
  std::string text(buf, res.ptr);
  // The literal's own spelling is gone; "1.0" is the likeliest for 1.
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

// How Go's decoder names a JSON value's kind in "cannot unmarshal <kind>".
std::string ValueKind(const json::value& v) {
  if (v.is_string()) return "string";
  if (v.is_bool()) return "bool";
  if (v.is_array()) return "array";
  if (v.is_object()) return "object";
  return "number";
}

// Whether an integer value fits a Go int32 (or int64).
bool FitsInteger(const json::value& v, bool int64) {
  int64_t lo = int64 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int32_t>::min();
  int64_t hi = int64 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int32_t>::max();
  if (v.is_int64()) return v.get_int64() >= lo && v.get_int64() <= hi;
  if (v.is_uint64()) return v.get_uint64() <= static_cast<uint64_t>(hi);
  return false;
}

// The suffix of a quantity, as resource.ParseQuantity accepts it.
bool ValidQuantitySuffix(std::string_view s) {
  static constexpr std::string_view kSuffixes[] = {"",  "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n",
                                                   "u", "m",  "k",  "M",  "G",  "T",  "P",  "E"};
  for (std::string_view k : kSuffixes) {
    if (s == k) return true;
  }
  if (s.size() < 2 || (s[0] != 'e' && s[0] != 'E')) return false;
  size_t i = (s[1] == '+' || s[1] == '-') ? 2 : 1;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (!IsDigit(s[i])) return false;
  }
  return true;
}

// resource.ParseQuantity's verdict on `s` (already trimmed): nullopt when
// it parses, else its error text.
std::optional<std::string_view> QuantityError(std::string_view s) {
  if (s.empty()) return kQuantityFormatError;
  size_t pos = (s[0] == '+' || s[0] == '-') ? 1 : 0;
  while (pos < s.size() && IsDigit(s[pos])) ++pos;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    while (pos < s.size() && IsDigit(s[pos])) ++pos;
  }
  size_t suffix_start = pos;
  while (pos < s.size() &&
         std::string_view("eEinumkKMGTP").find(s[pos]) != std::string_view::npos) {
    ++pos;
  }
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) ++pos;
  while (pos < s.size() && IsDigit(s[pos])) ++pos;
  if (pos < s.size()) return kQuantityFormatError;
  if (!ValidQuantitySuffix(s.substr(suffix_start))) return kQuantitySuffixError;
  return std::nullopt;
}

bool IsBase64Char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || IsDigit(c) || c == '+' || c == '/';
}

size_t SkipNewlines(std::string_view s, size_t i) {
  while (i < s.size() && (s[i] == '\n' || s[i] == '\r')) ++i;
  return i;
}

// The offset Go's base64.StdEncoding.Decode reports as "illegal base64 data
// at input byte N" (padding required, CR and LF ignored); nullopt when `s`
// decodes.
std::optional<size_t> Base64ErrorOffset(std::string_view s) {
  size_t si = 0;
  while (true) {
    int j = 0;
    while (j < 4) {
      if (si == s.size()) {
        if (j == 0) return std::nullopt;
        return si - j;
      }
      char c = s[si++];
      if (IsBase64Char(c)) {
        ++j;
      } else if (c != '\n' && c != '\r') {
        if (c != '=' || j < 2) return si - 1;
        if (j == 2) {
          si = SkipNewlines(s, si);
          if (si == s.size()) return s.size();
          if (s[si] != '=') return si - 1;
          ++si;
        }
        si = SkipNewlines(s, si);
        if (si < s.size()) return si;
        return std::nullopt;
      }
    }
  }
}

// Go's reflect name of the type a schema decodes into ("int32",
// "[]v1.Container", "map[string]string", "v1.DeploymentSpec").
std::string GoTypeName(const json::object& definitions, const json::object& schema) {
  std::string_view ref;
  const json::object* s = ResolveSchema(definitions, schema, &ref);
  if (s == nullptr) return "interface {}";
  std::string_view type = GetString(*s, "type").value_or("");
  std::string_view format = GetString(*s, "format").value_or("");
  if (type == "array") {
    const json::object* items = GetObject(*s, "items");
    return "[]" + (items ? GoTypeName(definitions, *items) : std::string("interface {}"));
  }
  if (!ref.empty() && type == "object" && GetObject(*s, "properties") != nullptr) {
    size_t last = ref.rfind('.');
    size_t pkg = last == std::string::npos ? std::string::npos : ref.rfind('.', last - 1);
    return std::string(pkg == std::string::npos ? ref : ref.substr(pkg + 1));
  }
  if (type == "object") {
    const json::object* ap = GetObject(*s, "additionalProperties");
    return ap ? "map[string]" + GoTypeName(definitions, *ap) : std::string("interface {}");
  }
  if (type == "string") return format == "byte" ? "[]uint8" : "string";
  if (type == "integer") return format == "int64" ? "int64" : "int32";
  if (type == "number") return "float64";
  if (type == "boolean") return "bool";
  return "interface {}";
}

// Where a value is in the object: each level names its parent, on the
// walk's stack, and the text ("spec.containers[0].image") is built only
// for an error.
struct Where {
  static constexpr size_t kNoIndex = static_cast<size_t>(-1);
  const Where* parent = nullptr;
  std::string_view key;     // a member's name; or
  size_t index = kNoIndex;  // an item's index (neither: the root)

  std::string Text() const {
    std::string out = parent != nullptr ? parent->Text() : std::string();
    if (index != kNoIndex) return out + "[" + std::to_string(index) + "]";
    if (key.empty() && parent == nullptr) return out;
    if (!out.empty()) out += ".";
    out.append(key);
    return out;
  }
};

class Checker {
 public:
  Checker(const SchemaSet& set, CheckResult* out)
      : set_(set), definitions_(set.Definitions()), out_(out) {}

  // Checks `v` against the field schema `schema` (which may be a $ref).
  void Value(const json::object& schema, const json::value& v, const Where& path) {
    if (v.is_null() || depth_ > kMaxDepth) return;
    SchemaNode n = set_.Node(schema);
    if (n.resolved == nullptr) return;
    if (n.decodes_itself) return SelfDecoded(n.ref, v, path);
    using Type = SchemaNode::Type;
    switch (n.type) {
      case Type::kObject:
        return Object(schema, n, v, path);
      case Type::kArray:
        return Array(schema, n, v, path);
      case Type::kString:
        return String(n, v, path);
      case Type::kInteger:
        return Integer(n, v, path);
      case Type::kNumber:
        if (!v.is_number()) TypeError(ValueKind(v), "float64", path);
        return;
      case Type::kBoolean:
        if (!v.is_bool()) TypeError(ValueKind(v), "bool", path);
        return;
      case Type::kOther:
        return;
    }
  }

  // Value for a whole object of definition `name`, which a struct's
  // schema checks in place; any other schema gets the object as a value
  // (a copy).
  void Root(std::string_view name, const json::object& definition, const json::object& obj) {
    SchemaNode n = set_.Node(definition);
    if (n.ref.empty()) n.ref = name;
    if (n.properties != nullptr && n.type == SchemaNode::Type::kObject && !n.decodes_itself) {
      ++depth_;
      Struct(n, obj, Where{});
      --depth_;
      return;
    }
    Value(RefTo(name), json::value(obj), Where{});
  }

  // A schema that is only a $ref to definition `name`.
  static json::object RefTo(std::string_view name) {
    return json::object{{"$ref", "#/definitions/" + std::string(name)}};
  }

 private:
  void SelfDecoded(std::string_view ref, const json::value& v, const Where& path) {
    if (ref == kQuantityDefinition) return Quantity(v, path);
    if (ref == kTimeDefinition || ref == kMicroTimeDefinition) {
      if (!v.is_string()) TypeError(ValueKind(v), "string", path);
      return;
    }
    IntOrString(v, path);
  }

  void Object(const json::object& field, const SchemaNode& n, const json::value& v,
              const Where& path) {
    // RawExtension, FieldsV1, interface{}
    if (n.properties == nullptr && n.additional_properties == nullptr) return;
    if (!v.is_object()) return TypeError(ValueKind(v), GoTypeName(definitions_, field), path);
    ++depth_;
    if (n.properties != nullptr) {
      Struct(n, v.get_object(), path);
    } else {
      for (const auto& [key, member] : v.get_object()) {
        Value(*n.additional_properties, member, Where{&path, key});
      }
    }
    --depth_;
  }

  // `n` has properties.
  void Struct(const SchemaNode& n, const json::object& obj, const Where& path) {
    // An inline object schema has no Go type name of its own here: keep the
    // enclosing struct's, as the closest the message can get.
    std::string_view struct_name = n.ref.empty() ? go_struct_ : n.ref.substr(n.ref.rfind('.') + 1);
    for (const auto& [key, member] : obj) {
      Where child{&path, key};
      const json::value* prop = n.properties->if_contains(key);
      if (prop == nullptr || !prop->is_object()) {
        if (!n.preserve_unknown_fields) out_->unknown_fields.push_back(child.Text());
        continue;
      }
      std::string_view saved_struct = go_struct_;
      go_struct_ = struct_name;
      go_fields_.push_back(key);
      Value(prop->get_object(), member, child);
      go_fields_.pop_back();
      go_struct_ = saved_struct;
    }
  }

  void Array(const json::object& field, const SchemaNode& n, const json::value& v,
             const Where& path) {
    if (!v.is_array()) return TypeError(ValueKind(v), GoTypeName(definitions_, field), path);
    const json::object* items = n.items;
    if (items == nullptr) return;
    ++depth_;
    const json::array& a = v.get_array();
    for (size_t i = 0; i < a.size(); ++i) {
      Value(*items, a[i], Where{&path, {}, i});
    }
    --depth_;
  }

  void String(const SchemaNode& n, const json::value& v, const Where& path) {
    bool bytes = n.format_byte;
    if (!v.is_string()) return TypeError(ValueKind(v), bytes ? "[]uint8" : "string", path);
    if (!bytes) return;
    if (auto offset = Base64ErrorOffset(v.get_string())) {
      Error("illegal base64 data at input byte " + std::to_string(*offset), path);
    }
  }

  void Integer(const SchemaNode& n, const json::value& v, const Where& path) {
    bool int64 = n.format_int64;
    const char* go_type = int64 ? "int64" : "int32";
    if (!v.is_number()) return TypeError(ValueKind(v), go_type, path);
    if (!FitsInteger(v, int64)) TypeError("number " + NumberText(v), go_type, path);
  }

  // intstr.IntOrString decodes a string as is and anything else as int32.
  void IntOrString(const json::value& v, const Where& path) {
    if (v.is_string()) return;
    if (!v.is_number()) return TypeError(ValueKind(v), "int32", path);
    if (!FitsInteger(v, false)) TypeError("number " + NumberText(v), "int32", path);
  }

  // resource.Quantity parses the string, or the number's text.
  void Quantity(const json::value& v, const Where& path) {
    std::string text;
    if (v.is_string()) {
      std::string_view s = v.get_string();
      size_t b = s.find_first_not_of(" \t\n\r\v\f");
      size_t e = s.find_last_not_of(" \t\n\r\v\f");
      text = b == std::string_view::npos ? "" : std::string(s.substr(b, e - b + 1));
    } else if (v.is_number()) {
      text = NumberText(v);
    }
    if (auto error = QuantityError(text)) Error(std::string(*error), path);
  }

  // Go's UnmarshalTypeError, with the struct context the decoder adds.
  void TypeError(const std::string& value_kind, const std::string& go_type, const Where& path) {
    std::string message = "json: cannot unmarshal " + value_kind + " into Go ";
    if (go_fields_.empty()) {
      message += "value";
    } else {
      message += "struct field ";
      message.append(go_struct_).append(".");
      for (size_t i = 0; i < go_fields_.size(); ++i) {
        if (i > 0) message += ".";
        message.append(go_fields_[i]);
      }
    }
    Error(message + " of type " + go_type, path);
  }

  void Error(std::string message, const Where& path) {
    out_->type_errors.push_back({"FieldValueTypeInvalid", std::move(message), path.Text()});
  }

  const SchemaSet& set_;
  const json::object& definitions_;
  CheckResult* out_;
  std::vector<std::string_view> go_fields_;  // Go's error context: field names
  std::string_view go_struct_;               // and the innermost struct type
  int depth_ = 0;
};

}  // namespace

void SchemaSet::Check(std::string_view definition_name, const json::value& obj,
                      CheckResult* out) const {
  if (Definition(definition_name) == nullptr) return;
  Checker(*this, out).Value(Checker::RefTo(definition_name), obj, Where{});
}

void SchemaSet::Check(std::string_view definition_name, const json::object& obj,
                      CheckResult* out) const {
  const json::object* definition = Definition(definition_name);
  if (definition == nullptr) return;
  Checker(*this, out).Root(definition_name, *definition, obj);
}

}  // namespace flotilla::api
