// A federated HPA's status (status.h).
#include "federation/hpa/status.h"

#include <algorithm>
#include <cmath>

#include "api/conditions.h"
#include "api/hpa/quantity.h"
#include "api/hpa/status.h"
#include "api/views.h"

namespace flotilla::federation::hpa {
namespace {

const json::array* ArrayAt(const json::object& obj, std::string_view path) {
  const json::value* v = Find(obj, path);
  return v != nullptr && v->is_array() ? &v->get_array() : nullptr;
}

// The "current" or "target" block of a metric (spec or status) of any type:
// metric.resource.current, metric.pods.target, ...
const json::object* Block(const json::object& metric, std::string_view which) {
  for (const char* source : {"resource", "containerResource", "pods", "object", "external"}) {
    const json::value* s = metric.if_contains(source);
    if (s == nullptr || !s->is_object()) continue;
    const json::value* b = s->get_object().if_contains(which);
    if (b != nullptr && b->is_object()) return &b->get_object();
  }
  return nullptr;
}

std::optional<double> Ratio(const json::object& current, const json::object& target) {
  if (const json::value* t = target.if_contains("averageUtilization"); t != nullptr) {
    const json::value* c = current.if_contains("averageUtilization");
    if (c == nullptr || !t->is_number() || !c->is_number() || t->to_number<double>() <= 0) {
      return std::nullopt;
    }
    return c->to_number<double>() / t->to_number<double>();
  }
  for (const char* field : {"averageValue", "value"}) {
    const json::value* t = target.if_contains(field);
    const json::value* c = current.if_contains(field);
    if (t == nullptr || c == nullptr) continue;
    std::optional<int64_t> tm = api::hpa::ParseMilli(*t);
    std::optional<int64_t> cm = api::hpa::ParseMilli(*c);
    if (!tm || !cm || *tm <= 0) return std::nullopt;
    return static_cast<double>(*cm) / static_cast<double>(*tm);
  }
  return std::nullopt;
}

const json::object* Condition(const json::object& hpa, std::string_view type) {
  return api::ConditionOf(hpa, type);
}

// The metric statuses averaged over the locals, one per federated metric.
json::array AverageMetrics(const json::object& fed, const std::vector<LocalHpa>& locals) {
  json::array out;
  const json::array* metrics = ArrayAt(fed, "spec.metrics");
  if (metrics == nullptr) return out;
  for (size_t j = 0; j < metrics->size(); ++j) {
    const json::value* type =
        (*metrics)[j].is_object() ? (*metrics)[j].get_object().if_contains("type") : nullptr;
    const json::object* first = nullptr;
    double weight = 0, utilization = 0, average = 0, value = 0;
    bool has_utilization = false, has_average = false, has_value = false;
    for (const LocalHpa& l : locals) {
      if (l.local == nullptr) continue;
      const json::array* current = ArrayAt(*l.local, "status.currentMetrics");
      if (current == nullptr || j >= current->size() || !(*current)[j].is_object()) continue;
      const json::object& m = (*current)[j].get_object();
      const json::value* mtype = m.if_contains("type");
      if (type == nullptr || mtype == nullptr || *mtype != *type) continue;
      const json::object* c = Block(m, "current");
      if (c == nullptr) continue;
      double w =
          static_cast<double>(std::max<int64_t>(api::HpaView(*l.local).current_replicas(), 0));
      if (w == 0) continue;
      if (first == nullptr) first = &m;
      weight += w;
      if (const json::value* u = c->if_contains("averageUtilization"); u && u->is_number()) {
        utilization += w * u->to_number<double>();
        has_utilization = true;
      }
      if (const json::value* a = c->if_contains("averageValue")) {
        if (auto milli = api::hpa::ParseMilli(*a)) {
          average += w * static_cast<double>(*milli);
          has_average = true;
        }
      }
      if (const json::value* v = c->if_contains("value")) {
        if (auto milli = api::hpa::ParseMilli(*v)) {
          value += w * static_cast<double>(*milli);
          has_value = true;
        }
      }
    }
    if (first == nullptr) {
      out.push_back(json::object{{"type", type != nullptr ? *type : json::value("")}});
      continue;
    }
    json::object m = *first;
    json::object current;
    if (has_value) current["value"] = api::hpa::FormatMilli(std::llround(value / weight));
    if (has_average) {
      current["averageValue"] = api::hpa::FormatMilli(std::llround(average / weight));
    }
    if (has_utilization) current["averageUtilization"] = std::llround(utilization / weight);
    for (const char* source : {"resource", "containerResource", "pods", "object", "external"}) {
      json::value* s = m.if_contains(source);
      if (s != nullptr && s->is_object()) s->get_object()["current"] = current;
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

std::optional<double> LoadOf(const json::object& hpa) {
  const json::array* spec = ArrayAt(hpa, "spec.metrics");
  const json::array* status = ArrayAt(hpa, "status.currentMetrics");
  if (spec == nullptr || status == nullptr) return std::nullopt;
  std::optional<double> out;
  for (size_t i = 0; i < spec->size() && i < status->size(); ++i) {
    if (!(*spec)[i].is_object() || !(*status)[i].is_object()) continue;
    const json::object* target = Block((*spec)[i].get_object(), "target");
    const json::object* current = Block((*status)[i].get_object(), "current");
    if (target == nullptr || current == nullptr) continue;
    std::optional<double> r = Ratio(*current, *target);
    if (r && (!out || *r > *out)) out = r;
  }
  return out;
}

json::object AggregateStatus(const json::object& fed, const std::vector<LocalHpa>& locals,
                             TimePoint now) {
  json::object working;
  if (const json::value* s = fed.if_contains("status"); s != nullptr && s->is_object()) {
    if (const json::value* c = s->get_object().if_contains("conditions"))
      working["conditions"] = *c;
  }
  int64_t current = 0, desired = 0;
  std::string last_scale;
  std::string unable, unable_reason, inactive, inactive_reason;
  bool active = false;
  int with_status = 0;
  for (const LocalHpa& l : locals) {
    if (l.local == nullptr) continue;
    api::HpaView local(*l.local);
    current += local.current_replicas();
    desired += local.desired_replicas();
    std::string scaled(StringAt(*l.local, "status.lastScaleTime"));
    last_scale = std::max(last_scale, scaled);
    const json::object* able = Condition(*l.local, "AbleToScale");
    const json::object* scaling = Condition(*l.local, "ScalingActive");
    if (able != nullptr || scaling != nullptr) ++with_status;
    if (able != nullptr && GetString(*able, "status") == "False" && unable.empty()) {
      unable_reason = GetString(*able, "reason").value_or("");
      unable =
          "cluster " + l.cluster + ": " + std::string(GetString(*able, "message").value_or(""));
    }
    if (scaling != nullptr && GetString(*scaling, "status") == "True") {
      active = true;
    } else if (scaling != nullptr && inactive.empty()) {
      inactive_reason = GetString(*scaling, "reason").value_or("");
      inactive =
          "cluster " + l.cluster + ": " + std::string(GetString(*scaling, "message").value_or(""));
    }
  }
  if (locals.empty()) {
    api::hpa::SetCondition(working, "AbleToScale", false, "NoClusters",
                           "no ready cluster to run a local HorizontalPodAutoscaler in", now);
  } else if (!unable.empty()) {
    api::hpa::SetCondition(working, "AbleToScale", false, unable_reason, unable, now);
  } else if (with_status > 0) {
    api::hpa::SetCondition(working, "AbleToScale", true, "SucceededGetScale",
                           "the local HPA controllers were able to get the target's current scale",
                           now);
  }
  if (active) {
    api::hpa::SetCondition(working, "ScalingActive", true, "ValidMetricFound",
                           "the local HPAs were able to compute replica counts from their metrics",
                           now);
  } else if (locals.empty()) {
    api::hpa::SetCondition(working, "ScalingActive", false, "NoClusters",
                           "no ready cluster to run a local HorizontalPodAutoscaler in", now);
  } else if (!inactive.empty()) {
    api::hpa::SetCondition(working, "ScalingActive", false, inactive_reason, inactive, now);
  }
  int64_t max = api::HpaView(fed).max_replicas();
  if (with_status > 0) {
    if (desired >= max) {
      api::hpa::SetCondition(
          working, "ScalingLimited", true, "TooManyReplicas",
          "the desired replica count reached the federation-wide maximum of " + std::to_string(max),
          now);
    } else {
      api::hpa::SetCondition(working, "ScalingLimited", false, "DesiredWithinRange",
                             "the desired count is within the acceptable range", now);
    }
  }
  json::object status;
  if (int64_t g = api::ObjectView(fed).generation(); g > 0) status["observedGeneration"] = g;
  if (!last_scale.empty()) status["lastScaleTime"] = last_scale;
  status["currentReplicas"] = current;
  status["desiredReplicas"] = desired;
  json::array metrics = AverageMetrics(fed, locals);
  if (!metrics.empty()) status["currentMetrics"] = std::move(metrics);
  if (const json::value* c = working.if_contains("conditions")) status["conditions"] = *c;
  return status;
}

std::string BreakdownAnnotation(const std::vector<LocalHpa>& locals) {
  json::object clusters;
  for (const LocalHpa& l : locals) {
    json::object c{{"minReplicas", l.shares.min}, {"maxReplicas", l.shares.max}};
    if (l.local != nullptr) {
      api::HpaView local(*l.local);
      c["currentReplicas"] = local.current_replicas();
      c["desiredReplicas"] = local.desired_replicas();

      if (std::optional<double> load = LoadOf(*l.local)) {
        c["utilization"] = std::llround(*load * 100);
      }
    }
    c["frozen"] = l.frozen;
    clusters[l.cluster] = std::move(c);
  }
  return json::serialize(json::object{{"clusters", std::move(clusters)}});
}

}  // namespace flotilla::federation::hpa
