// metav1.LabelSelector objects: validation as apimachinery's
// ValidateLabelSelector does it, and conversion into a LabelSelector as
// LabelSelectorAsSelector does it.
#include "api/labels.h"
#include "api/validation.h"

namespace flotilla::api {
namespace {

std::optional<SelectorOperator> OperatorFromJson(std::string_view op) {
  if (op == "In") return SelectorOperator::kIn;
  if (op == "NotIn") return SelectorOperator::kNotIn;
  if (op == "Exists") return SelectorOperator::kExists;
  if (op == "DoesNotExist") return SelectorOperator::kDoesNotExist;
  return std::nullopt;
}

// Whether `values` suits the operator: required for In and NotIn, forbidden
// for Exists and DoesNotExist.
void CheckOperator(const json::object& expr, bool has_values, const std::string& at,
                   std::vector<StatusCause>& errs) {
  std::string_view op = GetString(expr, "operator").value_or("");
  if (op == "In" || op == "NotIn") {
    if (!has_values) {
      errs.push_back(
          FieldRequired(at + ".values", "must be specified when `operator` is 'In' or 'NotIn'"));
    }
  } else if (op == "Exists" || op == "DoesNotExist") {
    if (has_values) {
      errs.push_back(FieldForbidden(
          at + ".values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    }
  } else {
    const json::value* raw = expr.if_contains("operator");
    errs.push_back(FieldInvalid(at + ".operator", raw ? *raw : json::value(json::string()),
                                "not a valid selector operator"));
  }
}

void CheckKey(const json::object& expr, const std::string& at, std::vector<StatusCause>& errs) {
  const json::value* key = expr.if_contains("key");
  if (key != nullptr && !key->is_string()) {
    errs.push_back(FieldTypeInvalid(at + ".key", *key, "string"));
    return;
  }
  std::string_view k = key ? std::string_view(key->get_string()) : "";
  for (std::string& msg : IsQualifiedName(k)) {
    errs.push_back(FieldInvalid(at + ".key", json::string(k), msg));
  }
}

void CheckValues(const json::array& values, const std::string& at, std::vector<StatusCause>& errs) {
  for (size_t j = 0; j < values.size(); ++j) {
    std::string path = at + ".values[" + std::to_string(j) + "]";
    if (!values[j].is_string()) {
      errs.push_back(FieldTypeInvalid(path, values[j], "string"));
      continue;
    }
    for (std::string& msg : IsValidLabelValue(values[j].get_string())) {
      errs.push_back(FieldInvalid(path, values[j], msg));
    }
  }
}

// One metav1.LabelSelectorRequirement at `at`.
void ValidateRequirement(const json::value& e, const std::string& at,
                         std::vector<StatusCause>& errs) {
  if (!e.is_object()) {
    errs.push_back(FieldTypeInvalid(at, e, "object"));
    return;
  }
  const json::object& expr = e.get_object();
  const json::value* values = expr.if_contains("values");
  if (values != nullptr && !values->is_null() && !values->is_array()) {
    errs.push_back(FieldTypeInvalid(at + ".values", *values, "array"));
  }
  bool has_values = values != nullptr && values->is_array() && !values->get_array().empty();
  CheckOperator(expr, has_values, at, errs);
  CheckKey(expr, at, errs);
  if (has_values) CheckValues(values->get_array(), at, errs);
}

}  // namespace

std::vector<StatusCause> ValidateLabelSelector(const json::value& selector,
                                               std::string_view field) {
  std::string path(field);
  if (!selector.is_object()) return {FieldTypeInvalid(path, selector, "object")};
  const json::object& obj = selector.get_object();
  std::vector<StatusCause> errs =
      ValidateLabels(obj.if_contains("matchLabels"), path + ".matchLabels");
  const json::value* exprs = obj.if_contains("matchExpressions");
  if (exprs == nullptr || exprs->is_null()) return errs;
  if (!exprs->is_array()) {
    errs.push_back(FieldTypeInvalid(path + ".matchExpressions", *exprs, "array"));
    return errs;
  }
  for (size_t i = 0; i < exprs->get_array().size(); ++i) {
    ValidateRequirement(exprs->get_array()[i],
                        path + ".matchExpressions[" + std::to_string(i) + "]", errs);
  }
  return errs;
}

StatusOr<LabelSelector> LabelSelector::FromJson(const json::value* selector,
                                                std::string_view field) {
  if (selector == nullptr || selector->is_null()) return Nothing();
  std::vector<StatusCause> errs = ValidateLabelSelector(*selector, field);
  if (!errs.empty()) {
    std::string message = AggregateCauses(errs);
    return Status::Invalid(std::move(message), std::move(errs));
  }
  LabelSelector out(false);
  const json::object& obj = selector->get_object();
  if (const json::object* match_labels = GetObject(obj, "matchLabels")) {
    for (const auto& [key, value] : *match_labels) {
      out.requirements_.push_back(
          {std::string(key), SelectorOperator::kEquals, {std::string(value.get_string())}});
    }
  }
  if (const json::array* exprs = GetArray(obj, "matchExpressions")) {
    for (const json::value& e : *exprs) {
      const json::object& expr = e.get_object();
      LabelRequirement r{std::string(GetString(expr, "key").value_or("")),
                         *OperatorFromJson(GetString(expr, "operator").value_or("")),
                         {}};
      if (const json::array* values = GetArray(expr, "values")) {
        for (const json::value& v : *values) r.values.emplace_back(v.get_string());
      }
      out.requirements_.push_back(std::move(r));
    }
  }
  SortRequirements(out.requirements_);
  return out;
}

}  // namespace flotilla::api
