// Response decoding for the Client verbs (response_decoder.h).
#include "client/response_decoder.h"

#include <string>

namespace flotilla::client {
namespace {

constexpr size_t kMaxQuotedBody = 1024;

// The message client-go's NewGenericServerResponse gives a response that
// carries no Status.
std::string GenericMessage(int code, std::string_view body) {
  switch (code) {
    case 400:
      return "the server rejected our request for an unknown reason";
    case 401:
      return "the server has asked for the client to provide credentials";
    case 403:
      return "the server does not allow access to the requested resource";
    case 404:
      return "the server could not find the requested resource";
    case 405:
      return "the server does not allow this method on the requested resource";
    case 406:
    case 415:
      return "the server was unable to respond with a content type that the client supports";
    case 409:
      return "the server reported a conflict";
    case 422:
      return "the server rejected our request due to an error in our request";
    case 429:
      return "the server has received too many requests and has asked us to try again later";
    case 503:
      return "the server is currently unable to handle the request";
    case 504:
      return "the server was unable to return a response in the time allotted, but may still "
             "be processing the request";
    default:
      break;
  }
  if (code >= 500) {
    return "an error on the server (\"" + std::string(body.substr(0, kMaxQuotedBody)) +
           "\") has prevented the request from succeeding";
  }
  return "the server responded with the status code " + std::to_string(code) +
         " but did not return more information";
}

std::vector<StatusCause> CausesOf(const json::object& status) {
  std::vector<StatusCause> causes;
  const json::object* details = GetObject(status, "details");
  const json::array* list = details ? GetArray(*details, "causes") : nullptr;
  if (list == nullptr) return causes;
  for (const json::value& v : *list) {
    if (!v.is_object()) continue;
    const json::object& c = v.as_object();
    causes.push_back({std::string(GetString(c, "reason").value_or("")),
                      std::string(GetString(c, "message").value_or("")),
                      std::string(GetString(c, "field").value_or(""))});
  }
  return causes;
}

bool IsStatusObject(const json::object& obj) {
  auto kind = GetString(obj, "kind");
  return kind && *kind == "Status";
}

}  // namespace

Status StatusFromObject(const json::object& status, int code) {
  int effective_code = static_cast<int>(GetInt(status, "code").value_or(code));
  std::string_view reason_text = GetString(status, "reason").value_or("");
  std::string message(GetString(status, "message").value_or(""));
  if (Is2xx(effective_code) && reason_text.empty()) {
    return Status::Internal("the server reported success where an error was expected: " + message);
  }
  Reason reason = ReasonFromString(reason_text, effective_code);
  if (message.empty()) message = GenericMessage(effective_code, "");
  return Status(reason, std::move(message), CausesOf(status));
}

Status ErrorFromResponse(int code, std::string_view body) {
  auto parsed = ParseJsonObject(body);
  if (parsed.ok() && IsStatusObject(*parsed)) return StatusFromObject(*parsed, code);
  std::vector<StatusCause> causes;
  std::string_view trimmed = body.substr(0, kMaxQuotedBody);
  if (!trimmed.empty()) causes.push_back({"UnexpectedServerResponse", std::string(trimmed), ""});
  return Status(ReasonFromString("", code), GenericMessage(code, body), std::move(causes));
}

StatusOr<json::object> DecodeObject(StatusOr<ApiResponse> response) {
  if (!response.ok()) return response.status();
  if (!Is2xx(response->code)) return ErrorFromResponse(response->code, response->body);
  auto obj = ParseJsonObject(response->body);
  if (!obj.ok()) {
    return Status::Internal("decoding the server's response: " + obj.status().message());
  }
  return obj;
}

StatusOr<ObjectList> DecodeList(StatusOr<ApiResponse> response) {
  FLOTILLA_ASSIGN_OR_RETURN(json::object obj, DecodeObject(std::move(response)));
  ObjectList list;
  if (const json::object* meta = GetObject(obj, "metadata")) {
    list.resource_version = std::string(GetString(*meta, "resourceVersion").value_or(""));
    list.continue_token = std::string(GetString(*meta, "continue").value_or(""));
    if (const json::value* n = meta->if_contains("remainingItemCount"); n && n->is_int64()) {
      list.remaining_item_count = n->as_int64();
    }
  }
  json::value* items = obj.if_contains("items");
  if (items == nullptr || items->is_null()) return list;
  if (!items->is_array())
    return Status::Internal("decoding the server's list: items is not a list");
  list.items.reserve(items->as_array().size());
  for (json::value& item : items->as_array()) {
    if (!item.is_object()) {
      return Status::Internal("decoding the server's list: an item is not an object");
    }
    list.items.push_back(std::move(item.as_object()));
  }
  return list;
}

Status DecodeNoContent(StatusOr<ApiResponse> response) {
  if (!response.ok()) return response.status();
  if (!Is2xx(response->code)) return ErrorFromResponse(response->code, response->body);
  return Status::Ok();
}

}  // namespace flotilla::client
