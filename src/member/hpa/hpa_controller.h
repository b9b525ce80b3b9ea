// The member's HorizontalPodAutoscaler controller (kube-controller-manager's
// podautoscaler, DESIGN §4). Every SimulationOptions::hpa_sync_period on the
// member's clock, and at once when an HPA is created or its spec changes,
// it reads the HPA's scale target through the scale subresource
// (Deployment, ReplicaSet or StatefulSet of apps/*), lists the target's pods
// by the Scale's status.selector from the shared pods informer, computes the
// desired replicas per metric from the simulated metrics (the workload's
// WorkloadDemand spread over its ready pods; see replica_calculator.h),
// takes the highest, stabilizes and limits it (scale_history.h), writes the
// target's scale when it changes, and writes the HPA's v2 status
// (currentReplicas, desiredReplicas, lastScaleTime, currentMetrics,
// observedGeneration, conditions AbleToScale / ScalingActive /
// ScalingLimited) with Kubernetes' reasons, messages and events.
//
// Resource metrics for cpu and memory are served (memory usage reads as 0);
// Pods, Object, External and ContainerResource metrics have no simulated
// source and fail as they do on a cluster without that metrics API.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "api/labels.h"
#include "base/mutex.h"
#include "member/context.h"
#include "member/hpa/scale_history.h"

namespace flotilla::member::hpa {

class HpaController : public Component {
 public:
  static constexpr std::string_view kName = "horizontal-pod-autoscaler";

  explicit HpaController(ControllerContext& ctx);

 private:
  // One sync of one HPA: a private copy of it and the status being built.
  struct Sync {
    std::string key;
    json::object hpa;
    json::object status;  // conditions and previous fields; rebuilt at the end
    TimePoint now;
  };
  // computeReplicasForMetrics' result.
  struct MetricsResult {
    int64_t replicas = 0;  // -1: no usable proposal (`error` says why)
    std::string metric;    // the metric behind `replicas`, for events
    json::value statuses;  // array of MetricStatus, one per spec.metrics
    std::string error;
    int invalid = 0;
    json::object invalid_condition;  // the first failing metric's ScalingActive
  };

  StatusOr<runtime::Result> Reconcile(const std::string& key);
  void Autoscale(Sync& s);
  void RescaleTo(Sync& s, const client::ResourceRef& target, int64_t current, int64_t desired,
                 const std::string& reason, json::value statuses);
  MetricsResult ComputeReplicasForMetrics(Sync& s, const json::object& scale, int64_t current);
  void ComputeMetric(Sync& s, const json::object& metric, int64_t current,
                     const std::vector<runtime::ObjectPtr>& pods, MetricsResult& out,
                     json::value& status);
  StatusOr<api::LabelSelector> PodSelector(Sync& s, const json::object& scale);
  // The keys of the other HPAs whose last selector matches one of `pods`.
  std::vector<std::string> OtherHpasSelecting(const std::string& key,
                                              const std::vector<runtime::ObjectPtr>& pods);
  Status WriteStatusIfChanged(Sync& s);
  ScaleHistory& HistoryFor(const std::string& key);
  void Enqueue(const runtime::ObjectPtr& obj);

  ControllerContext ctx_;
  runtime::Informer& hpas_;
  runtime::Informer& pods_;
  runtime::Controller* controller_ = nullptr;

  Mutex mu_;
  std::map<std::string, ScaleHistory> history_ GUARDED_BY(mu_);  // by HPA key
  // The pod selector each HPA used last, to find pods two HPAs select.
  std::map<std::string, api::LabelSelector> selectors_ GUARDED_BY(mu_);  // by HPA key
};

}  // namespace flotilla::member::hpa
