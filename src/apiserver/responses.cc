#include "apiserver/responses.h"

#include "base/utf8.h"

namespace flotilla::apiserver {
namespace {

// RFC 7234 warning: code, agent "-", and the text as a quoted string with
// '"' and '\\' escaped, as kube-apiserver writes it.
std::string WarningHeader(std::string_view text) {
  std::string out = "299 - \"";
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

}  // namespace

json::object StatusObject(const Status& status, const std::string& name, const std::string& group,
                          const std::string& kind) {
  json::object o{{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object()}};
  if (status.ok()) {
    o["status"] = "Success";
    o["code"] = 200;
    return o;
  }
  // Messages may quote what a client sent, bytes that are not UTF-8 among
  // them: the body must stay valid JSON text all the same.
  o["status"] = "Failure";
  o["message"] = ToValidUtf8(status.message());
  o["reason"] = status.reason_string();
  json::object details;
  if (!name.empty()) details["name"] = ToValidUtf8(name);
  if (!group.empty()) details["group"] = group;
  if (!kind.empty()) details["kind"] = kind;
  if (!status.causes().empty()) {
    json::array causes;
    for (const auto& c : status.causes()) {
      json::object cause{{"reason", c.type}, {"message", ToValidUtf8(c.message)}};
      if (!c.field.empty()) cause["field"] = ToValidUtf8(c.field);
      causes.push_back(std::move(cause));
    }
    details["causes"] = std::move(causes);
  }
  if (!details.empty()) o["details"] = std::move(details);
  o["code"] = status.code();
  return o;
}

void RespondStatus(Responder& resp, const Status& status, const std::string& name,
                   const api::Resource* res) {
  // details.kind is the resource for most reasons but the Kind for Invalid.
  std::string kind = res == nullptr ? "" : status.Is(Reason::kInvalid) ? res->kind : res->plural;
  json::object body =
      res ? StatusObject(status, name, res->group, kind) : StatusObject(status, name);
  RespondJson(resp, status.code(), json::serialize(body));
}

Headers JsonHeaders(const std::vector<std::string>& warnings, const std::string& content_type) {
  Headers headers{{"Content-Type", content_type}, {"Cache-Control", "no-cache, private"}};
  for (const auto& w : warnings) headers.emplace_back("Warning", WarningHeader(w));
  return headers;
}

void RespondJson(Responder& resp, int code, std::string body,
                 const std::vector<std::string>& warnings, const std::string& content_type) {
  if (warnings.empty() && content_type == "application/json") {
    // Most answers: the same headers every time, built once.
    static const Headers* plain = new Headers(JsonHeaders());
    return resp.Respond(code, *plain, std::move(body));
  }
  resp.Respond(code, JsonHeaders(warnings, content_type), std::move(body));
}

}  // namespace flotilla::apiserver
