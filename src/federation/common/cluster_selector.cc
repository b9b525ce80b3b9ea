#include "federation/common/cluster_selector.h"

#include <charconv>
#include <optional>

#include "api/annotations.h"
#include "api/federated.h"
#include "api/validation.h"
#include "api/views.h"

namespace flotilla::federation {
namespace {

using api::SelectorOperator;

struct OperatorName {
  std::string_view name;
  SelectorOperator op;
};

// The NodeSelectorRequirement names first, then the original federation's
// (k8s.io/apimachinery selection.Operator).
constexpr OperatorName kOperators[] = {
    {"In", SelectorOperator::kIn},          {"NotIn", SelectorOperator::kNotIn},
    {"Exists", SelectorOperator::kExists},  {"DoesNotExist", SelectorOperator::kDoesNotExist},
    {"Gt", SelectorOperator::kGreaterThan}, {"Lt", SelectorOperator::kLessThan},
    {"in", SelectorOperator::kIn},          {"notin", SelectorOperator::kNotIn},
    {"exists", SelectorOperator::kExists},  {"!", SelectorOperator::kDoesNotExist},
    {"gt", SelectorOperator::kGreaterThan}, {"lt", SelectorOperator::kLessThan},
    {"=", SelectorOperator::kEquals},       {"==", SelectorOperator::kDoubleEquals},
    {"!=", SelectorOperator::kNotEquals},
};

std::optional<SelectorOperator> OperatorOf(std::string_view name) {
  for (const OperatorName& o : kOperators) {
    if (o.name == name) return o.op;
  }
  return std::nullopt;
}

std::vector<std::string> OperatorNames() {
  std::vector<std::string> names;
  for (const OperatorName& o : kOperators) names.emplace_back(o.name);
  return names;
}

// Go's strconv.ParseInt(s, 10, 64), which Gt and Lt compare with.
bool IsInteger(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

// How many values `op` takes, as NodeSelectorRequirement validation says.
void CheckValueCount(SelectorOperator op, const std::vector<std::string>& values,
                     const std::string& field, std::vector<StatusCause>& causes) {
  switch (op) {
    case SelectorOperator::kIn:
    case SelectorOperator::kNotIn:
      if (values.empty()) {
        causes.push_back(api::FieldRequired(field,
                                            "must be specified when `operator` is 'In' or "
                                            "'NotIn'"));
      }
      return;
    case SelectorOperator::kExists:
    case SelectorOperator::kDoesNotExist:
      if (!values.empty()) {
        causes.push_back(api::FieldForbidden(
            field, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      }
      return;
    case SelectorOperator::kEquals:
    case SelectorOperator::kDoubleEquals:
    case SelectorOperator::kNotEquals:
      if (values.size() != 1) {
        causes.push_back(api::FieldInvalid(field, json::value_from(values),
                                           "exactly one value is required for '=', '==', '!='"));
      }
      return;
    case SelectorOperator::kGreaterThan:
    case SelectorOperator::kLessThan:
      if (values.size() != 1) {
        causes.push_back(
            api::FieldInvalid(field, json::value_from(values),
                              "must be specified single value when `operator` is 'Lt' or 'Gt'"));
      } else if (!IsInteger(values[0])) {
        causes.push_back(api::FieldInvalid(field + "[0]", json::string(values[0]),
                                           "must be an integer when `operator` is 'Lt' or 'Gt'"));
      }
      return;
  }
}

// One {"key", "operator", "values"} entry at `field`; problems go to `causes`.
std::optional<api::LabelRequirement> ParseRequirement(const json::value& entry,
                                                      const std::string& field,
                                                      std::vector<StatusCause>& causes) {
  if (!entry.is_object()) {
    causes.push_back(api::FieldTypeInvalid(field, entry, "object"));
    return std::nullopt;
  }
  const json::object& o = entry.get_object();
  const size_t before = causes.size();
  for (const auto& [name, value] : o) {
    if (name != "key" && name != "operator" && name != "values") {
      causes.push_back(api::FieldForbidden(field + "." + std::string(name),
                                           "unknown field; a requirement has key, operator and "
                                           "values"));
    }
  }
  api::LabelRequirement r;
  const json::value* key = o.if_contains("key");
  if (key == nullptr || (key->is_string() && key->get_string().empty())) {
    causes.push_back(api::FieldRequired(field + ".key", ""));
  } else if (!key->is_string()) {
    causes.push_back(api::FieldTypeInvalid(field + ".key", *key, "string"));
  } else {
    r.key = key->get_string();
    for (const std::string& problem : api::IsQualifiedName(r.key)) {
      causes.push_back(api::FieldInvalid(field + ".key", *key, problem));
    }
  }
  const json::value* op = o.if_contains("operator");
  std::optional<SelectorOperator> parsed_op;
  if (op == nullptr) {
    causes.push_back(api::FieldRequired(field + ".operator", ""));
  } else if (!op->is_string()) {
    causes.push_back(api::FieldTypeInvalid(field + ".operator", *op, "string"));
  } else if (parsed_op = OperatorOf(op->get_string()); !parsed_op) {
    causes.push_back(api::FieldNotSupported(field + ".operator", *op, OperatorNames()));
  }
  const json::value* values = o.if_contains("values");
  bool values_ok = true;
  if (values != nullptr && !values->is_null()) {
    if (!values->is_array()) {
      causes.push_back(api::FieldTypeInvalid(field + ".values", *values, "array"));
      values_ok = false;
    } else {
      const json::array& a = values->get_array();
      for (size_t i = 0; i < a.size(); ++i) {
        if (!a[i].is_string()) {
          causes.push_back(
              api::FieldTypeInvalid(field + ".values[" + std::to_string(i) + "]", a[i], "string"));
          values_ok = false;
        } else {
          r.values.emplace_back(a[i].get_string());
        }
      }
    }
  }
  if (parsed_op && values_ok) CheckValueCount(*parsed_op, r.values, field + ".values", causes);
  if (causes.size() != before || !parsed_op) return std::nullopt;
  r.op = *parsed_op;
  return r;
}

}  // namespace

StatusOr<ClusterSelector> ClusterSelector::Parse(std::string_view text, std::string_view path) {
  const std::string field(path);
  StatusOr<json::value> doc = ParseJson(text);
  std::vector<StatusCause> causes;
  ClusterSelector selector;
  if (!doc.ok()) {
    causes.push_back(api::FieldInvalid(
        field, json::string(text),
        "must be a JSON list of {key, operator, values}: " + doc.status().message()));
  } else if (!doc->is_array()) {
    causes.push_back(api::FieldInvalid(field, json::string(text),
                                       "must be a JSON list of {key, operator, values}"));
  } else {
    const json::array& entries = doc->get_array();
    for (size_t i = 0; i < entries.size(); ++i) {
      std::optional<api::LabelRequirement> r =
          ParseRequirement(entries[i], field + "[" + std::to_string(i) + "]", causes);
      if (r) selector.requirements_.push_back(std::move(*r));
    }
  }
  if (!causes.empty()) {
    std::string message = "invalid cluster selector: " + api::AggregateCauses(causes);
    return Status::Invalid(std::move(message), std::move(causes));
  }
  return selector;
}

StatusOr<ClusterSelector> ClusterSelector::Of(const json::object& obj) {
  ClusterSelector out;
  if (const json::value* s = api::FindAnnotation(obj, api::kClusterSelectorAnnotation)) {
    if (!s->is_string()) {
      return Status::Invalid(
          "invalid cluster selector",
          {api::FieldTypeInvalid(std::string(kClusterSelectorField), *s, "string")});
    }
    FLOTILLA_ASSIGN_OR_RETURN(out, Parse(s->get_string()));
  }
  if (const json::value* c = api::FindAnnotation(obj, api::kPlacementClusterAnnotation)) {
    if (!c->is_string()) {
      return Status::Invalid(
          "invalid placement cluster",
          {api::FieldTypeInvalid(std::string(kPlacementClusterField), *c, "string")});
    }
    out.cluster_ = std::string(c->get_string());
  }
  return out;
}

ClusterSelector ClusterSelector::Nowhere() {
  ClusterSelector out;
  out.nowhere_ = true;
  return out;
}

bool ClusterSelector::Matches(const std::map<std::string, std::string>& labels) const {
  if (nowhere_) return false;
  json::object o;
  for (const auto& [k, v] : labels) o[k] = v;
  for (const api::LabelRequirement& r : requirements_) {
    if (!r.Matches(&o)) return false;
  }
  return true;
}

ClusterSelector ClusterSelector::ForAffinity(api::policy::ClusterAffinity affinity) {
  ClusterSelector out;
  out.affinity_ = std::make_shared<const api::policy::ClusterAffinity>(std::move(affinity));
  return out;
}

bool ClusterSelector::Matches(const json::object& cluster) const {
  if (nowhere_) return false;
  if (cluster_ && api::ObjectView(cluster).name() != *cluster_) return false;
  if (affinity_ && !affinity_->Matches(cluster)) return false;
  const json::object* o = api::ObjectView(cluster).labels();
  for (const api::LabelRequirement& r : requirements_) {
    if (!r.Matches(o)) return false;
  }
  return true;
}

}  // namespace flotilla::federation
