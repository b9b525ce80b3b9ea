#include "api/kinds/hpa_convert.h"

#include "api/annotations.h"
#include "api/kinds/hpa_metrics.h"
#include "api/kinds/util.h"
#include "api/validation.h"

namespace flotilla::api::kinds {
namespace {

constexpr std::string_view kRoundTripAnnotations[] = {kMetricsAnnotation, kCurrentMetricsAnnotation,
                                                      kConditionsAnnotation, kBehaviorAnnotation};

void CopyIfSet(json::object& to, const json::object& from, std::string_view key) {
  const json::value* v = from.if_contains(key);
  if (v != nullptr && !v->is_null()) to[key] = *v;
}

json::object ScaleTargetRef(const json::object& ref) {
  json::object out{{"kind", json::string(StringAt(ref, "kind"))},
                   {"name", json::string(StringAt(ref, "name"))}};
  std::string api_version = StringAt(ref, "apiVersion");
  if (!api_version.empty()) out["apiVersion"] = api_version;
  return out;
}

// DropRoundTripHorizontalPodAutoscalerAnnotations; an emptied map goes away.
void DropRoundTripAnnotations(json::object& obj) {
  json::object* meta = MutableObject(obj, "metadata");
  json::object* annotations = meta ? MutableObject(*meta, "annotations") : nullptr;
  if (annotations == nullptr) return;
  bool dropped = false;
  for (std::string_view key : kRoundTripAnnotations)
    dropped = annotations->erase(key) > 0 || dropped;
  if (dropped && annotations->empty()) meta->erase("annotations");
}

void SetAnnotation(json::object& obj, std::string_view key, const json::value& value) {
  EnsureObject(EnsureObject(obj, "metadata"), "annotations")[key] = json::serialize(value);
}

// The objects of a JSON array in an annotation, each converted; nullopt when
// the annotation is absent, malformed (Kubernetes then ignores it) or empty.
std::optional<json::array> ParseList(const json::object& obj, std::string_view key,
                                     json::object (*convert)(const json::object&)) {
  std::string text = AnnotationAt(obj, key);
  if (text.empty()) return std::nullopt;
  StatusOr<json::value> parsed = ParseJson(text);
  if (!parsed.ok() || !parsed->is_array()) return std::nullopt;
  json::array out;
  for (const json::value& v : parsed->get_array()) {
    if (!v.is_object()) return std::nullopt;
    out.push_back(convert(v.get_object()));
  }
  if (out.empty()) return std::nullopt;
  return out;
}

bool IsCpu(const json::object& metric) {
  return StringAt(metric, "type") == "Resource" && StringAt(metric, "resource.name") == "cpu";
}

json::object CpuUtilizationMetric(const json::value& percent) {
  return json::object{
      {"type", "Resource"},
      {"resource", json::object{{"name", "cpu"},
                                {"target", json::object{{"type", "Utilization"},
                                                        {"averageUtilization", percent}}}}}};
}

json::object SpecToV1(const json::object& spec) {
  json::object out{{"scaleTargetRef", ScaleTargetRef(ObjectOr(spec, "scaleTargetRef"))}};
  CopyIfSet(out, spec, "minReplicas");
  out["maxReplicas"] = IntOr(spec, "maxReplicas", 0);
  for (const json::object* m : ObjectsAt(spec, "metrics")) {
    if (!IsCpu(*m)) continue;
    const json::value* u = Find(*m, "resource.target.averageUtilization");
    if (u != nullptr && !u->is_null()) out["targetCPUUtilizationPercentage"] = *u;
    break;
  }
  return out;
}

json::object StatusToV1(const json::object& status) {
  json::object out;
  CopyIfSet(out, status, "observedGeneration");
  CopyIfSet(out, status, "lastScaleTime");
  out["currentReplicas"] = IntOr(status, "currentReplicas", 0);
  out["desiredReplicas"] = IntOr(status, "desiredReplicas", 0);
  for (const json::object* m : ObjectsAt(status, "currentMetrics")) {
    const json::value* u = Find(*m, "resource.current.averageUtilization");
    if (IsCpu(*m) && u != nullptr && !u->is_null()) out["currentCPUUtilizationPercentage"] = *u;
  }
  return out;
}

// What v1 cannot hold goes to annotations.
void AnnotateV1(const json::object& v2, json::object& out) {
  json::array others;
  for (const json::object* m : ObjectsAt(v2, "spec.metrics")) {
    const json::value* u = Find(*m, "resource.target.averageUtilization");
    if (IsCpu(*m) && u != nullptr && !u->is_null()) continue;
    others.push_back(MetricSpecToV1(*m));
  }
  if (!others.empty()) SetAnnotation(out, kMetricsAnnotation, others);
  json::array current;
  for (const json::object* m : ObjectsAt(v2, "status.currentMetrics")) {
    current.push_back(MetricStatusToV1(*m));
  }
  if (!current.empty()) SetAnnotation(out, kCurrentMetricsAnnotation, current);
  if (const json::object* behavior = ObjectAt(v2, "spec.behavior")) {
    SetAnnotation(out, kBehaviorAnnotation, BehaviorToInternalJson(*behavior));
  }
  json::array conditions;
  for (const json::object* c : ObjectsAt(v2, "status.conditions")) {
    conditions.push_back(ConditionToV1(*c));
  }
  if (!conditions.empty()) SetAnnotation(out, kConditionsAnnotation, conditions);
}

json::object SpecToV2(const json::object& v1) {
  const json::object& spec = ObjectOr(v1, "spec");
  json::object out{{"scaleTargetRef", ScaleTargetRef(ObjectOr(spec, "scaleTargetRef"))}};
  CopyIfSet(out, spec, "minReplicas");
  out["maxReplicas"] = IntOr(spec, "maxReplicas", 0);
  json::array metrics;
  if (std::optional<json::array> others = ParseList(v1, kMetricsAnnotation, MetricSpecToV2)) {
    metrics = std::move(*others);
  }
  const json::value* cpu = spec.if_contains("targetCPUUtilizationPercentage");
  if (cpu != nullptr && !cpu->is_null()) metrics.push_back(CpuUtilizationMetric(*cpu));
  if (!metrics.empty()) out["metrics"] = std::move(metrics);
  std::string behavior = AnnotationAt(v1, kBehaviorAnnotation);
  StatusOr<json::value> parsed = ParseJson(behavior.empty() ? "null" : behavior);
  if (parsed.ok()) {
    if (std::optional<json::object> b = BehaviorFromInternalJson(*parsed)) out["behavior"] = *b;
  }
  return out;
}

std::optional<json::object> StatusToV2(const json::object& v1) {
  std::optional<json::array> current = ParseList(v1, kCurrentMetricsAnnotation, MetricStatusToV2);
  std::optional<json::array> conditions = ParseList(v1, kConditionsAnnotation, ConditionToV2);
  const json::object* status = GetObject(v1, "status");
  if (status == nullptr && !current && !conditions) return std::nullopt;
  const json::object& in = status ? *status : EmptyObject();
  json::object out;
  CopyIfSet(out, in, "observedGeneration");
  CopyIfSet(out, in, "lastScaleTime");
  out["currentReplicas"] = IntOr(in, "currentReplicas", 0);
  out["desiredReplicas"] = IntOr(in, "desiredReplicas", 0);
  const json::value* cpu = in.if_contains("currentCPUUtilizationPercentage");
  if (current) {
    out["currentMetrics"] = std::move(*current);
  } else if (cpu != nullptr && !cpu->is_null()) {
    out["currentMetrics"] = json::array{json::object{
        {"type", "Resource"},
        {"resource",
         json::object{{"name", "cpu"}, {"current", json::object{{"averageUtilization", *cpu}}}}}}};
  }
  if (conditions) out["conditions"] = std::move(*conditions);
  return out;
}

json::object ScalingRules(json::object defaults, const json::object* from) {
  if (from == nullptr) return defaults;
  for (std::string_view key : {"selectPolicy", "stabilizationWindowSeconds", "policies"}) {
    CopyIfSet(defaults, *from, key);
  }
  return defaults;
}

json::object Policy(std::string_view type, int64_t value) {
  return json::object{{"type", type}, {"value", value}, {"periodSeconds", 15}};
}

}  // namespace

json::object HpaV2ToV1(const json::object& v2) {
  json::object out{{"apiVersion", "autoscaling/v1"}, {"kind", "HorizontalPodAutoscaler"}};
  if (const json::value* meta = v2.if_contains("metadata")) out["metadata"] = *meta;
  DropRoundTripAnnotations(out);
  out["spec"] = SpecToV1(ObjectOr(v2, "spec"));
  if (const json::object* status = GetObject(v2, "status")) out["status"] = StatusToV1(*status);
  AnnotateV1(v2, out);
  return out;
}

json::object HpaV1ToV2(const json::object& v1) {
  json::object out{{"apiVersion", "autoscaling/v2"}, {"kind", "HorizontalPodAutoscaler"}};
  if (const json::value* meta = v1.if_contains("metadata")) out["metadata"] = *meta;
  out["spec"] = SpecToV2(v1);
  if (std::optional<json::object> status = StatusToV2(v1)) out["status"] = std::move(*status);
  DefaultHpaV2(out);
  return out;
}

StatusOr<json::object> ConvertHorizontalPodAutoscaler(json::object obj,
                                                      std::string_view to_version) {
  std::string from = StringAt(obj, "apiVersion");
  if (from == "autoscaling/" + std::string(to_version)) return obj;
  if (from == "autoscaling/v1" && to_version == "v2") return HpaV1ToV2(obj);
  if (from == "autoscaling/v2" && to_version == "v1") return HpaV2ToV1(obj);
  return Status::BadRequest("cannot convert HorizontalPodAutoscaler from " + QuoteGo(from) +
                            " to autoscaling/" + std::string(to_version));
}

void DefaultHpaV2(json::object& obj) {
  DropRoundTripAnnotations(obj);
  json::object& spec = EnsureObject(obj, "spec");
  SetIfUnset(spec, "minReplicas", 1);
  if (ObjectsAt(spec, "metrics").empty()) {
    spec["metrics"] = json::array{CpuUtilizationMetric(80)};
  }
  json::object* behavior = MutableObject(spec, "behavior");
  if (behavior == nullptr) return;
  json::object up{{"stabilizationWindowSeconds", 0},
                  {"selectPolicy", "Max"},
                  {"policies", json::array{Policy("Pods", 4), Policy("Percent", 100)}}};
  json::object down{{"selectPolicy", "Max"}, {"policies", json::array{Policy("Percent", 100)}}};
  json::object scale_up = ScalingRules(std::move(up), GetObject(*behavior, "scaleUp"));
  json::object scale_down = ScalingRules(std::move(down), GetObject(*behavior, "scaleDown"));
  (*behavior)["scaleUp"] = std::move(scale_up);
  (*behavior)["scaleDown"] = std::move(scale_down);
}

void DefaultHpaV1(json::object& obj) { SetIfUnset(EnsureObject(obj, "spec"), "minReplicas", 1); }

}  // namespace flotilla::api::kinds
