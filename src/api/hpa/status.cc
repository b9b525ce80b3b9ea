#include "api/hpa/status.h"

namespace flotilla::api::hpa {

void SetCondition(json::object& status, std::string_view type, bool value, std::string_view reason,
                  std::string_view message, TimePoint now) {
  json::value& list = status["conditions"];
  if (!list.is_array()) list = json::array();
  json::object* found = nullptr;
  for (json::value& c : list.get_array()) {
    if (c.is_object() && GetString(c.get_object(), "type") == type) {
      found = &c.get_object();
      break;
    }
  }
  if (found == nullptr) {
    list.get_array().push_back(json::object{{"type", type}});
    found = &list.get_array().back().get_object();
  }
  std::string_view want = value ? "True" : "False";
  if (GetString(*found, "status") != want) {
    (*found)["status"] = want;
    (*found)["lastTransitionTime"] = FormatRfc3339(now);
  }
  (*found)["reason"] = reason;
  (*found)["message"] = message;
}

json::object BuildStatus(const json::object& working, int64_t generation, int64_t current,
                         int64_t desired, const json::value& metrics, bool rescaled,
                         TimePoint now) {
  json::object out;
  if (generation > 0) out["observedGeneration"] = generation;
  if (rescaled) {
    out["lastScaleTime"] = FormatRfc3339(now);
  } else if (const json::value* last = working.if_contains("lastScaleTime");
             last != nullptr && !last->is_null()) {
    out["lastScaleTime"] = *last;
  }
  if (current != 0) out["currentReplicas"] = current;
  out["desiredReplicas"] = desired;
  if (metrics.is_array() && !metrics.get_array().empty()) out["currentMetrics"] = metrics;
  if (const json::value* conditions = working.if_contains("conditions");
      conditions != nullptr && conditions->is_array()) {
    out["conditions"] = *conditions;
  }
  return out;
}

int64_t DesiredReplicasOf(const json::object& status) {
  return GetInt(status, "desiredReplicas").value_or(0);
}

}  // namespace flotilla::api::hpa
