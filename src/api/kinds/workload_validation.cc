#include "api/kinds/workload_validation.h"

#include "api/kinds/pod_spec.h"
#include "api/labels.h"
#include "api/validation.h"

namespace flotilla::api::kinds {
namespace {

constexpr std::string_view kSelectorMismatch = "`selector` does not match template `labels`";

void Append(Causes& out, Causes more) {
  for (StatusCause& c : more) out.push_back(std::move(c));
}

const json::object& SpecOf(const json::object& obj) {
  const json::object* spec = GetObject(obj, "spec");
  return spec ? *spec : EmptyObject();
}

const json::object& TemplateOf(const json::object& spec) {
  const json::object* t = GetObject(spec, "template");
  return t ? *t : EmptyObject();
}

// spec.selector: required, valid, not empty. Returns the parsed selector,
// or nullopt when it cannot be converted (the error is reported here).
std::optional<LabelSelector> CheckSelector(const json::object& spec, std::string_view kind,
                                           std::string_view invalid_detail, Causes& out) {
  const json::value* selector = spec.if_contains("selector");
  if (selector == nullptr || selector->is_null()) {
    out.push_back(FieldRequired("spec.selector", ""));
  } else {
    Append(out, ValidateLabelSelector(*selector, "spec.selector"));
    const json::object* sel = selector->is_object() ? &selector->get_object() : nullptr;
    const json::object* labels = sel ? GetObject(*sel, "matchLabels") : nullptr;
    const json::array* exprs = sel ? GetArray(*sel, "matchExpressions") : nullptr;
    if (sel != nullptr && (labels ? labels->size() : 0) + (exprs ? exprs->size() : 0) == 0) {
      out.push_back(InvalidRepr("spec.selector", GoLabelSelector(selector),
                                "empty selector is invalid for " + std::string(kind)));
    }
  }
  StatusOr<LabelSelector> parsed = LabelSelector::FromJson(selector, "spec.selector");
  if (!parsed.ok()) {
    out.push_back(InvalidRepr("spec.selector", GoLabelSelector(selector), invalid_detail));
    return std::nullopt;
  }
  return *parsed;
}

void CheckSelectorMatchesTemplate(const LabelSelector& selector, const json::object& tmpl,
                                  Causes& out) {
  const json::object* labels = ObjectAt(tmpl, "metadata.labels");
  if (!selector.Empty() && !selector.Matches(labels)) {
    const json::value* raw = Find(tmpl, "metadata.labels");
    out.push_back(
        InvalidRepr("spec.template.metadata.labels", GoStringMap(raw), kSelectorMismatch));
  }
}

void CheckRestartAlways(const json::object& tmpl, std::string_view kind, Causes& out) {
  const json::value* policy = Find(tmpl, "spec.restartPolicy");
  if (policy == nullptr || !policy->is_string() || policy->get_string() != "Always") {
    out.push_back(FieldNotSupported("spec.template.spec.restartPolicy",
                                    policy ? *policy : json::value(json::string()), {"Always"}));
  }
  if (Find(tmpl, "spec.activeDeadlineSeconds") != nullptr) {
    out.push_back(
        FieldForbidden("spec.template.spec.activeDeadlineSeconds",
                       "activeDeadlineSeconds in " + std::string(kind) + " is not Supported"));
  }
}

// ValidatePodTemplateSpecForReplicaSet, shared by ReplicaSets and Deployments.
void CheckReplicaSetTemplate(const json::object& spec, Causes& out) {
  std::optional<LabelSelector> selector =
      CheckSelector(spec, "deployment", "invalid label selector", out);
  if (!selector) return;
  const json::object& tmpl = TemplateOf(spec);
  CheckSelectorMatchesTemplate(*selector, tmpl, out);
  ValidatePodTemplate(tmpl, "spec.template", out);
  CheckRestartAlways(tmpl, "ReplicaSet", out);
}

void CheckSelectorImmutable(const json::object& obj, const json::object* old, Causes& out) {
  if (old == nullptr) return;
  const json::value* selector = Find(obj, "spec.selector");
  if (!SemanticEqual(selector, Find(*old, "spec.selector"))) {
    out.push_back(InvalidRepr("spec.selector", GoLabelSelector(selector), "field is immutable"));
  }
}

}  // namespace

// %#v of an intstr.IntOrString.
std::string GoIntOrString(const json::value& v) {
  if (v.is_string()) {
    return "intstr.IntOrString{Type:1, IntVal:0, StrVal:" + QuoteGo(v.get_string()) + "}";
  }
  int64_t n = v.is_int64() ? v.get_int64() : 0;
  return "intstr.IntOrString{Type:0, IntVal:" + std::to_string(n) + ", StrVal:\"\"}";
}

// The percentage of a valid "NN%" string.
std::optional<int64_t> Percent(const json::value& v) {
  if (!v.is_string()) return std::nullopt;
  std::string_view s = v.get_string();
  if (s.size() < 2 || s.back() != '%') return std::nullopt;
  int64_t n = 0;
  for (char c : s.substr(0, s.size() - 1)) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

// getIntOrPercentValue: the int, or the percentage's number.
int64_t IntOrPercentValue(const json::value& v) {
  return v.is_int64() ? v.get_int64() : Percent(v).value_or(0);
}

void CheckIntOrPercent(const json::value& v, const std::string& path, Causes& out) {
  if (v.is_string()) {
    if (!Percent(v)) {
      out.push_back(InvalidRepr(path, GoIntOrString(v),
                                "a valid percent string must be a numeric string followed by an "
                                "ending '%' (e.g. '1%',  or '93%', regex used for validation is "
                                "'[0-9]+%')"));
    }
  } else if (v.is_int64() && v.get_int64() < 0) {
    out.push_back(FieldInvalid(path, v.get_int64(), "must be greater than or equal to 0"));
  }
}

namespace {

// A rolling update's maxUnavailable and maxSurge (0 when unset), each
// checked as an int or a percentage at `path`.
std::pair<json::value, json::value> UnavailableAndSurge(const json::object& ru,
                                                        const std::string& path, Causes& out) {
  const json::value* unavailable = ru.if_contains("maxUnavailable");
  const json::value* surge = ru.if_contains("maxSurge");
  std::pair<json::value, json::value> out_values{unavailable ? *unavailable : json::value(0),
                                                 surge ? *surge : json::value(0)};
  CheckIntOrPercent(out_values.first, Child(path, "maxUnavailable"), out);
  CheckIntOrPercent(out_values.second, Child(path, "maxSurge"), out);
  return out_values;
}

void CheckRollingUpdateDeployment(const json::object& ru, Causes& out) {
  const std::string path = "spec.strategy.rollingUpdate";
  auto [unavailable, surge] = UnavailableAndSurge(ru, path, out);
  if (IntOrPercentValue(unavailable) == 0 && IntOrPercentValue(surge) == 0) {
    out.push_back(InvalidRepr(Child(path, "maxUnavailable"), GoIntOrString(unavailable),
                              "may not be 0 when `maxSurge` is 0"));
  }
  if (Percent(unavailable).value_or(0) > 100) {
    out.push_back(InvalidRepr(Child(path, "maxUnavailable"), GoIntOrString(unavailable),
                              "must not be greater than 100%"));
  }
}

void CheckDeploymentStrategy(const json::object& spec, Causes& out) {
  const json::object& strategy =
      GetObject(spec, "strategy") ? *GetObject(spec, "strategy") : EmptyObject();
  std::string type = StringAt(strategy, "type");
  const json::object* ru = GetObject(strategy, "rollingUpdate");
  if (type == "Recreate") {
    if (ru != nullptr) {
      out.push_back(FieldForbidden("spec.strategy.rollingUpdate",
                                   "may not be specified when strategy `type` is 'Recreate'"));
    }
  } else if (type == "RollingUpdate") {
    if (ru == nullptr) {
      out.push_back(FieldRequired("spec.strategy.rollingUpdate",
                                  "this should be defaulted and never be nil"));
    } else {
      CheckRollingUpdateDeployment(*ru, out);
    }
  } else {
    out.push_back(StatusCause{"FieldValueNotSupported",
                              "Unsupported value: apps.DeploymentStrategy{Type:" + QuoteGo(type) +
                                  ", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: "
                                  "supported values: \"Recreate\", \"RollingUpdate\"",
                              "spec.strategy"});
  }
}

void CheckStatefulSetStrategy(const json::object& spec, Causes& out) {
  std::string policy = StringAt(spec, "podManagementPolicy");
  if (policy.empty()) {
    out.push_back(FieldRequired("spec.podManagementPolicy", ""));
  } else if (policy != "OrderedReady" && policy != "Parallel") {
    out.push_back(FieldInvalid("spec.podManagementPolicy", json::string(policy),
                               "must be 'OrderedReady' or 'Parallel'"));
  }
  std::string type = StringAt(spec, "updateStrategy.type");
  const json::object* ru = ObjectAt(spec, "updateStrategy.rollingUpdate");
  if (type.empty()) {
    out.push_back(FieldRequired("spec.updateStrategy", ""));
  } else if (type == "OnDelete" && ru != nullptr) {
    out.push_back(FieldInvalid("spec.updateStrategy.rollingUpdate", json::value(*ru),
                               "only allowed for updateStrategy 'RollingUpdate'"));
  } else if (type == "RollingUpdate" && ru != nullptr) {
    CheckNonnegative(*ru, "partition", "spec.updateStrategy.rollingUpdate", out);
  } else if (type != "OnDelete" && type != "RollingUpdate") {
    out.push_back(FieldInvalid("spec.updateStrategy",
                               json::value(*ObjectAt(spec, "updateStrategy")),
                               "must be 'RollingUpdate' or 'OnDelete'"));
  }
}

// ValidateRollingUpdateDaemonSet: exactly one of maxUnavailable and
// maxSurge is non-zero.
void CheckRollingUpdateDaemonSet(const json::object& ru, Causes& out) {
  const std::string path = "spec.updateStrategy.rollingUpdate";
  auto [unavailable, surge] = UnavailableAndSurge(ru, path, out);
  for (const auto& [name, v] : {std::pair{"maxUnavailable", &unavailable}, {"maxSurge", &surge}}) {
    if (Percent(*v).value_or(0) > 100) {
      out.push_back(
          InvalidRepr(Child(path, name), GoIntOrString(*v), "must not be greater than 100%"));
    }
  }
  if (IntOrPercentValue(unavailable) != 0 && IntOrPercentValue(surge) != 0) {
    out.push_back(InvalidRepr(Child(path, "maxSurge"), GoIntOrString(surge),
                              "may not be set when maxUnavailable is non-zero"));
  } else if (IntOrPercentValue(unavailable) == 0 && IntOrPercentValue(surge) == 0) {
    out.push_back(FieldRequired(Child(path, "maxUnavailable"), "cannot be 0 when maxSurge is 0"));
  }
}

void CheckDaemonSetStrategy(const json::object& spec, Causes& out) {
  const json::object* strategy = GetObject(spec, "updateStrategy");
  std::string type = strategy ? StringAt(*strategy, "type") : "";
  if (type == "OnDelete") return;
  if (type == "RollingUpdate") {
    const json::object* ru = GetObject(*strategy, "rollingUpdate");
    if (ru == nullptr) {
      out.push_back(FieldRequired("spec.updateStrategy.rollingUpdate", ""));
    } else {
      CheckRollingUpdateDaemonSet(*ru, out);
    }
    return;
  }
  out.push_back(
      StatusCause{"FieldValueNotSupported",
                  "Unsupported value: apps.DaemonSetUpdateStrategy{Type:" + QuoteGo(type) +
                      ", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: "
                      "supported values: \"RollingUpdate\", \"OnDelete\"",
                  "spec.updateStrategy"});
}

void CheckRetentionPolicy(const json::object& spec, Causes& out) {
  const json::object* policy = GetObject(spec, "persistentVolumeClaimRetentionPolicy");
  if (policy == nullptr) return;
  for (std::string_view key : {"whenDeleted", "whenScaled"}) {
    std::string v = StringAt(*policy, key);
    if (v != "Retain" && v != "Delete") {
      out.push_back(FieldNotSupported(Child("spec.persistentVolumeClaimRetentionPolicy", key),
                                      json::string(v), {"Retain", "Delete"}));
    }
  }
}

// ValidateStatefulSetUpdate: only some spec fields may change.
void CheckStatefulSetUpdate(const json::object& spec, const json::object& old_spec, Causes& out) {
  json::object a = spec;
  json::object b = old_spec;
  for (std::string_view key :
       {"replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit",
        "persistentVolumeClaimRetentionPolicy", "minReadySeconds"}) {
    a.erase(key);
    b.erase(key);
  }
  json::value va(std::move(a));
  json::value vb(std::move(b));
  if (!SemanticEqual(&va, &vb)) {
    out.push_back(FieldForbidden(
        "spec",
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
        "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and "
        "'minReadySeconds' are forbidden"));
  }
}

}  // namespace

Causes ValidateReplicaSet(const json::object& obj, const json::object* old) {
  Causes out;
  const json::object& spec = SpecOf(obj);
  CheckNonnegative(spec, "replicas", "spec", out);
  CheckNonnegative(spec, "minReadySeconds", "spec", out);
  CheckReplicaSetTemplate(spec, out);
  CheckSelectorImmutable(obj, old, out);
  return out;
}

Causes ValidateDeployment(const json::object& obj, const json::object* old) {
  Causes out;
  const json::object& spec = SpecOf(obj);
  CheckNonnegative(spec, "replicas", "spec", out);
  CheckReplicaSetTemplate(spec, out);
  CheckDeploymentStrategy(spec, out);
  CheckNonnegative(spec, "minReadySeconds", "spec", out);
  CheckNonnegative(spec, "revisionHistoryLimit", "spec", out);
  if (std::optional<int64_t> deadline = GetInt(spec, "progressDeadlineSeconds")) {
    CheckNonnegative(spec, "progressDeadlineSeconds", "spec", out);
    if (*deadline <= IntOr(spec, "minReadySeconds", 0)) {
      out.push_back(FieldInvalid("spec.progressDeadlineSeconds", *deadline,
                                 "must be greater than minReadySeconds"));
    }
  }
  CheckSelectorImmutable(obj, old, out);
  return out;
}

Causes ValidateStatefulSet(const json::object& obj, const json::object* old) {
  Causes out;
  const json::object& spec = SpecOf(obj);
  CheckStatefulSetStrategy(spec, out);
  CheckNonnegative(spec, "revisionHistoryLimit", "spec", out);
  CheckNonnegative(spec, "replicas", "spec", out);
  CheckNonnegative(spec, "minReadySeconds", "spec", out);
  if (const json::object* ordinals = GetObject(spec, "ordinals")) {
    CheckNonnegative(*ordinals, "start", "spec.ordinals", out);
  }
  const json::object& tmpl = TemplateOf(spec);
  if (std::optional<LabelSelector> selector = CheckSelector(spec, "statefulset", "", out)) {
    CheckSelectorMatchesTemplate(*selector, tmpl, out);
    // Kubernetes checks only the template's metadata here, not its pod spec.
    const json::object* meta = GetObject(tmpl, "metadata");
    Append(out,
           ValidateLabels(meta ? meta->if_contains("labels") : nullptr, "spec.template.labels"));
  }
  CheckRestartAlways(tmpl, "StatefulSet", out);
  CheckRetentionPolicy(spec, out);
  if (old != nullptr) CheckStatefulSetUpdate(spec, SpecOf(*old), out);
  return out;
}

Causes ValidateDaemonSet(const json::object& obj, const json::object* old) {
  Causes out;
  const json::object& spec = SpecOf(obj);
  const json::object& tmpl = TemplateOf(spec);
  if (std::optional<LabelSelector> selector =
          CheckSelector(spec, "daemonset", "invalid label selector", out)) {
    CheckSelectorMatchesTemplate(*selector, tmpl, out);
  }
  ValidatePodTemplate(tmpl, "spec.template", out);
  CheckRestartAlways(tmpl, "DaemonSet", out);
  CheckNonnegative(spec, "minReadySeconds", "spec", out);
  CheckDaemonSetStrategy(spec, out);
  CheckNonnegative(spec, "revisionHistoryLimit", "spec", out);
  CheckSelectorImmutable(obj, old, out);
  return out;
}

}  // namespace flotilla::api::kinds
