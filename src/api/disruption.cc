#include "api/disruption.h"

#include "api/labels.h"

namespace flotilla::api {
namespace {

void SetBudgetCondition(json::object& status, std::string_view value, std::string_view reason,
                        std::string_view message, TimePoint now) {
  json::object condition{{"type", "DisruptionAllowed"},
                         {"status", value},
                         {"reason", reason},
                         {"message", message},
                         {"observedGeneration", GetInt(status, "observedGeneration").value_or(0)},
                         {"lastTransitionTime", FormatRfc3339(now)}};
  json::value& conds = status["conditions"];
  if (!conds.is_array()) conds = json::array();
  for (json::value& c : conds.get_array()) {
    if (!c.is_object() || GetString(c.get_object(), "type") != "DisruptionAllowed") continue;
    // apimeta.SetStatusCondition: the transition time stays unless the
    // status changes; the rest is rewritten.
    if (GetString(c.get_object(), "status") == value) {
      if (const json::value* since = c.get_object().if_contains("lastTransitionTime")) {
        condition["lastTransitionTime"] = *since;
      }
    }
    c = std::move(condition);
    return;
  }
  conds.get_array().push_back(std::move(condition));
}

}  // namespace

bool BudgetSelects(const json::object& pdb, const json::object& pod) {
  StatusOr<LabelSelector> selector = LabelSelector::FromJson(Find(pdb, "spec.selector"), "");
  return selector.ok() && selector->MatchesObject(pod);
}

void SetDisruptionAllowedCondition(json::object& status, TimePoint now) {
  if (GetInt(status, "disruptionsAllowed").value_or(0) > 0) {
    SetBudgetCondition(status, "True", "SufficientPods", "", now);
  } else {
    SetBudgetCondition(status, "False", "InsufficientPods", "", now);
  }
}

void SetSyncFailedCondition(json::object& status, std::string_view message, TimePoint now) {
  SetBudgetCondition(status, "False", "SyncFailed", message, now);
}

}  // namespace flotilla::api
