#include "apiserver/responses.h"

namespace flotilla::apiserver {

json::object StatusObject(const Status& status, const std::string& name, const std::string& group,
                          const std::string& kind) {
  json::object o{{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object()}};
  if (status.ok()) {
    o["status"] = "Success";
    o["code"] = 200;
    return o;
  }
  o["status"] = "Failure";
  o["message"] = status.message();
  o["reason"] = status.reason_string();
  json::object details;
  if (!name.empty()) details["name"] = name;
  if (!group.empty()) details["group"] = group;
  if (!kind.empty()) details["kind"] = kind;
  if (!status.causes().empty()) {
    json::array causes;
    for (const auto& c : status.causes()) {
      json::object cause{{"reason", c.type}, {"message", c.message}};
      if (!c.field.empty()) cause["field"] = c.field;
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
  json::object body = res ? StatusObject(status, name, res->group, res->plural)
                          : StatusObject(status, name);
  RespondJson(resp, status.code(), json::serialize(body));
}

void RespondJson(Responder& resp, int code, const std::string& body,
                 const std::vector<std::string>& warnings, const std::string& content_type) {
  Headers headers{{"Content-Type", content_type}, {"Cache-Control", "no-cache, private"}};
  for (const auto& w : warnings) headers.emplace_back("Warning", "299 - \"" + w + "\"");
  resp.Respond(code, headers, body);
}

}  // namespace flotilla::apiserver
