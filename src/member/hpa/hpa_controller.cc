#include "member/hpa/hpa_controller.h"

#include <spdlog/spdlog.h>

#include "api/hpa/status.h"
#include "base/mutex.h"

namespace flotilla::member::hpa {

using api::hpa::BuildStatus;
using api::hpa::DesiredReplicasOf;
using api::hpa::SetCondition;
namespace {

// The scale target's resource, as the RESTMapper would find it for the
// reference's group and kind (any version of the group).
StatusOr<client::ResourceRef> ScaleTargetResource(const json::object& ref) {
  std::string api_version = StringAt(ref, "apiVersion");
  std::string kind = StringAt(ref, "kind");
  size_t slash = api_version.find('/');
  if (slash != std::string::npos && api_version.find('/', slash + 1) != std::string::npos) {
    return Status::BadRequest("unexpected GroupVersion string: " + api_version);
  }
  std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
  if (group == "apps" && kind == "Deployment") return kDeployments;
  if (group == "apps" && kind == "ReplicaSet") return kReplicaSets;
  if (group == "apps" && kind == "StatefulSet") return kStatefulSets;
  return Status::NotFound("no matches for kind \"" + kind + "\" in group \"" + group + "\"");
}

}  // namespace

HpaController::HpaController(ControllerContext& ctx)
    : ctx_(ctx),
      hpas_(ctx.informers.For(kHorizontalPodAutoscalers)),
      pods_(ctx.informers.For(kPods)) {
  controller_ = &ctx.manager.AddController(
      std::string(kName), 1, [this](const std::string& key) { return Reconcile(key); });
  runtime::EventHandler handler;
  handler.on_add = [this](const runtime::ObjectPtr& obj) { Enqueue(obj); };
  // A status write (ours) is no reason to sync before the period is up; a
  // spec change is.
  handler.on_update = [this](const runtime::ObjectPtr& old_obj, const runtime::ObjectPtr& obj) {
    const json::value* old_spec = old_obj->if_contains("spec");
    const json::value* spec = obj->if_contains("spec");
    if (old_spec == nullptr || spec == nullptr || *old_spec != *spec) Enqueue(obj);
  };
  handler.on_delete = [this](const runtime::ObjectPtr& obj) { Enqueue(obj); };
  hpas_.AddEventHandler(std::move(handler));
}

void HpaController::Enqueue(const runtime::ObjectPtr& obj) {
  controller_->queue().Add(runtime::ObjectKey(*obj));
}

ScaleHistory& HpaController::HistoryFor(const std::string& key) {
  MutexLock lock(mu_);
  return history_[key];
}

StatusOr<runtime::Result> HpaController::Reconcile(const std::string& key) {
  runtime::ObjectPtr cached = hpas_.cache().Get(key);
  if (cached == nullptr) {
    MutexLock lock(mu_);
    history_.erase(key);
    selectors_.erase(key);
    return runtime::Result{};
  }
  Sync s{key, *cached, json::object(), ctx_.clock.Now()};
  s.hpa["apiVersion"] = "autoscaling/v2";
  s.hpa["kind"] = "HorizontalPodAutoscaler";
  if (const json::object* status = GetObject(s.hpa, "status")) s.status = *status;
  Autoscale(s);
  FLOTILLA_RETURN_IF_ERROR(WriteStatusIfChanged(s));
  return runtime::Result{ctx_.options.hpa_sync_period};
}

// reconcileAutoscaler.
void HpaController::Autoscale(Sync& s) {
  const json::object* spec = GetObject(s.hpa, "spec");
  const json::object* ref = spec ? GetObject(*spec, "scaleTargetRef") : nullptr;
  StatusOr<client::ResourceRef> target = ScaleTargetResource(ref ? *ref : json::object());
  std::string ns = StringAt(s.hpa, "metadata.namespace");
  StatusOr<json::object> scale =
      target.ok() ? ctx_.client.GetScale(*target, ns, StringAt(*ref, "name")) : target.status();
  if (!scale.ok()) {
    ctx_.events.Event(s.hpa, runtime::kEventTypeWarning, "FailedGetScale",
                      scale.status().message());
    SetCondition(s.status, "AbleToScale", false, "FailedGetScale",
                 "the HPA controller was unable to get the target's current scale: " +
                     scale.status().message(),
                 s.now);
    return;
  }
  SetCondition(s.status, "AbleToScale", true, "SucceededGetScale",
               "the HPA controller was able to get the target's current scale", s.now);
  int64_t current = IntAt(*scale, "spec.replicas", 0);
  ScaleHistory& history = HistoryFor(s.key);
  history.RecordInitial(current, s.now);
  int64_t min = IntAt(*spec, "minReplicas", 1);
  int64_t max = IntAt(*spec, "maxReplicas", 0);
  if (current == 0 && min != 0) {
    SetCondition(s.status, "ScalingActive", false, "ScalingDisabled",
                 "scaling is disabled since the replica count of the target is zero", s.now);
    s.status = BuildStatus(s.status, IntAt(s.hpa, "metadata.generation", 0), current, current,
                           json::value(), false, s.now);
    return;
  }
  if (current > max) {
    return RescaleTo(s, *target, current, max, "Current number of replicas above Spec.MaxReplicas",
                     json::value());
  }
  if (current < min) {
    return RescaleTo(s, *target, current, min, "Current number of replicas below Spec.MinReplicas",
                     json::value());
  }
  MetricsResult m = ComputeReplicasForMetrics(s, *scale, current);
  if (m.replicas < 0) {
    s.status = BuildStatus(s.status, IntAt(s.hpa, "metadata.generation", 0), current,
                           DesiredReplicasOf(s.status), m.statuses, false, s.now);
    ctx_.events.Event(s.hpa, runtime::kEventTypeWarning, "FailedComputeMetricsReplicas", m.error);
    return;
  }
  std::string reason = m.replicas > current   ? m.metric + " above target"
                       : m.replicas < current ? "All metrics below target"
                                              : "";
  std::optional<Behavior> behavior = ParseBehavior(*spec, ctx_.options.hpa_downscale_stabilization);
  Normalized n = history.Normalize(behavior, ctx_.options.hpa_downscale_stabilization, current,
                                   m.replicas, min, max, s.now);
  SetCondition(s.status, "AbleToScale", true, n.able_reason, n.able_message, s.now);
  SetCondition(s.status, "ScalingLimited", n.limited, n.limited_reason, n.limited_message, s.now);
  RescaleTo(s, *target, current, n.replicas, reason, std::move(m.statuses));
}

// Writes the target's scale when `desired` differs from `current`, then
// the status (the rest of reconcileAutoscaler).
void HpaController::RescaleTo(Sync& s, const client::ResourceRef& target, int64_t current,
                              int64_t desired, const std::string& reason, json::value statuses) {
  int64_t generation = IntAt(s.hpa, "metadata.generation", 0);
  bool rescale = desired != current;
  if (rescale) {
    std::string ns = StringAt(s.hpa, "metadata.namespace");
    auto updated =
        ctx_.client.UpdateScale(target, ns, StringAt(s.hpa, "spec.scaleTargetRef.name"), desired);
    std::string size = "New size: " + std::to_string(desired) + "; reason: " + reason;
    if (!updated.ok()) {
      ctx_.events.Event(s.hpa, runtime::kEventTypeWarning, "FailedRescale",
                        size + "; error: " + updated.status().message());
      SetCondition(
          s.status, "AbleToScale", false, "FailedUpdateScale",
          "the HPA controller was unable to update the target scale: " + updated.status().message(),
          s.now);
      s.status = BuildStatus(s.status, generation, current, DesiredReplicasOf(s.status), statuses,
                             false, s.now);
      return;
    }
    SetCondition(
        s.status, "AbleToScale", true, "SucceededRescale",
        "the HPA controller was able to update the target scale to " + std::to_string(desired),
        s.now);
    ctx_.events.Event(s.hpa, runtime::kEventTypeNormal, "SuccessfulRescale", size);
    const json::object* spec = GetObject(s.hpa, "spec");
    HistoryFor(s.key).RecordScale(
        ParseBehavior(spec ? *spec : json::object(), ctx_.options.hpa_downscale_stabilization),
        current, desired, s.now);
  }
  s.status = BuildStatus(s.status, generation, current, rescale ? desired : current, statuses,
                         rescale, s.now);
}

Status HpaController::WriteStatusIfChanged(Sync& s) {
  const json::value* old = s.hpa.if_contains("status");
  if (old != nullptr && old->is_object() && old->get_object() == s.status) return Status::Ok();
  json::object updated = s.hpa;
  updated["status"] = s.status;
  auto written = ctx_.client.UpdateStatus(kHorizontalPodAutoscalers, "", updated);
  if (!written.ok() && written.status().Is(Reason::kConflict)) {
    // The cache was behind our own last status write, or another writer
    // touched the metadata. The status is ours alone: put it on the latest
    // object, unless the spec moved on (then the next sync computes anew).
    std::string ns = StringAt(s.hpa, "metadata.namespace");
    auto latest = ctx_.client.Get(kHorizontalPodAutoscalers, ns, StringAt(s.hpa, "metadata.name"));
    if (latest.ok() &&
        IntAt(*latest, "metadata.generation", 0) == IntAt(s.hpa, "metadata.generation", 0)) {
      (*latest)["status"] = s.status;
      written = ctx_.client.UpdateStatus(kHorizontalPodAutoscalers, "", *latest);
    }
  }
  if (!written.ok()) {
    ctx_.events.Event(s.hpa, runtime::kEventTypeWarning, "FailedUpdateStatus",
                      written.status().message());
    return written.status();
  }
  return Status::Ok();
}

}  // namespace flotilla::member::hpa
