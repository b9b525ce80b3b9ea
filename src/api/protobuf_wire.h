// The protobuf wire format as the Kubernetes protobuf decoder reads it:
// varints and length-delimited values from a byte range, UTF-8 checks, and
// metav1.Time's JSON form. Internal to src/api.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/utf8.h"

namespace flotilla::api::protobuf {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// Reads the protobuf wire format from a byte range. Every read checks the
// bytes that remain; a failed read returns false and leaves the reader
// unspecified.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}

  bool done() const { return pos_ >= data_.size(); }
  // A varint of at most 64 bits.
  bool Varint(uint64_t* v);
  // A length-prefixed byte range, pointing into the reader's data.
  bool Bytes(std::string_view* out);

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// True when `s` is well-formed UTF-8 (no surrogates, no overlong forms).
using ::flotilla::ValidUtf8;

// metav1.Time in JSON: RFC 3339 in UTC to the second; nullopt outside years
// 0001..9999.
std::optional<std::string> FormatTime(int64_t unix_seconds);

}  // namespace flotilla::api::protobuf
