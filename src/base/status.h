// Errors as values, shaped after the Kubernetes `Status` object.
//
// Every Status maps one to one onto a Kubernetes Status response: a reason
// (NotFound, AlreadyExists, Conflict, Invalid, ...), an HTTP code derived from
// it, a message and optional field causes. A default-constructed Status is OK.
// StatusOr<T> holds either a value or a non-OK Status; neither can be dropped
// silently ([[nodiscard]]).
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace flotilla {

// The Kubernetes StatusReason values we produce (metav1.StatusReason).
enum class Reason {
  kOk,
  kBadRequest,             // 400
  kUnauthorized,           // 401
  kForbidden,              // 403
  kNotFound,               // 404
  kMethodNotAllowed,       // 405
  kNotAcceptable,          // 406
  kAlreadyExists,          // 409
  kConflict,               // 409
  kGone,                   // 410
  kExpired,                // 410, a resourceVersion that is too old
  kRequestEntityTooLarge,  // 413
  kUnsupportedMediaType,   // 415
  kInvalid,                // 422
  kTooManyRequests,        // 429
  kInternalError,          // 500
  kServiceUnavailable,     // 503
  kTimeout,                // 504
};

// One entry of Status.details.causes.
struct StatusCause {
  std::string type;  // e.g. "FieldValueInvalid", "FieldValueRequired"
  std::string message;
  std::string field;  // e.g. "metadata.name"
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Reason reason, std::string message, std::vector<StatusCause> causes = {})
      : reason_(reason), message_(std::move(message)), causes_(std::move(causes)) {}

  static Status Ok() { return {}; }
  static Status BadRequest(std::string m) { return {Reason::kBadRequest, std::move(m)}; }
  static Status Unauthorized(std::string m) { return {Reason::kUnauthorized, std::move(m)}; }
  static Status Forbidden(std::string m) { return {Reason::kForbidden, std::move(m)}; }
  static Status NotFound(std::string m) { return {Reason::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {Reason::kAlreadyExists, std::move(m)}; }
  static Status Conflict(std::string m) { return {Reason::kConflict, std::move(m)}; }
  static Status Gone(std::string m) { return {Reason::kGone, std::move(m)}; }
  static Status Expired(std::string m) { return {Reason::kExpired, std::move(m)}; }
  static Status Invalid(std::string m, std::vector<StatusCause> causes = {}) {
    return {Reason::kInvalid, std::move(m), std::move(causes)};
  }
  static Status Internal(std::string m) { return {Reason::kInternalError, std::move(m)}; }
  static Status Unavailable(std::string m) { return {Reason::kServiceUnavailable, std::move(m)}; }
  static Status Timeout(std::string m) { return {Reason::kTimeout, std::move(m)}; }

  bool ok() const { return reason_ == Reason::kOk; }
  Reason reason() const { return reason_; }
  const std::string& message() const { return message_; }
  const std::vector<StatusCause>& causes() const { return causes_; }

  // HTTP status code for this reason (200 when OK).
  int code() const;
  // The reason as Kubernetes spells it ("NotFound", "Invalid", ...; "" when OK).
  std::string_view reason_string() const;
  // "NotFound: message" for logs.
  std::string ToString() const;

  bool Is(Reason r) const { return reason_ == r; }
  void IgnoreError() const {}

 private:
  Reason reason_ = Reason::kOk;
  std::string message_;
  std::vector<StatusCause> causes_;
};

// Parses "NotFound" etc. back into a Reason; unknown strings map by HTTP code.
Reason ReasonFromString(std::string_view reason, int code);

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  // REQUIRES: !status.ok()
  StatusOr(Status status) : v_(std::move(status)) { assert(!std::get<Status>(v_).ok()); }
  StatusOr(T value) : v_(std::move(value)) {}
  template <typename U, typename = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                                    !std::is_same_v<std::decay_t<U>, Status> &&
                                                    !std::is_same_v<std::decay_t<U>, StatusOr<T>>>>
  StatusOr(U&& value) : v_(T(std::forward<U>(value))) {}

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace flotilla

// Returns the Status of `expr` from the enclosing function when it is not OK.
#define FLOTILLA_RETURN_IF_ERROR(expr)                   \
  do {                                                   \
    ::flotilla::Status flotilla_status_ = (expr);        \
    if (!flotilla_status_.ok()) return flotilla_status_; \
  } while (0)

#define FLOTILLA_CONCAT_INNER(a, b) a##b
#define FLOTILLA_CONCAT(a, b) FLOTILLA_CONCAT_INNER(a, b)
// ASSIGN_OR_RETURN(auto x, MakeX()): binds the value or returns the error.
#define FLOTILLA_ASSIGN_OR_RETURN(lhs, expr) \
  FLOTILLA_ASSIGN_OR_RETURN_IMPL(FLOTILLA_CONCAT(flotilla_statusor_, __LINE__), lhs, expr)
#define FLOTILLA_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()
