// Internal to the planner: collects field errors while a JSON document is
// read, and turns them into one Invalid status with a cause per problem
// (Kubernetes style: field path, type, "Invalid value: ...: why").
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace flotilla::planner::internal {

inline constexpr std::string_view kTypeInvalid = "FieldValueTypeInvalid";
inline constexpr std::string_view kValueInvalid = "FieldValueInvalid";
inline constexpr std::string_view kNotSupported = "FieldValueNotSupported";
inline constexpr std::string_view kRequired = "FieldValueRequired";
inline constexpr std::string_view kDuplicate = "FieldValueDuplicate";

class FieldErrors {
 public:
  // `path` prefixes every field ("" for a top-level document); `what` names
  // the document in the status message.
  FieldErrors(std::string_view path, std::string_view what) : path_(path), what_(what) {}

  // The full path of `sub` below the prefix.
  std::string Field(std::string_view sub) const {
    if (path_.empty()) return std::string(sub);
    if (sub.empty()) return path_;
    return path_ + "." + std::string(sub);
  }
  void Add(std::string_view type, std::string field, std::string message) {
    causes_.push_back({std::string(type), std::move(message), std::move(field)});
  }
  // Takes over the causes of another Invalid status.
  void AddAll(const Status& status) {
    for (const StatusCause& c : status.causes()) causes_.push_back(c);
  }
  bool empty() const { return causes_.empty(); }

  // "invalid <what>: field: message; field: message"
  Status ToStatus() && {
    std::string message = "invalid " + what_ + ":";
    for (size_t i = 0; i < causes_.size(); ++i) {
      message += (i == 0 ? " " : "; ");
      message += (causes_[i].field.empty() ? "" : causes_[i].field + ": ") + causes_[i].message;
    }
    return Status::Invalid(std::move(message), std::move(causes_));
  }

 private:
  std::string path_;
  std::string what_;
  std::vector<StatusCause> causes_;
};

// A JSON string literal for `s`, for messages.
inline std::string Quote(std::string_view s) { return json::serialize(json::string(s)); }

// A value as an error message shows it, shortened when long.
inline std::string Shown(const json::value& v) {
  std::string text = json::serialize(v);
  if (text.size() > 64) text = text.substr(0, 61) + "...";
  return text;
}

// Reads a JSON integer as int64. Like Go's decoder, which wrote the
// annotations, fractions and exponents are not integers.
inline std::optional<int64_t> ReadInt(const json::value& v, FieldErrors& errors,
                                      std::string field) {
  if (v.is_int64()) return v.get_int64();
  if (v.is_uint64()) {
    errors.Add(kValueInvalid, std::move(field),
               "Invalid value: " + Shown(v) + ": must fit in a 64-bit signed integer");
  } else {
    errors.Add(
        kTypeInvalid, std::move(field),
        "Invalid value: " + Shown(v) + ": must be an integer, not " + std::string(JsonTypeName(v)));
  }
  return std::nullopt;
}

// Reports `key` as an unknown field, with a hint when it differs from a known
// field only in case (Go's decoder matched case-insensitively; we do not).
inline void AddUnknownField(FieldErrors& errors, std::string field, std::string_view key,
                            std::span<const std::string_view> known) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  std::string message = "unknown field " + Quote(key);
  for (std::string_view k : known) {
    bool same = k.size() == key.size();
    for (size_t i = 0; same && i < k.size(); ++i) same = lower(k[i]) == lower(key[i]);
    if (same) message += " (did you mean " + Quote(k) + "?)";
  }
  errors.Add(kNotSupported, std::move(field), std::move(message));
}

}  // namespace flotilla::planner::internal
