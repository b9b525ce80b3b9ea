#include "api/crd/structural.h"

#include <cmath>
#include <set>

#include "api/validation.h"
#include "base/clock.h"

namespace flotilla::api::crd {
namespace {

constexpr const char* kTypes[] = {"object", "array", "string", "integer", "number", "boolean"};

// What the type of a JSON value is called in kube-apiserver's messages.
std::string TypeName(const json::value& v) {
  if (v.is_null()) return "null";
  if (v.is_bool()) return "boolean";
  if (v.is_int64() || v.is_uint64()) return "integer";
  if (v.is_double()) return std::trunc(v.get_double()) == v.get_double() ? "integer" : "number";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  return "object";
}

double NumberOf(const json::value& v) {
  if (v.is_int64()) return static_cast<double>(v.get_int64());
  if (v.is_uint64()) return static_cast<double>(v.get_uint64());
  return v.get_double();
}

std::string Shown(double d) {
  if (std::trunc(d) == d && std::fabs(d) < 1e15) return std::to_string(static_cast<int64_t>(d));
  std::string s = std::to_string(d);
  while (!s.empty() && s.back() == '0') s.pop_back();
  return s;
}

std::string Join(const std::string& path, const std::string& field) {
  return path.empty() ? field : path + "." + field;
}

// ---- parsing ------------------------------------------------------------

class Parser {
 public:
  explicit Parser(std::vector<StatusCause>* causes) : causes_(causes) {}

  std::shared_ptr<const Schema> Node(const json::value& v, const std::string& path, bool root,
                                     bool in_value_validation) {
    auto s = std::make_shared<Schema>();
    if (!v.is_object()) {
      causes_->push_back(FieldInvalid(path, v, "must be a schema object"));
      return s;
    }
    const json::object& o = v.get_object();
    for (const char* forbidden : {"$ref", "patternProperties", "dependencies", "additionalItems",
                                  "definitions", "id", "$schema"}) {
      if (o.contains(forbidden)) {
        causes_->push_back(
            FieldForbidden(path + "." + forbidden, std::string(forbidden) + " is not supported"));
      }
    }
    s->type = String(o, "type");
    s->format = String(o, "format");
    s->nullable = Bool(o, "nullable");
    s->preserve_unknown = Bool(o, "x-kubernetes-preserve-unknown-fields");
    s->int_or_string = Bool(o, "x-kubernetes-int-or-string");
    s->embedded_resource = Bool(o, "x-kubernetes-embedded-resource");
    s->unique_items = Bool(o, "uniqueItems");
    s->exclusive_minimum = Bool(o, "exclusiveMinimum");
    s->exclusive_maximum = Bool(o, "exclusiveMaximum");
    s->list_type = String(o, "x-kubernetes-list-type");
    s->has_cel_rules = o.contains("x-kubernetes-validations");
    if (const json::value* keys = o.if_contains("x-kubernetes-list-map-keys");
        keys && keys->is_array()) {
      for (const json::value& k : keys->get_array()) {
        if (k.is_string()) s->list_map_keys.emplace_back(k.get_string());
      }
    }
    if (!s->type.empty() &&
        std::find(std::begin(kTypes), std::end(kTypes), s->type) == std::end(kTypes)) {
      causes_->push_back(FieldNotSupported(path + ".type", json::string(s->type),
                                           {std::begin(kTypes), std::end(kTypes)}));
    }
    if (s->int_or_string && !s->type.empty()) {
      causes_->push_back(
          FieldForbidden(path + ".type", "must be empty if x-kubernetes-int-or-string is true"));
    }
    if (!in_value_validation && s->type.empty() && !s->int_or_string && !s->preserve_unknown) {
      causes_->push_back(FieldRequired(path + ".type", root ? "must not be empty at the root"
                                                            : "must not be empty for specified "
                                                              "object fields"));
    }
    if (root && !s->type.empty() && s->type != "object") {
      causes_->push_back(
          FieldInvalid(path + ".type", json::string(s->type), "must be object at the root"));
    }
    if (s->embedded_resource && s->type != "object") {
      causes_->push_back(FieldInvalid(path + ".type", json::string(s->type),
                                      "must be object if x-kubernetes-embedded-resource is true"));
    }
    if (in_value_validation) {
      // (A type is let through: x-kubernetes-int-or-string's anyOf of
      // integer and string names them.)
      for (const char* f : {"properties", "items", "additionalProperties", "default", "nullable",
                            "x-kubernetes-preserve-unknown-fields",
                            "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string"}) {
        if (o.contains(f)) {
          causes_->push_back(FieldForbidden(path + "." + f, std::string("must be empty to be "
                                                                        "structural")));
        }
      }
    }
    Numbers(o, path, *s);
    if (const json::value* p = o.if_contains("pattern"); p && p->is_string()) {
      s->pattern_text = std::string(p->get_string());
      try {
        s->pattern.emplace(s->pattern_text, std::regex::ECMAScript);
      } catch (const std::regex_error&) {
        causes_->push_back(
            FieldInvalid(path + ".pattern", *p, "must be a valid regular expression"));
      }
    }
    if (const json::value* e = o.if_contains("enum"); e && e->is_array()) {
      s->enum_values.assign(e->get_array().begin(), e->get_array().end());
    }
    if (const json::value* r = o.if_contains("required"); r && r->is_array()) {
      for (const json::value& f : r->get_array()) {
        if (f.is_string()) s->required.emplace_back(f.get_string());
      }
    }
    if (const json::value* props = o.if_contains("properties"); props && props->is_object()) {
      for (const auto& [name, sub] : props->get_object()) {
        std::string key(name);
        auto child = Node(sub, path + ".properties[" + key + "]", false, in_value_validation);
        s->has_cel_rules = s->has_cel_rules || child->has_cel_rules;
        s->properties[key] = std::move(child);
      }
      if (o.contains("additionalProperties")) {
        causes_->push_back(FieldForbidden(path + ".additionalProperties",
                                          "additionalProperties and properties are mutual "
                                          "exclusive"));
      }
    }
    if (const json::value* ap = o.if_contains("additionalProperties")) {
      if (ap->is_object()) {
        s->additional_properties =
            Node(*ap, path + ".additionalProperties", false, in_value_validation);
        s->has_cel_rules = s->has_cel_rules || s->additional_properties->has_cel_rules;
      } else if (ap->is_bool() && ap->get_bool()) {
        causes_->push_back(FieldForbidden(path + ".additionalProperties",
                                          "must not be true; use "
                                          "x-kubernetes-preserve-unknown-fields"));
      }
    }
    if (const json::value* items = o.if_contains("items")) {
      if (items->is_array()) {
        causes_->push_back(FieldForbidden(path + ".items",
                                          "items must be a schema object and not "
                                          "an array"));
      } else {
        s->items = Node(*items, path + ".items", false, in_value_validation);
        s->has_cel_rules = s->has_cel_rules || s->items->has_cel_rules;
      }
    } else if (s->type == "array" && !in_value_validation) {
      causes_->push_back(FieldRequired(path + ".items", "must be specified"));
    }
    Junctors(o, path, *s);
    if (s->list_type == "map" && s->list_map_keys.empty()) {
      causes_->push_back(FieldRequired(path + ".x-kubernetes-list-map-keys",
                                       "must not be empty if x-kubernetes-list-type is map"));
    }
    if (!s->list_type.empty() && s->list_type != "atomic" && s->list_type != "set" &&
        s->list_type != "map") {
      causes_->push_back(FieldNotSupported(path + ".x-kubernetes-list-type",
                                           json::string(s->list_type), {"atomic", "set", "map"}));
    }
    if (root) Root(o, path);
    if (const json::value* d = o.if_contains("default")) {
      if (root) {
        causes_->push_back(FieldForbidden(path + ".default", "must not be set at the root"));
      } else {
        s->default_value = *d;
      }
    }
    return s;
  }

  // Defaults must validate against their own schema.
  void CheckDefaults(const Schema& s, const std::string& path) {
    if (s.default_value) {
      std::vector<StatusCause> bad;
      ValidateValue(s, *s.default_value, path + ".default", &bad);
      for (StatusCause& c : bad) causes_->push_back(std::move(c));
    }
    for (const auto& [name, child] : s.properties) {
      CheckDefaults(*child, path + ".properties[" + name + "]");
    }
    if (s.items) CheckDefaults(*s.items, path + ".items");
    if (s.additional_properties)
      CheckDefaults(*s.additional_properties, path + ".additionalProperties");
  }

  static void ValidateValue(const Schema& s, const json::value& v, const std::string& path,
                            std::vector<StatusCause>* out);

 private:
  static std::string String(const json::object& o, const char* key) {
    const json::value* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
  }
  static bool Bool(const json::object& o, const char* key) {
    const json::value* v = o.if_contains(key);
    return v && v->is_bool() && v->get_bool();
  }

  void Numbers(const json::object& o, const std::string& path, Schema& s) {
    auto num = [&](const char* key) -> std::optional<double> {
      const json::value* v = o.if_contains(key);
      if (v == nullptr) return std::nullopt;
      if (!v->is_number()) {
        causes_->push_back(FieldTypeInvalid(path + "." + key, *v, "number"));
        return std::nullopt;
      }
      return NumberOf(*v);
    };
    auto count = [&](const char* key) -> std::optional<int64_t> {
      std::optional<double> d = num(key);
      if (!d) return std::nullopt;
      if (*d < 0) {
        causes_->push_back(FieldInvalid(path + "." + key, json::value(*d), "must not be negative"));
      }
      return static_cast<int64_t>(*d);
    };
    s.minimum = num("minimum");
    s.maximum = num("maximum");
    s.multiple_of = num("multipleOf");
    s.min_length = count("minLength");
    s.max_length = count("maxLength");
    s.min_items = count("minItems");
    s.max_items = count("maxItems");
    s.min_properties = count("minProperties");
    s.max_properties = count("maxProperties");
  }

  void Junctors(const json::object& o, const std::string& path, Schema& s) {
    auto list = [&](const char* key, std::vector<std::shared_ptr<const Schema>>& out) {
      const json::value* v = o.if_contains(key);
      if (v == nullptr) return;
      if (!v->is_array()) {
        causes_->push_back(FieldTypeInvalid(path + "." + key, *v, "array"));
        return;
      }
      for (size_t i = 0; i < v->get_array().size(); ++i) {
        out.push_back(
            Node(v->get_array()[i], path + "." + key + "[" + std::to_string(i) + "]", false, true));
      }
    };
    list("allOf", s.all_of);
    list("anyOf", s.any_of);
    list("oneOf", s.one_of);
    if (const json::value* n = o.if_contains("not"))
      s.not_schema = Node(*n, path + ".not", false, true);
  }

  // The root's metadata may say name and generateName only.
  void Root(const json::object& o, const std::string& path) {
    const json::value* props = o.if_contains("properties");
    if (props == nullptr || !props->is_object()) return;
    const json::value* meta = props->get_object().if_contains("metadata");
    if (meta == nullptr || !meta->is_object()) return;
    const std::string mpath = path + ".properties[metadata]";
    for (const auto& [k, sub] : meta->get_object()) {
      if (k == "type") {
        if (!sub.is_string() || sub.get_string() != "object") {
          causes_->push_back(FieldInvalid(mpath + ".type", sub, "must be object"));
        }
      } else if (k == "properties" && sub.is_object()) {
        for (const auto& [field, fs] : sub.get_object()) {
          if (field != "name" && field != "generateName") {
            causes_->push_back(FieldForbidden(
                mpath + ".properties[" + std::string(field) + "]",
                "must not specify anything other than name and generateName, but metadata is "
                "implicitly specified"));
          }
        }
      } else if (k != "description") {
        causes_->push_back(FieldForbidden(
            mpath + "." + std::string(k),
            "must not specify anything other than name and generateName, but metadata is "
            "implicitly specified"));
      }
    }
  }

  std::vector<StatusCause>* causes_;
};

// ---- validation ---------------------------------------------------------

StatusCause InBody(const std::string& path, const json::value& shown, const std::string& what) {
  StatusCause c = FieldInvalid(path, shown, path + " in body " + what);
  return c;
}

bool TypeMatches(const Schema& s, const json::value& v) {
  if (s.int_or_string) return v.is_string() || TypeName(v) == "integer";
  if (s.type.empty()) return true;
  std::string t = TypeName(v);
  if (s.type == "number") return t == "integer" || t == "number";
  return t == s.type;
}

bool ValidFormat(const std::string& format, const json::value& v) {
  if (format == "int32" && TypeName(v) == "integer") {
    double d = NumberOf(v);
    return d >= -2147483648.0 && d <= 2147483647.0;
  }
  if (!v.is_string()) return true;
  std::string s(v.get_string());
  if (format == "date-time") {
    TimePoint t;
    return ParseRfc3339(s, &t);
  }
  if (format == "date") {
    static const std::regex kDate("^[0-9]{4}-[0-9]{2}-[0-9]{2}$");
    return std::regex_match(s, kDate);
  }
  if (format == "uuid") {
    static const std::regex kUuid(
        "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$");
    return std::regex_match(s, kUuid);
  }
  if (format == "byte") {
    static const std::regex kBase64("^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$");
    return std::regex_match(s, kBase64);
  }
  return true;
}

void Parser::ValidateValue(const Schema& s, const json::value& v, const std::string& path,
                           std::vector<StatusCause>* out) {
  if (v.is_null()) {
    if (s.nullable || (s.type.empty() && !s.int_or_string)) return;
    std::string want = s.int_or_string ? "integer,string" : s.type;
    out->push_back(InBody(path, json::string("null"), "must be of type " + want + ": \"null\""));
    return;
  }
  if (!TypeMatches(s, v)) {
    std::string want = s.int_or_string ? "integer,string" : s.type;
    std::string got = TypeName(v);
    out->push_back(
        InBody(path, json::string(got), "must be of type " + want + ": \"" + got + "\""));
    return;
  }
  if (!s.format.empty() && !ValidFormat(s.format, v)) {
    out->push_back(InBody(path, v, "must be of type " + s.format + ": " + FormatBadValue(v)));
  }
  if (!s.enum_values.empty() &&
      std::find(s.enum_values.begin(), s.enum_values.end(), v) == s.enum_values.end()) {
    std::vector<std::string> supported;
    for (const json::value& e : s.enum_values) {
      supported.push_back(e.is_string() ? std::string(e.get_string()) : json::serialize(e));
    }
    out->push_back(FieldNotSupported(path, v, supported));
  }
  if (v.is_number()) {
    double d = NumberOf(v);
    if (s.minimum && (s.exclusive_minimum ? d <= *s.minimum : d < *s.minimum)) {
      out->push_back(InBody(path, v,
                            std::string("should be greater than ") +
                                (s.exclusive_minimum ? "" : "or equal to ") + Shown(*s.minimum)));
    }
    if (s.maximum && (s.exclusive_maximum ? d >= *s.maximum : d > *s.maximum)) {
      out->push_back(InBody(path, v,
                            std::string("should be less than ") +
                                (s.exclusive_maximum ? "" : "or equal to ") + Shown(*s.maximum)));
    }
    if (s.multiple_of && *s.multiple_of > 0 &&
        std::fabs(std::remainder(d, *s.multiple_of)) > 1e-9) {
      out->push_back(InBody(path, v, "should be a multiple of " + Shown(*s.multiple_of)));
    }
  }
  if (v.is_string()) {
    std::string str(v.get_string());
    // Lengths count characters (runes), not bytes.
    int64_t runes = 0;
    for (unsigned char c : str) runes += (c & 0xC0) != 0x80;
    if (s.max_length && runes > *s.max_length) {
      StatusCause c = FieldTooLong(path, *s.max_length);
      out->push_back(std::move(c));
    }
    if (s.min_length && runes < *s.min_length) {
      out->push_back(
          InBody(path, v, "should be at least " + std::to_string(*s.min_length) + " chars long"));
    }
    if (s.pattern && !std::regex_search(str, *s.pattern)) {
      out->push_back(InBody(path, v, "should match '" + s.pattern_text + "'"));
    }
  }
  if (v.is_array()) {
    const json::array& a = v.get_array();
    int64_t n = static_cast<int64_t>(a.size());
    if (s.max_items && n > *s.max_items) {
      out->push_back({"FieldValueTooMany",
                      "Too many: " + std::to_string(n) + ": must have at most " +
                          std::to_string(*s.max_items) + " items",
                      path});
    }
    if (s.min_items && n < *s.min_items) {
      out->push_back(
          InBody(path, v, "should have at least " + std::to_string(*s.min_items) + " items"));
    }
    if (s.unique_items || s.list_type == "set") {
      for (size_t i = 1; i < a.size(); ++i) {
        if (std::find(a.begin(), a.begin() + i, a[i]) != a.begin() + i) {
          out->push_back(FieldDuplicate(path + "[" + std::to_string(i) + "]", a[i]));
        }
      }
    }
    if (s.list_type == "map") {
      std::set<std::string> seen;
      for (size_t i = 0; i < a.size(); ++i) {
        if (!a[i].is_object()) continue;
        json::object key;
        for (const std::string& k : s.list_map_keys) {
          if (const json::value* kv = a[i].get_object().if_contains(k)) key[k] = *kv;
        }
        if (!seen.insert(json::serialize(key)).second) {
          out->push_back(FieldDuplicate(path + "[" + std::to_string(i) + "]", key));
        }
      }
    }
    if (s.items) {
      for (size_t i = 0; i < a.size(); ++i) {
        ValidateValue(*s.items, a[i], path + "[" + std::to_string(i) + "]", out);
      }
    }
  }
  if (v.is_object()) {
    const json::object& o = v.get_object();
    int64_t n = static_cast<int64_t>(o.size());
    if (s.max_properties && n > *s.max_properties) {
      out->push_back({"FieldValueTooMany",
                      "Too many: " + std::to_string(n) + ": must have at most " +
                          std::to_string(*s.max_properties) + " items",
                      path});
    }
    if (s.min_properties && n < *s.min_properties) {
      out->push_back(
          InBody(path, json::string("object"),
                 "should have at least " + std::to_string(*s.min_properties) + " properties"));
    }
    for (const std::string& r : s.required) {
      if (!o.contains(r)) out->push_back(FieldRequired(Join(path, r), ""));
    }
    for (const auto& [k, child] : o) {
      std::string key(k);
      if (auto it = s.properties.find(key); it != s.properties.end()) {
        ValidateValue(*it->second, child, Join(path, key), out);
      } else if (s.additional_properties) {
        ValidateValue(*s.additional_properties, child, Join(path, key), out);
      }
    }
    if (s.embedded_resource) {
      for (const char* f : {"apiVersion", "kind"}) {
        const json::value* fv = o.if_contains(f);
        if (fv == nullptr || !fv->is_string() || fv->get_string().empty()) {
          out->push_back(FieldRequired(Join(path, f), "must not be empty"));
        }
      }
    }
  }
  for (const auto& sub : s.all_of) ValidateValue(*sub, v, path, out);
  if (!s.any_of.empty()) {
    bool any = false;
    for (const auto& sub : s.any_of) {
      std::vector<StatusCause> bad;
      ValidateValue(*sub, v, path, &bad);
      any = any || bad.empty();
    }
    if (!any) out->push_back(InBody(path, v, "must validate at least one schema (anyOf)"));
  }
  if (!s.one_of.empty()) {
    int passed = 0;
    for (const auto& sub : s.one_of) {
      std::vector<StatusCause> bad;
      ValidateValue(*sub, v, path, &bad);
      passed += bad.empty();
    }
    if (passed != 1)
      out->push_back(InBody(path, v, "must validate one and only one schema (oneOf)"));
  }
  if (s.not_schema) {
    std::vector<StatusCause> bad;
    ValidateValue(*s.not_schema, v, path, &bad);
    if (bad.empty()) out->push_back(InBody(path, v, "must not validate the schema (not)"));
  }
}

// ---- pruning and defaulting -------------------------------------------

void PruneValue(const Schema& s, json::value& v, const std::string& path, bool root,
                std::vector<std::string>* unknown) {
  if (v.is_array() && s.items) {
    json::array& a = v.get_array();
    for (size_t i = 0; i < a.size(); ++i) {
      PruneValue(*s.items, a[i], path + "[" + std::to_string(i) + "]", false, unknown);
    }
    return;
  }
  if (!v.is_object()) return;
  json::object& o = v.get_object();
  std::vector<std::string> drop;
  for (auto& [k, child] : o) {
    std::string key(k);
    if ((root || s.embedded_resource) &&
        (key == "apiVersion" || key == "kind" || key == "metadata")) {
      continue;
    }
    if (auto it = s.properties.find(key); it != s.properties.end()) {
      PruneValue(*it->second, child, Join(path, key), false, unknown);
    } else if (s.additional_properties) {
      PruneValue(*s.additional_properties, child, Join(path, key), false, unknown);
    } else if (!s.preserve_unknown) {
      if (unknown != nullptr) unknown->push_back(Join(path, key));
      drop.push_back(key);
    }
  }
  for (const std::string& key : drop) o.erase(key);
}

void DefaultValue(const Schema& s, json::value& v) {
  if (v.is_array() && s.items) {
    for (json::value& e : v.get_array()) DefaultValue(*s.items, e);
    return;
  }
  if (!v.is_object()) return;
  json::object& o = v.get_object();
  for (const auto& [key, child] : s.properties) {
    json::value* present = o.if_contains(key);
    if (child->default_value && (present == nullptr || (present->is_null() && !child->nullable))) {
      o[key] = *child->default_value;
      present = o.if_contains(key);
    }
    if (present != nullptr) DefaultValue(*child, *present);
  }
  if (s.additional_properties) {
    for (auto& [k, child] : o) DefaultValue(*s.additional_properties, child);
  }
}

void PublishValue(json::value& v, bool v2) {
  if (v.is_array()) {
    for (json::value& e : v.get_array()) PublishValue(e, v2);
    return;
  }
  if (!v.is_object()) return;
  json::object& o = v.get_object();
  if (v2) {
    for (const char* f : {"nullable", "oneOf", "anyOf", "allOf", "not"}) o.erase(f);
    if (const json::value* ios = o.if_contains("x-kubernetes-int-or-string");
        ios && ios->is_bool() && ios->get_bool()) {
      o.erase("type");
    }
  }
  for (const char* f : {"properties", "additionalProperties"}) {
    json::value* sub = o.if_contains(f);
    if (sub == nullptr || !sub->is_object()) continue;
    if (std::string(f) == "properties") {
      for (auto& [k, child] : sub->get_object()) PublishValue(child, v2);
    } else {
      PublishValue(*sub, v2);
    }
  }
  if (json::value* items = o.if_contains("items")) PublishValue(*items, v2);
  for (const char* f : {"oneOf", "anyOf", "allOf"}) {
    if (json::value* sub = o.if_contains(f)) PublishValue(*sub, v2);
  }
  if (json::value* n = o.if_contains("not")) PublishValue(*n, v2);
}

}  // namespace

std::shared_ptr<const Schema> ParseStructural(const json::value& schema, const std::string& path,
                                              std::vector<StatusCause>* causes) {
  size_t before = causes->size();
  Parser parser(causes);
  std::shared_ptr<const Schema> root = parser.Node(schema, path, true, false);
  if (causes->size() != before) return nullptr;
  parser.CheckDefaults(*root, path);
  if (causes->size() != before) return nullptr;
  return root;
}

void Prune(const Schema& schema, json::object& obj, std::vector<std::string>* unknown) {
  json::value v(std::move(obj));
  PruneValue(schema, v, "", true, unknown);
  obj = std::move(v.get_object());
}

void Default(const Schema& schema, json::object& obj) {
  json::value v(std::move(obj));
  DefaultValue(schema, v);
  obj = std::move(v.get_object());
}

std::vector<StatusCause> Validate(const Schema& schema, const json::object& obj) {
  std::vector<StatusCause> out;
  // The root's apiVersion, kind and metadata are the server's: the rest is
  // checked field by field against the root's properties.
  auto servers = [](std::string_view f) {
    return f == "apiVersion" || f == "kind" || f == "metadata";
  };
  for (const std::string& r : schema.required) {
    if (!servers(r) && !obj.contains(r)) out.push_back(FieldRequired(r, ""));
  }
  for (const auto& [k, child] : obj) {
    if (servers(k)) continue;
    std::string key(k);
    if (auto it = schema.properties.find(key); it != schema.properties.end()) {
      Parser::ValidateValue(*it->second, child, key, &out);
    } else if (schema.additional_properties) {
      Parser::ValidateValue(*schema.additional_properties, child, key, &out);
    }
  }
  return out;
}

json::object Published(const json::value& schema, bool v2, const std::string& objectmeta_ref) {
  json::value v = schema.is_object() ? schema : json::value(json::object{});
  PublishValue(v, v2);
  json::object& o = v.get_object();
  json::object& props = o["properties"].is_object()
                            ? o["properties"].get_object()
                            : (o["properties"] = json::object{}).get_object();
  props["apiVersion"] = json::object{
      {"type", "string"},
      {"description",
       "APIVersion defines the versioned schema of this representation of an object."}};
  props["kind"] = json::object{{"type", "string"},
                               {"description",
                                "Kind is a string value representing the REST resource this object "
                                "represents."}};
  json::object meta{{"description", "Standard object's metadata."}};
  if (v2) {
    meta["$ref"] = objectmeta_ref;
  } else {
    meta["allOf"] = json::array{json::object{{"$ref", objectmeta_ref}}};
  }
  props["metadata"] = std::move(meta);
  if (!o.contains("type")) o["type"] = "object";
  return o;
}

}  // namespace flotilla::api::crd
