// policy/v1 PodDisruptionBudget: validation (pkg/apis/policy/validation),
// printPodDisruptionBudget's columns and registration. policy/v1 has no
// defaults; the status subresource is the disruption controller's.
#include "api/kinds/resources.h"
#include "api/kinds/util.h"
#include "api/kinds/workload_validation.h"
#include "api/labels.h"
#include "api/resources.h"
#include "api/validation.h"

namespace flotilla::api::kinds {
namespace {

// %#v of an optional *intstr.IntOrString inside a struct.
std::string GoIntOrStringPointer(const json::value* v) {
  return v == nullptr || v->is_null() ? "(*intstr.IntOrString)(nil)" : "&" + GoIntOrString(*v);
}

Causes ValidatePodDisruptionBudget(const json::object& obj, const json::object*) {
  Causes out;
  const json::object& spec = ObjectOr(obj, "spec");
  const json::value* min_available = spec.if_contains("minAvailable");
  const json::value* max_unavailable = spec.if_contains("maxUnavailable");
  bool has_min = min_available != nullptr && !min_available->is_null();
  bool has_max = max_unavailable != nullptr && !max_unavailable->is_null();
  if (has_min && has_max) {
    out.push_back(InvalidRepr(
        "spec",
        "policy.PodDisruptionBudgetSpec{MinAvailable:" + GoIntOrStringPointer(min_available) +
            ", MaxUnavailable:" + GoIntOrStringPointer(max_unavailable) + "}",
        "minAvailable and maxUnavailable cannot be both set"));
  }
  for (const auto& [field, value] :
       {std::pair<std::string_view, const json::value*>{"minAvailable", min_available},
        {"maxUnavailable", max_unavailable}}) {
    if (value == nullptr || value->is_null()) continue;
    std::string path = Child("spec", field);
    CheckIntOrPercent(*value, path, out);
    if (Percent(*value).value_or(0) > 100) {
      out.push_back(InvalidRepr(path, GoIntOrString(*value), "must not be greater than 100%"));
    }
  }
  const json::value* selector = spec.if_contains("selector");
  if (selector != nullptr) {
    for (StatusCause& c : ValidateLabelSelector(*selector, "spec.selector")) {
      out.push_back(std::move(c));
    }
  }
  const json::value* policy = spec.if_contains("unhealthyPodEvictionPolicy");
  if (policy != nullptr && !policy->is_null() &&
      !(*policy == "AlwaysAllow" || *policy == "IfHealthyBudget")) {
    out.push_back(FieldNotSupported("spec.unhealthyPodEvictionPolicy", *policy,
                                    {"AlwaysAllow", "IfHealthyBudget"}));
  }
  // ValidatePodDisruptionBudgetStatusUpdate's counts.
  const json::object& status = ObjectOr(obj, "status");
  for (std::string_view count :
       {"disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"}) {
    CheckNonnegative(status, count, "status", out);
  }
  return out;
}

// IntOrString.String(), or "N/A" when the budget does not set it.
Cell IntOrStringCell(std::string_view field) {
  return [field](const json::object& obj, TimePoint) -> json::value {
    const json::value* v = Find(obj, "spec." + std::string(field));
    if (v == nullptr || v->is_null()) return json::string("N/A");
    if (v->is_int64()) return json::string(std::to_string(v->get_int64()));
    return v->is_string() ? json::value(v->get_string()) : json::string("N/A");
  };
}

}  // namespace

Resource PodDisruptionBudgetResource() {
  Resource r = MakeResource("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", true,
                            "io.k8s.api.policy.v1.PodDisruptionBudget");
  r.short_names = {"pdb"};
  r.has_status = true;
  r.validate_fn = ValidatePodDisruptionBudget;
  r.columns = {NameColumn(),
               Column("Min Available", "string",
                      "The minimum number or percentage of available pods this budget requires.", 0,
                      IntOrStringCell("minAvailable")),
               Column("Max Unavailable", "string",
                      "The maximum number or percentage of unavailable pods this budget requires.",
                      0, IntOrStringCell("maxUnavailable")),
               Column("Allowed Disruptions", "integer",
                      "Calculated number of pods that may be disrupted at this time.", 0,
                      IntCell("status.disruptionsAllowed")),
               AgeColumn()};
  return r;
}

}  // namespace flotilla::api::kinds
