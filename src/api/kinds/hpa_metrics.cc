#include "api/kinds/hpa_metrics.h"

#include <cctype>

#include "api/kinds/util.h"

namespace flotilla::api::kinds {
namespace {

const json::value* Set(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && !v->is_null() ? v : nullptr;
}

// to[key] = from[from_key] when that is set.
void Copy(json::object& to, std::string_view key, const json::object& from,
          std::string_view from_key) {
  if (const json::value* v = Set(from, from_key)) to[key] = *v;
}

// A string field with omitempty.
void CopyNonEmpty(json::object& to, const json::object& from, std::string_view key) {
  std::string v = StringAt(from, key);
  if (!v.empty()) to[key] = v;
}

// A required Quantity: Go writes its zero value as "0".
json::value QuantityOrZero(const json::object& o, std::string_view key) {
  const json::value* v = Set(o, key);
  return v ? *v : json::value("0");
}

json::value StringOrEmpty(const json::object& o, std::string_view key) {
  const json::value* v = Set(o, key);
  return v ? *v : json::value("");
}

// CrossVersionObjectReference: kind, name, apiVersion (omitempty).
json::object ObjectRef(const json::object& ref) {
  json::object out{{"kind", StringOrEmpty(ref, "kind")}, {"name", StringOrEmpty(ref, "name")}};
  std::string api_version = StringAt(ref, "apiVersion");
  if (!api_version.empty()) out["apiVersion"] = api_version;
  return out;
}

json::object Identifier(const json::object& from, std::string_view name_key,
                        std::string_view selector_key) {
  json::object out{{"name", StringOrEmpty(from, name_key)}};
  Copy(out, "selector", from, selector_key);
  return out;
}

// Each metric source, in Go's field order, with its converter.
using SourceFn = json::object (*)(const json::object&);
struct Source {
  std::string_view key;
  SourceFn fn;
};

json::object ConvertSources(const json::object& in, const Source (&sources)[5]) {
  json::object out{{"type", StringOrEmpty(in, "type")}};
  for (const Source& s : sources) {
    if (const json::object* src = GetObject(in, s.key)) out[s.key] = s.fn(*src);
  }
  return out;
}

// ---- v2 spec -> v1 ----
json::object ObjectSpecToV1(const json::object& s) {
  json::object out{{"target", ObjectRef(ObjectOr(s, "describedObject"))},
                   {"metricName", StringOrEmpty(ObjectOr(s, "metric"), "name")},
                   {"targetValue", QuantityOrZero(ObjectOr(s, "target"), "value")}};
  Copy(out, "selector", ObjectOr(s, "metric"), "selector");
  Copy(out, "averageValue", ObjectOr(s, "target"), "averageValue");
  return out;
}

json::object PodsSpecToV1(const json::object& s) {
  json::object out{{"metricName", StringOrEmpty(ObjectOr(s, "metric"), "name")},
                   {"targetAverageValue", QuantityOrZero(ObjectOr(s, "target"), "averageValue")}};
  Copy(out, "selector", ObjectOr(s, "metric"), "selector");
  return out;
}

json::object ResourceSpecToV1(const json::object& s) {
  json::object out{{"name", StringOrEmpty(s, "name")}};
  Copy(out, "targetAverageUtilization", ObjectOr(s, "target"), "averageUtilization");
  Copy(out, "targetAverageValue", ObjectOr(s, "target"), "averageValue");
  return out;
}

json::object ContainerSpecToV1(const json::object& s) {
  json::object out = ResourceSpecToV1(s);
  out["container"] = StringOrEmpty(s, "container");
  return out;
}

json::object ExternalSpecToV1(const json::object& s) {
  json::object out{{"metricName", StringOrEmpty(ObjectOr(s, "metric"), "name")}};
  Copy(out, "metricSelector", ObjectOr(s, "metric"), "selector");
  Copy(out, "targetValue", ObjectOr(s, "target"), "value");
  Copy(out, "targetAverageValue", ObjectOr(s, "target"), "averageValue");
  return out;
}

// ---- v1 spec -> v2 ----
json::object Target(std::string_view type) { return json::object{{"type", type}}; }

json::object ObjectSpecToV2(const json::object& s) {
  json::object target = Target(Set(s, "averageValue") ? "AverageValue" : "Value");
  target["value"] = QuantityOrZero(s, "targetValue");
  Copy(target, "averageValue", s, "averageValue");
  return json::object{{"describedObject", ObjectRef(ObjectOr(s, "target"))},
                      {"target", std::move(target)},
                      {"metric", Identifier(s, "metricName", "selector")}};
}

json::object PodsSpecToV2(const json::object& s) {
  json::object target = Target("AverageValue");
  target["averageValue"] = QuantityOrZero(s, "targetAverageValue");
  return json::object{{"metric", Identifier(s, "metricName", "selector")},
                      {"target", std::move(target)}};
}

json::object ResourceSpecToV2(const json::object& s) {
  json::object target = Target(Set(s, "targetAverageUtilization") ? "Utilization" : "AverageValue");
  Copy(target, "averageValue", s, "targetAverageValue");
  Copy(target, "averageUtilization", s, "targetAverageUtilization");
  return json::object{{"name", StringOrEmpty(s, "name")}, {"target", std::move(target)}};
}

json::object ContainerSpecToV2(const json::object& s) {
  json::object out = ResourceSpecToV2(s);
  out["container"] = StringOrEmpty(s, "container");
  return out;
}

json::object ExternalSpecToV2(const json::object& s) {
  json::object target = Target(Set(s, "targetValue") ? "Value" : "AverageValue");
  Copy(target, "value", s, "targetValue");
  Copy(target, "averageValue", s, "targetAverageValue");
  return json::object{{"metric", Identifier(s, "metricName", "metricSelector")},
                      {"target", std::move(target)}};
}

// ---- v2 status -> v1 ----
json::object ObjectStatusToV1(const json::object& s) {
  json::object out{{"target", ObjectRef(ObjectOr(s, "describedObject"))},
                   {"metricName", StringOrEmpty(ObjectOr(s, "metric"), "name")},
                   {"currentValue", QuantityOrZero(ObjectOr(s, "current"), "value")}};
  Copy(out, "selector", ObjectOr(s, "metric"), "selector");
  Copy(out, "averageValue", ObjectOr(s, "current"), "averageValue");
  return out;
}

json::object PodsStatusToV1(const json::object& s) {
  json::object out{{"metricName", StringOrEmpty(ObjectOr(s, "metric"), "name")},
                   {"currentAverageValue", QuantityOrZero(ObjectOr(s, "current"), "averageValue")}};
  Copy(out, "selector", ObjectOr(s, "metric"), "selector");
  return out;
}

json::object ResourceStatusToV1(const json::object& s) {
  json::object out{{"name", StringOrEmpty(s, "name")}};
  Copy(out, "currentAverageUtilization", ObjectOr(s, "current"), "averageUtilization");
  out["currentAverageValue"] = QuantityOrZero(ObjectOr(s, "current"), "averageValue");
  return out;
}

json::object ContainerStatusToV1(const json::object& s) {
  json::object out = ResourceStatusToV1(s);
  out["container"] = StringOrEmpty(s, "container");
  return out;
}

json::object ExternalStatusToV1(const json::object& s) {
  json::object out{{"metricName", StringOrEmpty(ObjectOr(s, "metric"), "name")}};
  Copy(out, "metricSelector", ObjectOr(s, "metric"), "selector");
  out["currentValue"] = QuantityOrZero(ObjectOr(s, "current"), "value");
  Copy(out, "currentAverageValue", ObjectOr(s, "current"), "averageValue");
  return out;
}

// ---- v1 status -> v2 ----
json::object ObjectStatusToV2(const json::object& s) {
  json::object current{{"value", QuantityOrZero(s, "currentValue")}};
  Copy(current, "averageValue", s, "averageValue");
  return json::object{{"metric", Identifier(s, "metricName", "selector")},
                      {"current", std::move(current)},
                      {"describedObject", ObjectRef(ObjectOr(s, "target"))}};
}

json::object PodsStatusToV2(const json::object& s) {
  return json::object{
      {"metric", Identifier(s, "metricName", "selector")},
      {"current", json::object{{"averageValue", QuantityOrZero(s, "currentAverageValue")}}}};
}

json::object ResourceStatusToV2(const json::object& s) {
  json::object current{{"averageValue", QuantityOrZero(s, "currentAverageValue")}};
  Copy(current, "averageUtilization", s, "currentAverageUtilization");
  return json::object{{"name", StringOrEmpty(s, "name")}, {"current", std::move(current)}};
}

json::object ContainerStatusToV2(const json::object& s) {
  json::object out = ResourceStatusToV2(s);
  out["container"] = StringOrEmpty(s, "container");
  return out;
}

json::object ExternalStatusToV2(const json::object& s) {
  json::object current{{"value", QuantityOrZero(s, "currentValue")}};
  Copy(current, "averageValue", s, "currentAverageValue");
  return json::object{{"metric", Identifier(s, "metricName", "metricSelector")},
                      {"current", std::move(current)}};
}

// ---- behavior ----
json::value RulesToInternal(const json::object* rules) {
  if (rules == nullptr) return nullptr;
  json::object out;
  const json::value* window = Set(*rules, "stabilizationWindowSeconds");
  const json::value* select = Set(*rules, "selectPolicy");
  out["StabilizationWindowSeconds"] = window ? *window : json::value(nullptr);
  out["SelectPolicy"] = select ? *select : json::value(nullptr);
  json::value policies = nullptr;
  if (const json::array* list = GetArray(*rules, "policies")) {
    json::array converted;
    for (const json::value& p : *list) {
      const json::object& policy = p.is_object() ? p.get_object() : EmptyObject();
      converted.push_back(json::object{{"Type", StringOrEmpty(policy, "type")},
                                       {"Value", IntOr(policy, "value", 0)},
                                       {"PeriodSeconds", IntOr(policy, "periodSeconds", 0)}});
    }
    policies = std::move(converted);
  }
  out["Policies"] = std::move(policies);
  return out;
}

// o[key] with the key matched case-insensitively; null when absent.
const json::value* FindFold(const json::object& o, std::string_view key) {
  for (const auto& [k, v] : o) {
    if (k.size() != key.size()) continue;
    bool same = true;
    for (size_t i = 0; i < k.size() && same; ++i) {
      same = std::tolower(static_cast<unsigned char>(k[i])) ==
             std::tolower(static_cast<unsigned char>(key[i]));
    }
    if (same && !v.is_null()) return &v;
  }
  return nullptr;
}

std::optional<json::object> RulesFromInternal(const json::value* v) {
  if (v == nullptr || !v->is_object()) return std::nullopt;
  const json::object& in = v->get_object();
  json::object out;
  if (const json::value* w = FindFold(in, "stabilizationwindowseconds")) {
    out["stabilizationWindowSeconds"] = *w;
  }
  if (const json::value* s = FindFold(in, "selectpolicy")) out["selectPolicy"] = *s;
  const json::value* list = FindFold(in, "policies");
  if (list != nullptr && list->is_array() && !list->get_array().empty()) {
    json::array policies;
    for (const json::value& p : list->get_array()) {
      const json::object& policy = p.is_object() ? p.get_object() : EmptyObject();
      const json::value* type = FindFold(policy, "type");
      const json::value* value = FindFold(policy, "value");
      const json::value* period = FindFold(policy, "periodseconds");
      policies.push_back(json::object{{"type", type ? *type : json::value("")},
                                      {"value", value ? *value : json::value(0)},
                                      {"periodSeconds", period ? *period : json::value(0)}});
    }
    out["policies"] = std::move(policies);
  }
  return out;
}

constexpr Source kSpecToV1[5] = {{"object", ObjectSpecToV1},
                                 {"pods", PodsSpecToV1},
                                 {"resource", ResourceSpecToV1},
                                 {"containerResource", ContainerSpecToV1},
                                 {"external", ExternalSpecToV1}};
constexpr Source kSpecToV2[5] = {{"object", ObjectSpecToV2},
                                 {"pods", PodsSpecToV2},
                                 {"resource", ResourceSpecToV2},
                                 {"containerResource", ContainerSpecToV2},
                                 {"external", ExternalSpecToV2}};
constexpr Source kStatusToV1[5] = {{"object", ObjectStatusToV1},
                                   {"pods", PodsStatusToV1},
                                   {"resource", ResourceStatusToV1},
                                   {"containerResource", ContainerStatusToV1},
                                   {"external", ExternalStatusToV1}};
constexpr Source kStatusToV2[5] = {{"object", ObjectStatusToV2},
                                   {"pods", PodsStatusToV2},
                                   {"resource", ResourceStatusToV2},
                                   {"containerResource", ContainerStatusToV2},
                                   {"external", ExternalStatusToV2}};

}  // namespace

json::object MetricSpecToV1(const json::object& v2) { return ConvertSources(v2, kSpecToV1); }
json::object MetricSpecToV2(const json::object& v1) { return ConvertSources(v1, kSpecToV2); }
json::object MetricStatusToV1(const json::object& v2) { return ConvertSources(v2, kStatusToV1); }
json::object MetricStatusToV2(const json::object& v1) { return ConvertSources(v1, kStatusToV2); }

json::object ConditionToV1(const json::object& c) {
  json::object out{{"type", StringOrEmpty(c, "type")}, {"status", StringOrEmpty(c, "status")}};
  const json::value* t = Set(c, "lastTransitionTime");
  out["lastTransitionTime"] = t ? *t : json::value(nullptr);
  CopyNonEmpty(out, c, "reason");
  CopyNonEmpty(out, c, "message");
  return out;
}

json::object ConditionToV2(const json::object& c) {
  json::object out{{"type", StringOrEmpty(c, "type")}, {"status", StringOrEmpty(c, "status")}};
  Copy(out, "lastTransitionTime", c, "lastTransitionTime");
  CopyNonEmpty(out, c, "reason");
  CopyNonEmpty(out, c, "message");
  return out;
}

json::object BehaviorToInternalJson(const json::object& behavior) {
  return json::object{{"ScaleUp", RulesToInternal(GetObject(behavior, "scaleUp"))},
                      {"ScaleDown", RulesToInternal(GetObject(behavior, "scaleDown"))}};
}

std::optional<json::object> BehaviorFromInternalJson(const json::value& v) {
  if (!v.is_object()) return std::nullopt;
  std::optional<json::object> up = RulesFromInternal(FindFold(v.get_object(), "scaleup"));
  std::optional<json::object> down = RulesFromInternal(FindFold(v.get_object(), "scaledown"));
  if (!up && !down) return std::nullopt;
  json::object out;
  if (up) out["scaleUp"] = std::move(*up);
  if (down) out["scaleDown"] = std::move(*down);
  return out;
}

}  // namespace flotilla::api::kinds
