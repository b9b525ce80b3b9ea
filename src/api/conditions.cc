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

}  // namespace flotilla::api
