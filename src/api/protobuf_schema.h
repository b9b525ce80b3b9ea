// The message layouts DecodeProtobufObject knows: for each message of
// k8s.io/api and k8s.io/apimachinery that a served kind can contain, its
// field numbers, JSON names and value types. Internal to src/api.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace flotilla::api::protobuf {

enum class Type : uint8_t {
  kString,
  kBytes,  // JSON base64
  kInt32,
  kInt64,
  kBool,
  kMessage,      // a nested JSON object
  kInline,       // a Go embedded struct: its fields go into the parent object
  kTime,         // meta/v1 Time {seconds=1, nanos=2} as RFC 3339
  kQuantity,     // api/resource Quantity {string=1} as its string
  kIntOrString,  // util/intstr IntOrString {type=1, intVal=2, strVal=3}
  kFieldsV1,     // meta/v1 FieldsV1 {Raw=1}: JSON bytes, embedded as JSON
  kMapString,    // map<string, string>
  kMapBytes,     // map<string, bytes>, values as base64
  kMapQuantity,  // map<string, Quantity>
};

// Field flags.
inline constexpr uint8_t kRepeated = 1;
// The Go field is a pointer (or the JSON tag has no omitempty and zero is
// meaningful): a zero value that was sent is kept in JSON.
inline constexpr uint8_t kPointer = 2;

struct Message;

struct Field {
  uint32_t number;
  std::string_view json;  // "" for kInline
  Type type;
  uint8_t flags = 0;
  const Message* message = nullptr;  // kMessage and kInline
};

struct Message {
  std::string_view name;  // "Container"
  std::span<const Field> fields;

  const Field* Find(uint32_t number) const {
    for (const Field& f : fields) {
      if (f.number == number) return &f;
    }
    return nullptr;
  }
};

// The message of a top-level object, nullptr when none is known.
const Message* FindObjectMessage(std::string_view api_version, std::string_view kind);

}  // namespace flotilla::api::protobuf
