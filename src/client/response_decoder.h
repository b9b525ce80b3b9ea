// Decoding API responses into objects, lists and errors. Shared by every
// transport (transport.h). Pure functions.
//
// An error response carrying a metav1.Status becomes that Status: its reason
// (ReasonFromString, falling back on the HTTP code), message and
// details.causes. Any other error body becomes a Status with the HTTP code's
// reason, a message worded as client-go words it, and the body (trimmed) as
// an "UnexpectedServerResponse" cause.
#pragma once

#include <string_view>

#include "base/json.h"
#include "base/status.h"
#include "client/client.h"
#include "client/transport.h"

namespace flotilla::client {

// The error that a response with `code` (not 2xx) and `body` stands for.
Status ErrorFromResponse(int code, std::string_view body);

// A metav1.Status object as a Status; `code` is used when the object has
// none. A Status object reporting success is InternalError (it is not an
// error any caller can act on, yet it arrived where an error belongs).
Status StatusFromObject(const json::object& status, int code);

// The object of a 2xx response, else the response's error (or the transport
// failure as it is).
StatusOr<json::object> DecodeObject(StatusOr<ApiResponse> response);
// items, metadata.resourceVersion and metadata.continue of a list response.
StatusOr<ObjectList> DecodeList(StatusOr<ApiResponse> response);
// OK for a 2xx response whatever its body.
Status DecodeNoContent(StatusOr<ApiResponse> response);

}  // namespace flotilla::client
