// autoscaling/v2 and autoscaling/v1 HorizontalPodAutoscaler: validation
// (pkg/apis/autoscaling/validation, run on the v2 shape for both versions as
// Kubernetes runs it on its internal type), columns and registration.
// Defaults and conversion are in hpa_convert.cc.
#include "api/kinds/hpa_convert.h"
#include "api/kinds/resources.h"
#include "api/kinds/util.h"
#include "api/validation.h"

namespace flotilla::api::kinds {
namespace {

const std::vector<std::string> kMetricTypes = {"ContainerResource", "External", "Object", "Pods",
                                               "Resource"};

// resource.Quantity's Sign: -1, 0 or 1 (numbers and "[+-]digits[.digits]suffix").
int QuantitySign(const json::value& q) {
  if (q.is_int64()) return q.get_int64() < 0 ? -1 : q.get_int64() > 0;
  if (q.is_uint64()) return q.get_uint64() > 0;
  if (q.is_double()) return q.get_double() < 0 ? -1 : q.get_double() > 0;
  if (!q.is_string()) return 0;
  std::string_view s = q.get_string();
  bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  for (char c : s) {
    if (c == '.') continue;
    if (c < '0' || c > '9') break;
    if (c != '0') return negative ? -1 : 1;
  }
  return 0;
}

const json::value* SetAt(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && !v->is_null() ? v : nullptr;
}

void ValidateRef(const json::object& ref, const std::string& path, Causes& out) {
  for (std::string_view key : {"kind", "name"}) {
    std::string v = StringAt(ref, key);
    if (v.empty()) out.push_back(FieldRequired(Child(path, key), ""));
    for (std::string& msg : v.empty() ? std::vector<std::string>() : IsValidPathSegmentName(v)) {
      out.push_back(FieldInvalid(Child(path, key), json::string(v), msg));
    }
  }
}

void ValidateTarget(const json::object& target, const std::string& path, Causes& out) {
  std::string type = StringAt(target, "type");
  if (type.empty())
    out.push_back(FieldRequired(Child(path, "type"), "must specify a metric target type"));
  if (type != "Utilization" && type != "Value" && type != "AverageValue") {
    out.push_back(FieldInvalid(Child(path, "type"), json::string(type),
                               "must be either Utilization, Value, or AverageValue"));
  }
  for (std::string_view key : {"value", "averageValue"}) {
    const json::value* q = SetAt(target, key);
    if (q != nullptr && QuantitySign(*q) != 1) {
      out.push_back(
          FieldInvalid(Child(path, key), json::string(QuantityString(q)), "must be positive"));
    }
  }
  std::optional<int64_t> u = GetInt(target, "averageUtilization");
  if (u && *u < 1)
    out.push_back(FieldInvalid(Child(path, "averageUtilization"), *u, "must be greater than 0"));
}

void ValidateIdentifier(const json::object& src, const std::string& path, Causes& out) {
  if (StringAt(src, "metric.name").empty()) {
    out.push_back(FieldRequired(Child(path, "metric.name"), "must specify a metric name"));
  }
}

// validateResourceSource and validateContainerResourceSource.
void ValidateResourceSource(std::string_view key, const json::object& src, const std::string& path,
                            Causes& out) {
  const json::object& target = ObjectOr(src, "target");
  std::string target_path = Child(path, "target");
  bool average = SetAt(target, "averageValue") != nullptr;
  bool utilization = SetAt(target, "averageUtilization") != nullptr;
  if (StringAt(src, "name").empty()) {
    out.push_back(FieldRequired(Child(path, "name"), "must specify a resource name"));
  }
  if (key == "containerResource" && StringAt(src, "container").empty()) {
    out.push_back(FieldRequired(Child(path, "container"), "must specify a container"));
  }
  ValidateTarget(target, target_path, out);
  if (!utilization && !average) {
    out.push_back(FieldRequired(Child(target_path, "averageUtilization"),
                                "must set either a target raw value or a target utilization"));
  }
  if (utilization && average) {
    out.push_back(FieldForbidden(Child(target_path, "averageValue"),
                                 "may not set both a target raw value and a target utilization"));
  }
}

// validateObjectSource, validatePodsSource and validateExternalSource.
void ValidateMetricSource(std::string_view key, const json::object& src, const std::string& path,
                          Causes& out) {
  const json::object& target = ObjectOr(src, "target");
  std::string target_path = Child(path, "target");
  bool value = SetAt(target, "value") != nullptr;
  bool average = SetAt(target, "averageValue") != nullptr;
  if (key == "object") {
    ValidateRef(ObjectOr(src, "describedObject"), Child(path, "describedObject"), out);
  }
  ValidateIdentifier(src, path, out);
  ValidateTarget(target, target_path, out);
  if (key == "pods" && !average) {
    out.push_back(FieldRequired(Child(target_path, "averageValue"),
                                "must specify a positive target averageValue"));
  }
  if (key == "object" && !value && !average) {
    out.push_back(FieldRequired(Child(target_path, "value"),
                                "must set either a target value or averageValue"));
  }
  if (key == "external" && !value && !average) {
    out.push_back(FieldRequired(Child(target_path, "value"),
                                "must set either a target value for metric or a per-pod target"));
  }
  if (key == "external" && value && average) {
    out.push_back(
        FieldForbidden(Child(target_path, "value"),
                       "may not set both a target value for metric and a per-pod target"));
  }
}

void ValidateSource(std::string_view key, const json::object& src, const std::string& path,
                    Causes& out) {
  if (key == "resource" || key == "containerResource") {
    ValidateResourceSource(key, src, path, out);
  } else {
    ValidateMetricSource(key, src, path, out);
  }
}

// The JSON key of each metric source type.
std::string SourceKey(std::string_view type) {
  if (type == "Object") return "object";
  if (type == "Pods") return "pods";
  if (type == "Resource") return "resource";
  if (type == "ContainerResource") return "containerResource";
  if (type == "External") return "external";
  return "";
}

void ValidateMetric(const json::object& metric, const std::string& path, Causes& out) {
  std::string type = StringAt(metric, "type");
  if (type.empty()) {
    out.push_back(FieldRequired(Child(path, "type"), "must specify a metric source type"));
  }
  std::string expected = SourceKey(type);
  if (expected.empty()) {
    out.push_back(FieldNotSupported(Child(path, "type"), json::string(type), kMetricTypes));
  }
  std::vector<std::string> present;
  for (std::string_view key : {"object", "external", "pods", "resource", "containerResource"}) {
    const json::object* src = GetObject(metric, key);
    if (src == nullptr) continue;
    present.emplace_back(key);
    if (present.size() == 1) ValidateSource(key, *src, Child(path, key), out);
  }
  if (!expected.empty() && GetObject(metric, expected) == nullptr) {
    out.push_back(FieldRequired(Child(path, expected),
                                "must populate information for the given metric source"));
  }
  if (present.size() > 1) {
    for (const std::string& key : present) {
      if (key != expected) {
        out.push_back(
            FieldForbidden(Child(path, key), "must populate the given metric source only"));
      }
    }
  }
}

void ValidateMetrics(const json::object& spec, std::optional<int64_t> min, Causes& out) {
  std::vector<const json::object*> metrics = ObjectsAt(spec, "metrics");
  bool object_or_external = false;
  for (size_t i = 0; i < metrics.size(); ++i) {
    ValidateMetric(*metrics[i], Index("spec.metrics", i), out);
    std::string type = StringAt(*metrics[i], "type");
    object_or_external = object_or_external || type == "Object" || type == "External";
  }
  if (min == 0 && !object_or_external) {
    out.push_back(FieldForbidden(
        "spec.metrics",
        "must specify at least one Object or External metric to support scaling to zero replicas"));
  }
}

void ValidateRules(const json::object& rules, const std::string& path, Causes& out) {
  std::optional<int64_t> window = GetInt(rules, "stabilizationWindowSeconds");
  std::string window_path = Child(path, "stabilizationWindowSeconds");
  if (window && *window < 0)
    out.push_back(FieldInvalid(window_path, *window, "must be greater than or equal to zero"));
  if (window && *window > 3600)
    out.push_back(FieldInvalid(window_path, *window, "must be less than or equal to 3600"));
  const json::value* select = SetAt(rules, "selectPolicy");
  if (select != nullptr && StringAt(rules, "selectPolicy") != "Max" &&
      StringAt(rules, "selectPolicy") != "Min" && StringAt(rules, "selectPolicy") != "Disabled") {
    out.push_back(
        FieldNotSupported(Child(path, "selectPolicy"), *select, {"Disabled", "Max", "Min"}));
  }
  std::vector<const json::object*> policies = ObjectsAt(rules, "policies");
  if (policies.empty())
    out.push_back(FieldRequired(Child(path, "policies"), "must specify at least one Policy"));
  for (size_t i = 0; i < policies.size(); ++i) {
    std::string at = Index(Child(path, "policies"), i);
    std::string type = StringAt(*policies[i], "type");
    if (type != "Pods" && type != "Percent") {
      out.push_back(FieldNotSupported(Child(at, "type"), json::string(type), {"Percent", "Pods"}));
    }
    int64_t value = IntOr(*policies[i], "value", 0);
    if (value <= 0)
      out.push_back(FieldInvalid(Child(at, "value"), value, "must be greater than zero"));
    int64_t period = IntOr(*policies[i], "periodSeconds", 0);
    if (period <= 0)
      out.push_back(FieldInvalid(Child(at, "periodSeconds"), period, "must be greater than zero"));
    if (period > 1800)
      out.push_back(
          FieldInvalid(Child(at, "periodSeconds"), period, "must be less than or equal to 1800"));
  }
}

Causes ValidateHpaV2(const json::object& obj, const json::object*) {
  Causes out;
  const json::object& spec = GetObject(obj, "spec") ? *GetObject(obj, "spec") : EmptyObject();
  std::optional<int64_t> min = GetInt(spec, "minReplicas");
  int64_t max = IntOr(spec, "maxReplicas", 0);
  if (min && *min < 1)
    out.push_back(FieldInvalid("spec.minReplicas", *min, "must be greater than or equal to 1"));
  if (max < 1) out.push_back(FieldInvalid("spec.maxReplicas", max, "must be greater than 0"));
  if (min && max < *min) {
    out.push_back(
        FieldInvalid("spec.maxReplicas", max, "must be greater than or equal to `minReplicas`"));
  }
  Causes more;
  const json::object* ref = GetObject(spec, "scaleTargetRef");
  ValidateRef(ref ? *ref : EmptyObject(), "spec.scaleTargetRef", more);
  if (more.empty()) ValidateMetrics(spec, min, more);
  const json::object* behavior = GetObject(spec, "behavior");
  if (more.empty() && behavior != nullptr) {
    for (std::string_view key : {"scaleUp", "scaleDown"}) {
      if (const json::object* rules = GetObject(*behavior, key)) {
        ValidateRules(*rules, Child("spec.behavior", key), more);
      }
    }
  }
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

Causes ValidateHpaV1(const json::object& obj, const json::object* old) {
  return ValidateHpaV2(HpaV1ToV2(obj), nullptr);
}

// One entry of formatHPAMetrics: "current/target" for the metric's type.
std::string FormatMetric(const json::object& spec, const json::object* status) {
  std::string type = StringAt(spec, "type");
  std::string key = SourceKey(type);
  if (key.empty()) return "<unknown type>";
  const json::object& src = GetObject(spec, key) ? *GetObject(spec, key) : EmptyObject();
  const json::object* st = status ? GetObject(*status, key) : nullptr;
  const json::object* target = GetObject(src, "target");
  const json::object& t = target ? *target : EmptyObject();
  const json::object* cur = st ? GetObject(*st, "current") : nullptr;
  const json::object& c = cur ? *cur : EmptyObject();
  bool average = SetAt(t, "averageValue") != nullptr;
  std::string current = "<unknown>";
  if (key == "resource" || key == "containerResource") {
    std::string name = StringAt(src, "name") + ": ";
    if (average) {
      if (st != nullptr) current = QuantityString(c.if_contains("averageValue"));
      return name + current + "/" + QuantityString(t.if_contains("averageValue"));
    }
    if (st != nullptr && SetAt(c, "averageUtilization"))
      current = std::to_string(IntOr(c, "averageUtilization", 0)) + "%";
    std::optional<int64_t> u = GetInt(t, "averageUtilization");
    return name + current + "/" + (u ? std::to_string(*u) + "%" : "<auto>");
  }
  if (key == "pods") {
    if (st != nullptr) current = QuantityString(c.if_contains("averageValue"));
    return current + "/" + QuantityString(t.if_contains("averageValue"));
  }
  if (average) {
    if (st != nullptr && SetAt(c, "averageValue"))
      current = QuantityString(c.if_contains("averageValue"));
    return current + "/" + QuantityString(t.if_contains("averageValue")) + " (avg)";
  }
  if (st != nullptr) current = QuantityString(c.if_contains("value"));
  return current + "/" + QuantityString(t.if_contains("value"));
}

// formatHPAMetrics: at most two entries, then " + N more...".
std::string FormatMetrics(const json::object& v2) {
  std::vector<const json::object*> specs = ObjectsAt(v2, "spec.metrics");
  if (specs.empty()) return "<none>";
  const json::array* statuses = ArrayAt(v2, "status.currentMetrics");
  std::string out;
  for (size_t i = 0; i < specs.size() && i < 2; ++i) {
    const json::object* status = nullptr;
    if (statuses != nullptr && i < statuses->size() && (*statuses)[i].is_object()) {
      status = &(*statuses)[i].get_object();
    }
    out += (i > 0 ? ", " : "") + FormatMetric(*specs[i], status);
  }
  if (specs.size() > 2) out += " + " + std::to_string(specs.size() - 2) + " more...";
  return out;
}

json::value ReferenceCell(const json::object& obj, TimePoint) {
  return json::string(StringAt(obj, "spec.scaleTargetRef.kind") + "/" +
                      StringAt(obj, "spec.scaleTargetRef.name"));
}

std::vector<TableColumn> HpaColumns(bool v1) {
  auto as_v2 = [v1](const json::object& obj) { return v1 ? HpaV1ToV2(obj) : obj; };
  return {
      NameColumn(),
      Column(
          "Reference", "string",
          "reference to scaled resource; horizontal pod autoscaler will learn the current resource "
          "consumption and will set the desired number of pods by using its Scale subresource.",
          0, ReferenceCell),
      Column("Targets", "string",
             "metrics contains the specifications for which to use to calculate the desired "
             "replica count.",
             0,
             [as_v2](const json::object& obj, TimePoint) -> json::value {
               return json::string(FormatMetrics(as_v2(obj)));
             }),
      Column("MinPods", "string",
             "minReplicas is the lower limit for the number of replicas to which the autoscaler "
             "can scale down.",
             0,
             [](const json::object& obj, TimePoint) -> json::value {
               std::optional<int64_t> min = IntAt(obj, "spec.minReplicas");
               return json::string(min ? std::to_string(*min) : "<unset>");
             }),
      Column("MaxPods", "string",
             "maxReplicas is the upper limit for the number of pods that can be set by the "
             "autoscaler.",
             0, IntCell("spec.maxReplicas")),
      Column("Replicas", "string",
             "currentReplicas is current number of replicas of pods managed by this autoscaler.", 0,
             IntCell("status.currentReplicas")),
      AgeColumn()};
}

Resource HpaResource(std::string version) {
  Resource r =
      MakeResource("autoscaling", version, "HorizontalPodAutoscaler", "horizontalpodautoscalers",
                   true, "io.k8s.api.autoscaling." + version + ".HorizontalPodAutoscaler");
  r.short_names = {"hpa"};
  r.categories = {"all"};
  r.has_status = true;
  r.storage_version = "v2";
  r.columns = HpaColumns(version == "v1");
  return r;
}

}  // namespace

Resource HorizontalPodAutoscalerV2Resource() {
  Resource r = HpaResource("v2");
  r.default_fn = DefaultHpaV2;
  r.validate_fn = ValidateHpaV2;
  return r;
}

Resource HorizontalPodAutoscalerV1Resource() {
  Resource r = HpaResource("v1");
  r.convert = ConvertHorizontalPodAutoscaler;
  r.default_fn = DefaultHpaV1;
  r.validate_fn = ValidateHpaV1;
  return r;
}

}  // namespace flotilla::api::kinds
