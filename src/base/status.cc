#include "base/status.h"

#include <array>

namespace flotilla {
namespace {

struct ReasonInfo {
  Reason reason;
  std::string_view name;
  int code;
};

constexpr std::array<ReasonInfo, 18> kReasons = {{
    {Reason::kOk, "", 200},
    {Reason::kBadRequest, "BadRequest", 400},
    {Reason::kUnauthorized, "Unauthorized", 401},
    {Reason::kForbidden, "Forbidden", 403},
    {Reason::kNotFound, "NotFound", 404},
    {Reason::kMethodNotAllowed, "MethodNotAllowed", 405},
    {Reason::kNotAcceptable, "NotAcceptable", 406},
    {Reason::kAlreadyExists, "AlreadyExists", 409},
    {Reason::kConflict, "Conflict", 409},
    {Reason::kGone, "Gone", 410},
    {Reason::kExpired, "Expired", 410},
    {Reason::kRequestEntityTooLarge, "RequestEntityTooLarge", 413},
    {Reason::kUnsupportedMediaType, "UnsupportedMediaType", 415},
    {Reason::kInvalid, "Invalid", 422},
    {Reason::kTooManyRequests, "TooManyRequests", 429},
    {Reason::kInternalError, "InternalError", 500},
    {Reason::kServiceUnavailable, "ServiceUnavailable", 503},
    {Reason::kTimeout, "Timeout", 504},
}};

const ReasonInfo& Info(Reason r) {
  for (const auto& info : kReasons) {
    if (info.reason == r) return info;
  }
  return kReasons[15];  // InternalError
}

}  // namespace

int Status::code() const { return Info(reason_).code; }

std::string_view Status::reason_string() const { return Info(reason_).name; }

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(reason_string()) + ": " + message_;
}

Reason ReasonFromString(std::string_view reason, int code) {
  for (const auto& info : kReasons) {
    if (!reason.empty() && info.name == reason) return info.reason;
  }
  for (const auto& info : kReasons) {
    if (info.code == code && info.reason != Reason::kOk) return info.reason;
  }
  return code >= 500 ? Reason::kInternalError : Reason::kBadRequest;
}

}  // namespace flotilla
