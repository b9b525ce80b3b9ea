#include "api/protobuf.h"

#include <cstdint>
#include <vector>

#include "api/protobuf_schema.h"
#include "api/protobuf_wire.h"
#include "base/base64.h"

namespace flotilla::api {
namespace {

using protobuf::Field;
using protobuf::FormatTime;
using protobuf::kLengthDelimited;
using protobuf::kVarint;
using protobuf::Message;
using protobuf::Reader;
using protobuf::Type;
using protobuf::ValidUtf8;

constexpr std::string_view kMagic("k8s\0", 4);
constexpr std::string_view kErrorPrefix = "unable to decode protobuf body: ";

// Decodes messages of the schema into JSON, tracking the JSON path of the
// field being decoded for error messages.
class Decoder {
 public:
  Status DecodeMessage(std::string_view bytes, const Message& m, json::object& out);

 private:
  Status Fail(std::string what) const {
    std::string path;
    for (const std::string& p : path_) path += (path.empty() || p[0] == '[' ? "" : ".") + p;
    return Status::BadRequest(std::string(kErrorPrefix) + (path.empty() ? "" : path + ": ") + what);
  }
  Status FailField(const Message& m, uint32_t number, std::string_view what) const {
    return Fail(std::string(m.name) + " field " + std::to_string(number) + ": " +
                std::string(what));
  }

  Status DecodeField(Reader& r, const Message& m, const Field& f, uint32_t wire, json::object& out);
  Status DecodeLengthDelimited(std::string_view bytes, const Message& m, const Field& f,
                               json::object& out);
  Status DecodeScalar(Reader& r, const Message& m, const Field& f, json::object& out);
  StatusOr<json::value> DecodeNested(std::string_view bytes, const Message& m, const Field& f);
  Status DecodeMapEntry(std::string_view bytes, const Message& m, const Field& f,
                        json::object& map);
  StatusOr<json::value> DecodeTime(std::string_view bytes, const Message& m, const Field& f);
  StatusOr<std::string> DecodeQuantity(std::string_view bytes, const Message& m, const Field& f);
  StatusOr<json::value> DecodeIntOrString(std::string_view bytes, const Message& m, const Field& f);
  StatusOr<json::value> DecodeFieldsV1(std::string_view bytes, const Message& m, const Field& f);

  std::vector<std::string> path_;
};

// The wire type a field of type `t` is written with (repeated scalars may
// also come packed, as length-delimited).
uint32_t WireTypeOf(Type t) {
  switch (t) {
    case Type::kInt32:
    case Type::kInt64:
    case Type::kBool:
      return kVarint;
    default:
      return kLengthDelimited;
  }
}

bool IsZero(const json::value& v) {
  if (v.is_string()) return v.get_string().empty();
  if (v.is_int64()) return v.get_int64() == 0;
  if (v.is_bool()) return !v.get_bool();
  return false;
}

Status Decoder::DecodeMessage(std::string_view bytes, const Message& m, json::object& out) {
  Reader r(bytes);
  while (!r.done()) {
    uint64_t tag = 0;
    if (!r.Varint(&tag)) return Fail(std::string(m.name) + ": truncated field tag");
    const uint64_t number = tag >> 3;
    const auto wire = static_cast<uint32_t>(tag & 7);
    if (number == 0 || number > 0x1fffffff) {
      return Fail(std::string(m.name) + ": invalid field number " + std::to_string(number));
    }
    const Field* f = m.Find(static_cast<uint32_t>(number));
    if (f == nullptr) {
      return FailField(m, static_cast<uint32_t>(number),
                       "unknown field (wire type " + std::to_string(wire) + ")");
    }
    FLOTILLA_RETURN_IF_ERROR(DecodeField(r, m, *f, wire, out));
  }
  return Status::Ok();
}

Status Decoder::DecodeField(Reader& r, const Message& m, const Field& f, uint32_t wire,
                            json::object& out) {
  const bool repeated = (f.flags & protobuf::kRepeated) != 0;
  const bool packed = repeated && wire == kLengthDelimited && WireTypeOf(f.type) == kVarint;
  if (wire != WireTypeOf(f.type) && !packed) {
    return FailField(m, f.number,
                     "wire type " + std::to_string(wire) + " does not match " +
                         std::string(f.json.empty() ? "the field" : f.json));
  }
  if (WireTypeOf(f.type) == kVarint) {
    if (!packed) return DecodeScalar(r, m, f, out);
    std::string_view packed_bytes;
    if (!r.Bytes(&packed_bytes)) return FailField(m, f.number, "truncated packed values");
    Reader pr(packed_bytes);
    while (!pr.done()) FLOTILLA_RETURN_IF_ERROR(DecodeScalar(pr, m, f, out));
    return Status::Ok();
  }
  std::string_view bytes;
  if (!r.Bytes(&bytes)) return FailField(m, f.number, "truncated length-delimited value");
  return DecodeLengthDelimited(bytes, m, f, out);
}

// A string, bytes, map entry or message value of field `f` of `m`, set on
// (or, for repeated fields and map entries, added to) `out`.
Status Decoder::DecodeLengthDelimited(std::string_view bytes, const Message& m, const Field& f,
                                      json::object& out) {
  switch (f.type) {
    case Type::kInline:
      return DecodeMessage(bytes, *f.message, out);
    case Type::kMapString:
    case Type::kMapBytes:
    case Type::kMapQuantity: {
      json::value& slot = out[f.json];
      if (!slot.is_object()) slot.emplace_object();
      return DecodeMapEntry(bytes, m, f, slot.get_object());
    }
    default:
      break;
  }
  if ((f.flags & protobuf::kRepeated) != 0) {
    json::value& slot = out[f.json];
    if (!slot.is_array()) slot.emplace_array();
    json::array& a = slot.get_array();
    path_.push_back(std::string(f.json));
    path_.push_back("[" + std::to_string(a.size()) + "]");
    auto v = DecodeNested(bytes, m, f);
    path_.resize(path_.size() - 2);
    if (!v.ok()) return v.status();
    a.push_back(std::move(*v));
    return Status::Ok();
  }
  path_.push_back(std::string(f.json));
  auto v = DecodeNested(bytes, m, f);
  path_.pop_back();
  if (!v.ok()) return v.status();
  const bool keep = (f.flags & protobuf::kPointer) != 0 || f.type == Type::kMessage;
  if (v->is_null() || (!keep && IsZero(*v))) return Status::Ok();
  if (f.type == Type::kMessage && out.contains(f.json) && out[f.json].is_object()) {
    // A repeated occurrence of a message field merges into the first.
    for (auto& [k, val] : v->get_object()) out[f.json].get_object()[k] = std::move(val);
    return Status::Ok();
  }
  out[f.json] = std::move(*v);
  return Status::Ok();
}

// A varint value, set on `out` or appended to its array when repeated.
Status Decoder::DecodeScalar(Reader& r, const Message& m, const Field& f, json::object& out) {
  uint64_t raw = 0;
  if (!r.Varint(&raw)) return FailField(m, f.number, "truncated varint");
  json::value v;
  if (f.type == Type::kInt32) {
    v = static_cast<int64_t>(static_cast<int32_t>(raw));
  } else if (f.type == Type::kInt64) {
    v = static_cast<int64_t>(raw);
  } else {
    v = raw != 0;
  }
  if ((f.flags & protobuf::kRepeated) != 0) {
    json::value& slot = out[f.json];
    if (!slot.is_array()) slot.emplace_array();
    slot.get_array().push_back(std::move(v));
  } else if ((f.flags & protobuf::kPointer) != 0 || !IsZero(v)) {
    out[f.json] = std::move(v);
  }
  return Status::Ok();
}

// A length-delimited value of a non-map field: string, bytes or a message.
StatusOr<json::value> Decoder::DecodeNested(std::string_view bytes, const Message& m,
                                            const Field& f) {
  switch (f.type) {
    case Type::kString:
      if (!ValidUtf8(bytes)) return FailField(m, f.number, "string is not valid UTF-8");
      return json::value(json::string(bytes));
    case Type::kBytes:
      return json::value(json::string(Base64Encode(bytes)));
    case Type::kTime:
      return DecodeTime(bytes, m, f);
    case Type::kQuantity: {
      FLOTILLA_ASSIGN_OR_RETURN(std::string q, DecodeQuantity(bytes, m, f));
      // A value Quantity left at zero encodes as "0"; JSON leaves it out.
      if ((f.flags & protobuf::kPointer) == 0 && q == "0") return json::value(json::string());
      return json::value(json::string(q));
    }
    case Type::kIntOrString:
      return DecodeIntOrString(bytes, m, f);
    case Type::kFieldsV1:
      return DecodeFieldsV1(bytes, m, f);
    default: {  // kMessage
      json::object nested;
      FLOTILLA_RETURN_IF_ERROR(DecodeMessage(bytes, *f.message, nested));
      return json::value(std::move(nested));
    }
  }
}

Status Decoder::DecodeMapEntry(std::string_view bytes, const Message& m, const Field& f,
                               json::object& map) {
  Reader r(bytes);
  std::string_view key, value;
  while (!r.done()) {
    uint64_t tag = 0;
    if (!r.Varint(&tag)) return FailField(m, f.number, "truncated map entry");
    if ((tag & 7) != kLengthDelimited || ((tag >> 3) != 1 && (tag >> 3) != 2)) {
      return FailField(m, f.number,
                       "map entry field " + std::to_string(tag >> 3) + " (wire type " +
                           std::to_string(tag & 7) + ") is not key = 1 or value = 2");
    }
    std::string_view* dst = (tag >> 3) == 1 ? &key : &value;
    if (!r.Bytes(dst)) return FailField(m, f.number, "truncated map entry");
  }
  if (!ValidUtf8(key)) return FailField(m, f.number, "map key is not valid UTF-8");
  path_.push_back(std::string(f.json));
  path_.push_back("[" + std::string(key) + "]");
  StatusOr<json::value> v = json::value(json::string());
  if (f.type == Type::kMapString) {
    if (ValidUtf8(value)) {
      v = json::value(json::string(value));
    } else {
      v = FailField(m, f.number, "map value is not valid UTF-8");
    }
  } else if (f.type == Type::kMapBytes) {
    v = json::value(json::string(Base64Encode(value)));
  } else {
    auto q = DecodeQuantity(value, m, f);
    if (q.ok()) {
      v = json::value(json::string(*q));
    } else {
      v = q.status();
    }
  }
  path_.resize(path_.size() - 2);
  if (!v.ok()) return v.status();
  map[key] = std::move(*v);
  return Status::Ok();
}

// Time {seconds = 1 (int64), nanos = 2 (int32)}; the zero Time is null.
StatusOr<json::value> Decoder::DecodeTime(std::string_view bytes, const Message& m,
                                          const Field& f) {
  Reader r(bytes);
  int64_t seconds = 0;
  bool set = false;
  while (!r.done()) {
    uint64_t tag = 0, v = 0;
    if (!r.Varint(&tag) || (tag & 7) != kVarint || !r.Varint(&v)) {
      return FailField(m, f.number, "malformed Time");
    }
    if ((tag >> 3) == 1) {
      seconds = static_cast<int64_t>(v);
      set = true;
    } else if ((tag >> 3) != 2) {
      return FailField(m, f.number, "Time field " + std::to_string(tag >> 3) + " is unknown");
    }
  }
  if (!set) return json::value(nullptr);
  auto text = FormatTime(seconds);
  if (!text) return FailField(m, f.number, "Time seconds out of range");
  return json::value(json::string(*text));
}

// Quantity {string = 1}; without the string it is the zero Quantity, "0".
StatusOr<std::string> Decoder::DecodeQuantity(std::string_view bytes, const Message& m,
                                              const Field& f) {
  Reader r(bytes);
  std::string_view s;
  while (!r.done()) {
    uint64_t tag = 0;
    if (!r.Varint(&tag) || tag != ((1 << 3) | kLengthDelimited) || !r.Bytes(&s)) {
      return FailField(m, f.number, "malformed Quantity");
    }
  }
  if (!ValidUtf8(s)) return FailField(m, f.number, "Quantity is not valid UTF-8");
  return s.empty() ? std::string("0") : std::string(s);
}

// IntOrString {type = 1 (0 int, 1 string), intVal = 2, strVal = 3}.
StatusOr<json::value> Decoder::DecodeIntOrString(std::string_view bytes, const Message& m,
                                                 const Field& f) {
  Reader r(bytes);
  uint64_t type = 0, int_val = 0;
  std::string_view str_val;
  while (!r.done()) {
    uint64_t tag = 0;
    if (!r.Varint(&tag)) return FailField(m, f.number, "malformed IntOrString");
    const uint64_t n = tag >> 3;
    const bool ok = (n == 1 && (tag & 7) == kVarint && r.Varint(&type)) ||
                    (n == 2 && (tag & 7) == kVarint && r.Varint(&int_val)) ||
                    (n == 3 && (tag & 7) == kLengthDelimited && r.Bytes(&str_val));
    if (!ok) return FailField(m, f.number, "malformed IntOrString");
  }
  if (type > 1) return FailField(m, f.number, "IntOrString type " + std::to_string(type));
  if (type == 1) {
    if (!ValidUtf8(str_val)) return FailField(m, f.number, "IntOrString is not valid UTF-8");
    return json::value(json::string(str_val));
  }
  return json::value(static_cast<int64_t>(static_cast<int32_t>(int_val)));
}

// FieldsV1 {Raw = 1}: the managed fields as JSON text.
StatusOr<json::value> Decoder::DecodeFieldsV1(std::string_view bytes, const Message& m,
                                              const Field& f) {
  Reader r(bytes);
  std::string_view raw;
  while (!r.done()) {
    uint64_t tag = 0;
    if (!r.Varint(&tag) || tag != ((1 << 3) | kLengthDelimited) || !r.Bytes(&raw)) {
      return FailField(m, f.number, "malformed FieldsV1");
    }
  }
  if (raw.empty()) return json::value(json::object());
  auto v = ParseJson(raw);
  if (!v.ok()) return FailField(m, f.number, "FieldsV1 is not JSON: " + v.status().message());
  return std::move(*v);
}

}  // namespace

bool IsKubernetesProtobuf(std::string_view content_type) {
  constexpr std::string_view kType = "application/vnd.kubernetes.protobuf";
  if (content_type.substr(0, kType.size()) != kType) return false;
  const std::string_view rest = content_type.substr(kType.size());
  return rest.empty() || rest[0] == ';' || rest[0] == ' ';
}

StatusOr<ProtobufEnvelope> ParseProtobufEnvelope(std::string_view body) {
  if (body.substr(0, kMagic.size()) != kMagic) {
    return Status::BadRequest(std::string(kErrorPrefix) +
                              "the body does not start with the prefix \"k8s\\x00\"");
  }
  ProtobufEnvelope env;
  Reader r(body.substr(kMagic.size()));
  const auto fail = [](std::string what) {
    return Status::BadRequest(std::string(kErrorPrefix) + "Unknown: " + what);
  };
  while (!r.done()) {
    uint64_t tag = 0;
    std::string_view bytes;
    if (!r.Varint(&tag)) return fail("truncated field tag");
    if ((tag & 7) != kLengthDelimited || (tag >> 3) < 1 || (tag >> 3) > 4) {
      return fail("field " + std::to_string(tag >> 3) + " (wire type " + std::to_string(tag & 7) +
                  ") is unknown");
    }
    if (!r.Bytes(&bytes)) return fail("field " + std::to_string(tag >> 3) + ": truncated");
    switch (tag >> 3) {
      case 1: {  // TypeMeta {apiVersion = 1, kind = 2}
        Reader t(bytes);
        while (!t.done()) {
          uint64_t ttag = 0;
          std::string_view s;
          if (!t.Varint(&ttag) || (ttag & 7) != kLengthDelimited || !t.Bytes(&s) ||
              ((ttag >> 3) != 1 && (ttag >> 3) != 2) || !ValidUtf8(s)) {
            return fail("malformed typeMeta");
          }
          ((ttag >> 3) == 1 ? env.api_version : env.kind) = std::string(s);
        }
        break;
      }
      case 2:
        env.raw = bytes;
        break;
      case 3:
        if (!bytes.empty()) {
          return fail("contentEncoding \"" + std::string(bytes) + "\" is not supported");
        }
        break;
      default:  // contentType
        if (!bytes.empty() && !IsKubernetesProtobuf(bytes)) {
          return fail("contentType \"" + std::string(bytes) + "\" is not supported");
        }
        break;
    }
  }
  return env;
}

bool HasProtobufSchema(std::string_view api_version, std::string_view kind) {
  return protobuf::FindObjectMessage(api_version, kind) != nullptr;
}

StatusOr<json::object> DecodeProtobufObject(std::string_view raw, std::string_view api_version,
                                            std::string_view kind) {
  const Message* m = protobuf::FindObjectMessage(api_version, kind);
  if (m == nullptr) {
    return Status::BadRequest(std::string(kErrorPrefix) + "no protobuf schema for " +
                              std::string(api_version) + " " + std::string(kind));
  }
  json::object obj;
  obj["kind"] = kind;
  obj["apiVersion"] = api_version;
  Decoder d;
  FLOTILLA_RETURN_IF_ERROR(d.DecodeMessage(raw, *m, obj));
  return obj;
}

}  // namespace flotilla::api
