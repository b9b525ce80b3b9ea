#include "api/conditions.h"

namespace flotilla::api {

const json::object* FindCondition(const json::object& status, std::string_view type) {
  const json::array* conds = GetArray(status, "conditions");
  if (conds == nullptr) return nullptr;
  for (const json::value& c : *conds) {
    if (c.is_object() && GetString(c.get_object(), "type") == type) return &c.get_object();
  }
  return nullptr;
}

const json::object* ConditionOf(const json::object& obj, std::string_view type) {
  const json::object* status = GetObject(obj, "status");
  return status == nullptr ? nullptr : FindCondition(*status, type);
}

bool ConditionTrue(const json::object& obj, std::string_view type) {
  const json::object* c = ConditionOf(obj, type);
  return c != nullptr && GetString(*c, "status") == "True";
}

void SetCondition(json::object& status, json::object condition) {
  json::value& conds = status["conditions"];
  if (!conds.is_array()) conds = json::array();
  for (json::value& c : conds.get_array()) {
    if (!c.is_object() || GetString(c.get_object(), "type") != GetString(condition, "type")) {
      continue;
    }
    if (GetString(c.get_object(), "status") == GetString(condition, "status")) return;
    c = std::move(condition);
    return;
  }
  conds.get_array().push_back(std::move(condition));
}

}  // namespace flotilla::api
