// HpaController's metric side: the pod selector from the target's Scale,
// one replica proposal per spec.metrics entry (computeReplicasForMetric and
// computeStatusFor*Metric), and the ScalingActive condition.
#include <algorithm>
#include <string>

#include "api/hpa/quantity.h"
#include "api/hpa/status.h"
#include "base/mutex.h"
#include "member/hpa/hpa_controller.h"
#include "member/hpa/replica_calculator.h"

namespace flotilla::member::hpa {

using api::hpa::FormatMilli;
using api::hpa::ParseMilli;
using api::hpa::SetCondition;
namespace {

// A failed metric: the Warning event's reason, the message of its event and
// ScalingActive condition (`inner`), and the error it adds to the sync's
// ("failed to get cpu resource metric value: ...").
struct MetricFailure {
  std::string reason, inner, outer;
};

MetricFailure Unsupported(const json::object& metric, const std::string& ns) {
  std::string type = StringAt(metric, "type");
  const std::string no_custom =
      "unable to fetch metrics from custom metrics API: no custom metrics API "
      "(custom.metrics.k8s.io) registered";
  if (type == "Pods") {
    std::string name = StringAt(metric, "pods.metric.name");
    std::string inner = "unable to get metric " + name + ": " + no_custom;
    return {"FailedGetPodsMetric", inner, "failed to get pods metric value: " + inner};
  }
  if (type == "Object") {
    std::string name = StringAt(metric, "object.metric.name");
    std::string inner = "unable to get metric " + name + ": " + no_custom;
    return {"FailedGetObjectMetric", inner, "failed to get object metric value: " + inner};
  }
  if (type == "External") {
    std::string name = StringAt(metric, "external.metric.name");
    std::string inner = "unable to get external metric " + ns + "/" + name +
                        ": unable to fetch metrics from external metrics API: no external "
                        "metrics API (external.metrics.k8s.io) registered";
    return {"FailedGetExternalMetric", "failed to get " + name + " external metric: " + inner,
            "failed to get " + name + " external metric value: " + inner};
  }
  if (type == "ContainerResource") {
    std::string resource = StringAt(metric, "containerResource.name");
    std::string inner = "failed to get " + resource + " utilization: unable to get metrics for " +
                        "resource " + resource + ": container metrics are not simulated";
    return {"FailedGetContainerResourceMetric", inner,
            "failed to get " + StringAt(metric, "containerResource.container") +
                " container metric value: " + inner};
  }
  std::string inner = "unknown metric source type \"" + type + "\"";
  return {"InvalidMetricSourceType", inner, inner};
}

}  // namespace

// validateAndParseSelector.
StatusOr<api::LabelSelector> HpaController::PodSelector(Sync& s, const json::object& scale) {
  std::string text = StringAt(scale, "status.selector");
  if (text.empty()) {
    ctx_.events.Event(s.hpa, runtime::kEventTypeWarning, "SelectorRequired",
                      "selector is required");
    SetCondition(s.status, "ScalingActive", false, "InvalidSelector",
                 "the HPA target's scale is missing a selector", s.now);
    return Status::Invalid("selector is required");
  }
  StatusOr<api::LabelSelector> selector = api::LabelSelector::Parse(text);
  if (!selector.ok()) {
    std::string msg = "couldn't convert selector into a corresponding internal selector object: " +
                      selector.status().message();
    ctx_.events.Event(s.hpa, runtime::kEventTypeWarning, "InvalidSelector", msg);
    SetCondition(s.status, "ScalingActive", false, "InvalidSelector", msg, s.now);
    return Status::Invalid(msg);
  }
  MutexLock lock(mu_);
  selectors_.insert_or_assign(s.key, *selector);
  return selector;
}

std::vector<std::string> HpaController::OtherHpasSelecting(
    const std::string& key, const std::vector<runtime::ObjectPtr>& pods) {
  std::string ns_prefix = key.substr(0, key.find('/') + 1);
  std::vector<std::string> out;
  MutexLock lock(mu_);
  for (const auto& [other, selector] : selectors_) {
    if (other == key || other.compare(0, ns_prefix.size(), ns_prefix) != 0) continue;
    for (const runtime::ObjectPtr& pod : pods) {
      if (selector.MatchesObject(*pod)) {
        out.push_back(other);
        break;
      }
    }
  }
  return out;
}

HpaController::MetricsResult HpaController::ComputeReplicasForMetrics(Sync& s,
                                                                      const json::object& scale,
                                                                      int64_t current) {
  MetricsResult out;
  StatusOr<api::LabelSelector> selector = PodSelector(s, scale);
  if (!selector.ok()) {
    out.replicas = -1;
    out.error = selector.status().message();
    return out;
  }
  std::vector<runtime::ObjectPtr> pods =
      pods_.lister().List(StringAt(s.hpa, "metadata.namespace"), *selector);
  if (std::vector<std::string> others = OtherHpasSelecting(s.key, pods); !others.empty()) {
    others.insert(std::lower_bound(others.begin(), others.end(), s.key), s.key);
    std::string list;
    for (const std::string& k : others) list += (list.empty() ? "" : " ") + k;
    std::string msg = "pods by selector " + selector->ToString() +
                      " are controlled by multiple HPAs: [" + list + "]";
    ctx_.events.Event(s.hpa, runtime::kEventTypeWarning, "AmbiguousSelector", msg);
    SetCondition(s.status, "ScalingActive", false, "AmbiguousSelector", msg, s.now);
    out.replicas = -1;
    out.error = msg;
    return out;
  }
  const json::value* specs = Find(s.hpa, "spec.metrics");
  const json::array& metrics = specs && specs->is_array() ? specs->get_array() : json::array();
  json::array statuses(metrics.size(), json::object{{"type", ""}});
  for (size_t i = 0; i < metrics.size(); ++i) {
    if (metrics[i].is_object()) {
      ComputeMetric(s, metrics[i].get_object(), current, pods, out, statuses[i]);
    }
  }
  out.statuses = std::move(statuses);
  if (out.invalid > 0) {
    out.error = "invalid metrics (" + std::to_string(out.invalid) + " invalid out of " +
                std::to_string(metrics.size()) + "), first error is: " + out.error;
  }
  if (out.invalid >= static_cast<int>(metrics.size()) ||
      (out.invalid > 0 && out.replicas < current)) {
    const json::object& c = out.invalid_condition;
    SetCondition(s.status, "ScalingActive", false, StringAt(c, "reason"), StringAt(c, "message"),
                 s.now);
    out.replicas = -1;
    return out;
  }
  SetCondition(s.status, "ScalingActive", true, "ValidMetricFound",
               "the HPA was able to successfully calculate a replica count from " + out.metric,
               s.now);
  return out;
}

// computeReplicasForMetric for one metric: a proposal into `out` and the
// metric's status, or a failure counted in `out`.
void HpaController::ComputeMetric(Sync& s, const json::object& metric, int64_t current,
                                  const std::vector<runtime::ObjectPtr>& pods, MetricsResult& out,
                                  json::value& status) {
  std::string ns = StringAt(s.hpa, "metadata.namespace");
  std::optional<MetricFailure> failure;
  if (StringAt(metric, "type") != "Resource") failure = Unsupported(metric, ns);
  std::string resource = StringAt(metric, "resource.name");
  ResourceTarget target;
  if (const json::value* avg = Find(metric, "resource.target.averageValue");
      avg && !avg->is_null()) {
    target.average_milli = ParseMilli(*avg);
  } else if (const json::value* u = Find(metric, "resource.target.averageUtilization");
             u && (u->is_int64() || u->is_uint64())) {
    target.utilization = u->to_number<int64_t>();
  }
  if (!failure && !target.average_milli && !target.utilization) {
    std::string inner =
        "invalid resource metric source: neither an average utilization target nor an average "
        "value (usage) target was set";
    failure = MetricFailure{"FailedGetResourceMetric", inner,
                            "failed to get " + resource + " resource metric value: " + inner};
  }
  StatusOr<ResourceProposal> proposal = Status::Internal("no proposal");
  if (!failure) {
    std::string kind = StringAt(s.hpa, "spec.scaleTargetRef.kind");
    int64_t demand =
        ctx_.demand.Get(kind, ns, StringAt(s.hpa, "spec.scaleTargetRef.name")).value_or(0);
    proposal =
        ResourceReplicas(current, target, resource, SimulatedMetrics(pods, resource, demand), pods);
    if (!proposal.ok()) {
      std::string inner = "failed to get " + resource +
                          (target.utilization ? " utilization: " : " usage: ") +
                          proposal.status().message();
      failure = MetricFailure{"FailedGetResourceMetric", inner,
                              "failed to get " + resource + " resource metric value: " + inner};
    }
  }
  if (failure) {
    ctx_.events.Event(s.hpa, runtime::kEventTypeWarning, failure->reason, failure->inner);
    if (out.invalid++ == 0) {
      out.error = failure->outer;
      out.invalid_condition = {
          {"reason", failure->reason},
          {"message", "the HPA was unable to compute the replica count: " + failure->inner}};
    }
    return;
  }
  json::object value{{"averageValue", FormatMilli(proposal->average_milli)}};
  if (proposal->utilization) value["averageUtilization"] = *proposal->utilization;
  status = json::object{{"type", "Resource"},
                        {"resource", {{"name", resource}, {"current", std::move(value)}}}};
  if (out.replicas == 0 || proposal->replicas > out.replicas) {
    out.replicas = proposal->replicas;
    out.metric = resource + (target.utilization ? " resource utilization (percentage of request)"
                                                : " resource");
  }
}

}  // namespace flotilla::member::hpa
