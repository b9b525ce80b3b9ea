#include "apiserver/openapi_proto.h"

#include <cstring>

namespace flotilla::apiserver {
namespace {

// The protobuf wire format, written.
class Writer {
 public:
  void Varint(uint32_t field, uint64_t v) {
    Tag(field, 0);
    PutVarint(v);
  }
  void Bool(uint32_t field, bool v) { Varint(field, v ? 1 : 0); }
  void Double(uint32_t field, double v) {
    Tag(field, 1);
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>(bits >> (8 * i)));
  }
  void Bytes(uint32_t field, std::string_view b) {
    Tag(field, 2);
    PutVarint(b.size());
    out_.append(b);
  }
  std::string& str() { return out_; }

 private:
  void Tag(uint32_t field, uint32_t wire) { PutVarint(uint64_t{field} << 3 | wire); }
  void PutVarint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  std::string out_;
};

// gnostic's Any: the value as YAML text (field 2); JSON is YAML.
std::string AnyOf(const json::value& v) {
  Writer w;
  w.Bytes(2, json::serialize(v));
  return w.str();
}

std::string NamedAny(std::string_view name, const json::value& v) {
  Writer w;
  w.Bytes(1, name);
  w.Bytes(2, AnyOf(v));
  return w.str();
}

std::string SchemaOf(const json::object& s);

std::string NamedSchema(std::string_view name, const json::value& v) {
  Writer w;
  w.Bytes(1, name);
  if (v.is_object()) w.Bytes(2, SchemaOf(v.get_object()));
  return w.str();
}

std::string SchemaOf(const json::object& s) {
  Writer w;
  auto str = [&](const char* key, uint32_t field) {
    if (const json::value* v = s.if_contains(key); v && v->is_string()) {
      w.Bytes(field, v->get_string());
    }
  };
  auto num = [&](const char* key, uint32_t field) {
    if (const json::value* v = s.if_contains(key); v && v->is_number()) {
      w.Double(field, v->to_number<double>());
    }
  };
  auto count = [&](const char* key, uint32_t field) {
    if (const json::value* v = s.if_contains(key); v && v->is_number()) {
      w.Varint(field, static_cast<uint64_t>(v->to_number<int64_t>()));
    }
  };
  auto flag = [&](const char* key, uint32_t field) {
    if (const json::value* v = s.if_contains(key); v && v->is_bool() && v->get_bool()) {
      w.Bool(field, true);
    }
  };
  str("$ref", 1);
  str("format", 2);
  str("title", 3);
  str("description", 4);
  if (const json::value* d = s.if_contains("default")) w.Bytes(5, AnyOf(*d));
  num("multipleOf", 6);
  num("maximum", 7);
  flag("exclusiveMaximum", 8);
  num("minimum", 9);
  flag("exclusiveMinimum", 10);
  count("maxLength", 11);
  count("minLength", 12);
  str("pattern", 13);
  count("maxItems", 14);
  count("minItems", 15);
  flag("uniqueItems", 16);
  count("maxProperties", 17);
  count("minProperties", 18);
  if (const json::value* r = s.if_contains("required"); r && r->is_array()) {
    for (const json::value& f : r->get_array()) {
      if (f.is_string()) w.Bytes(19, f.get_string());
    }
  }
  if (const json::value* e = s.if_contains("enum"); e && e->is_array()) {
    for (const json::value& v : e->get_array()) w.Bytes(20, AnyOf(v));
  }
  if (const json::value* ap = s.if_contains("additionalProperties")) {
    Writer item;
    if (ap->is_object()) {
      item.Bytes(1, SchemaOf(ap->get_object()));
    } else if (ap->is_bool()) {
      item.Bool(2, ap->get_bool());
    }
    w.Bytes(21, item.str());
  }
  if (const json::value* t = s.if_contains("type"); t && t->is_string()) {
    Writer type;
    type.Bytes(1, t->get_string());
    w.Bytes(22, type.str());
  }
  if (const json::value* items = s.if_contains("items"); items && items->is_object()) {
    Writer item;
    item.Bytes(1, SchemaOf(items->get_object()));
    w.Bytes(23, item.str());
  }
  if (const json::value* all = s.if_contains("allOf"); all && all->is_array()) {
    for (const json::value& sub : all->get_array()) {
      if (sub.is_object()) w.Bytes(24, SchemaOf(sub.get_object()));
    }
  }
  if (const json::value* props = s.if_contains("properties"); props && props->is_object()) {
    Writer p;
    for (const auto& [name, sub] : props->get_object()) p.Bytes(1, NamedSchema(name, sub));
    w.Bytes(25, p.str());
  }
  flag("readOnly", 27);
  if (const json::value* ex = s.if_contains("example")) w.Bytes(30, AnyOf(*ex));
  for (const auto& [key, v] : s) {
    if (key.starts_with("x-")) w.Bytes(31, NamedAny(key, v));
  }
  return std::move(w.str());
}

}  // namespace

std::string OpenApiV2Protobuf(const json::object& swagger) {
  Writer doc;
  doc.Bytes(1, "2.0");
  if (const json::value* info = swagger.if_contains("info"); info && info->is_object()) {
    Writer i;
    if (const json::value* t = info->get_object().if_contains("title"); t && t->is_string()) {
      i.Bytes(1, t->get_string());
    }
    if (const json::value* v = info->get_object().if_contains("version"); v && v->is_string()) {
      i.Bytes(2, v->get_string());
    }
    doc.Bytes(2, i.str());
  }
  if (const json::value* defs = swagger.if_contains("definitions"); defs && defs->is_object()) {
    Writer d;
    for (const auto& [name, schema] : defs->get_object()) d.Bytes(1, NamedSchema(name, schema));
    doc.Bytes(9, d.str());
  }
  return std::move(doc.str());
}

}  // namespace flotilla::apiserver
