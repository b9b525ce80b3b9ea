// The member's disruption controller (disruption_controller.h).
#include "member/disruption/disruption_controller.h"

#include <algorithm>
#include <map>

#include "api/deployment/deployment_util.h"
#include "api/disruption.h"
#include "api/owner.h"
#include "member/object_util.h"
#include "member/replicaset/pod_util.h"

namespace flotilla::member {
namespace {

bool Terminating(const json::object& pod) { return !MetaAt(pod, "deletionTimestamp").empty(); }

const json::object& ObjectOrEmpty(const json::object& obj, std::string_view field) {
  static const json::object kNone;
  const json::object* o = GetObject(obj, field);
  return o != nullptr ? *o : kNone;
}

bool SameLabels(const json::object& a, const json::object& b) {
  const json::value* x = Find(a, "metadata.labels");
  const json::value* y = Find(b, "metadata.labels");
  return x == nullptr || y == nullptr ? x == y : *x == *y;
}

// getExpectedPodCount's and countHealthyPods' figures.
struct BudgetCounts {
  int64_t expected = 0;
  int64_t desired = 0;
  int64_t healthy = 0;
};

// A recorded eviction's time, or nullopt when unreadable.
std::optional<TimePoint> ParseTime(const json::value& v) {
  TimePoint t;
  if (!v.is_string() || !ParseRfc3339(std::string(v.get_string()), &t)) return std::nullopt;
  return t;
}

}  // namespace

DisruptionController::DisruptionController(ControllerContext& ctx)
    : client_(ctx.client),
      clock_(ctx.clock),
      events_(ctx.client, ctx.clock, runtime::EventSource{"controllermanager", ""}),
      budgets_(ctx.informers.For(kPodDisruptionBudgets)),
      pods_(ctx.informers.For(kPods)),
      replicasets_(ctx.informers.For(kReplicaSets)),
      deployments_(ctx.informers.For(kDeployments)),
      statefulsets_(ctx.informers.For(kStatefulSets)) {
  controller_ = &ctx.manager.AddController(
      "disruption", 2, [this](const std::string& key) { return Reconcile(key); });
  budgets_.AddEventHandler(controller_->EnqueueHandler());
  pods_.AddEventHandler(runtime::EventHandler{
      .on_add = [this](const runtime::ObjectPtr& pod) { EnqueueBudgetsOf(*pod); },
      .on_update =
          [this](const runtime::ObjectPtr& old_pod, const runtime::ObjectPtr& pod) {
            EnqueueBudgetsOf(*pod);
            if (!SameLabels(*old_pod, *pod)) EnqueueBudgetsOf(*old_pod);
          },
      .on_delete = [this](const runtime::ObjectPtr& pod) { EnqueueBudgetsOf(*pod); }});
}

void DisruptionController::EnqueueBudgetsOf(const json::object& pod) {
  for (const runtime::ObjectPtr& pdb : budgets_.lister().List(MetaAt(pod, "namespace"))) {
    if (api::BudgetSelects(*pdb, pod)) controller_->queue().Add(runtime::ObjectKey(*pdb));
  }
}

std::optional<std::pair<std::string, int64_t>> DisruptionController::ControllerScale(
    const std::string& ns, const json::object& ref) const {
  std::string kind = FieldString(ref, "kind");
  std::string name = FieldString(ref, "name");
  std::string uid = FieldString(ref, "uid");
  auto replicas = [](const json::object& obj) {
    return GetInt(ObjectOrEmpty(obj, "spec"), "replicas").value_or(1);
  };
  if (kind == "StatefulSet") {
    runtime::ObjectPtr set = statefulsets_.lister().Get(ns, name);
    if (set == nullptr || MetaAt(*set, "uid") != uid) return std::nullopt;
    return std::pair{uid, replicas(*set)};
  }
  if (kind != "ReplicaSet") return std::nullopt;
  runtime::ObjectPtr rs = replicasets_.lister().Get(ns, name);
  if (rs == nullptr || MetaAt(*rs, "uid") != uid) return std::nullopt;
  const json::object* owner = api::ControllerRef(*rs);
  if (owner == nullptr || FieldString(*owner, "kind") != "Deployment") {
    return std::pair{uid, replicas(*rs)};
  }
  // getPodDeployment: a Deployment's ReplicaSets count as the Deployment.
  runtime::ObjectPtr d = deployments_.lister().Get(ns, FieldString(*owner, "name"));
  if (d == nullptr || MetaAt(*d, "uid") != FieldString(*owner, "uid")) return std::nullopt;
  return std::pair{MetaAt(*d, "uid"), replicas(*d)};
}

StatusOr<int64_t> DisruptionController::ExpectedScale(
    const std::vector<runtime::ObjectPtr>& pods) const {
  std::map<std::string, int64_t> scale_by_controller;
  for (const runtime::ObjectPtr& pod : pods) {
    const json::object* ref = api::ControllerRef(*pod);
    std::string name = MetaAt(*pod, "name");
    if (ref == nullptr) return Status::Invalid("found no controller ref for pod \"" + name + "\"");
    auto scale = ControllerScale(MetaAt(*pod, "namespace"), *ref);
    if (!scale) return Status::Invalid("found no controllers for pod \"" + name + "\"");
    scale_by_controller[scale->first] = scale->second;
  }
  int64_t expected = 0;
  for (const auto& [uid, replicas] : scale_by_controller) expected += replicas;
  return expected;
}

StatusOr<runtime::Result> DisruptionController::Reconcile(const std::string& key) {
  auto [ns, name] = SplitKey(key);
  runtime::ObjectPtr current = budgets_.lister().Get(ns, name);
  if (current == nullptr) return runtime::Result{};
  const json::object& pdb = *current;
  std::vector<runtime::ObjectPtr> pods;
  for (const runtime::ObjectPtr& pod : pods_.lister().List(ns)) {
    if (api::BudgetSelects(pdb, *pod)) pods.push_back(pod);
  }
  TimePoint now = clock_.Now();
  runtime::Result result;
  json::object updated = pdb;
  json::object& status = EnsureObject(updated, "status");
  json::object pdb_ref = WithKind(pdb, "policy/v1", "PodDisruptionBudget");
  if (pods.empty()) {
    events_.Event(pdb_ref, runtime::kEventTypeNormal, "NoPods", "No matching pods found");
  }

  // getExpectedPodCount.
  BudgetCounts counts;
  const json::object& spec = ObjectOrEmpty(pdb, "spec");
  const json::value* max_unavailable = spec.if_contains("maxUnavailable");
  const json::value* min_available = spec.if_contains("minAvailable");
  Status failed;
  if (max_unavailable != nullptr && !max_unavailable->is_null()) {
    StatusOr<int64_t> expected = ExpectedScale(pods);
    if (expected.ok()) {
      counts.expected = *expected;
      counts.desired = std::max<int64_t>(
          0, *expected - api::deployment::ScaledValue(max_unavailable, *expected, true));
    } else {
      failed = expected.status();
    }
  } else if (min_available != nullptr && min_available->is_int64()) {
    counts.expected = static_cast<int64_t>(pods.size());
    counts.desired = min_available->get_int64();
  } else if (min_available != nullptr && min_available->is_string()) {
    StatusOr<int64_t> expected = ExpectedScale(pods);
    if (expected.ok()) {
      counts.expected = *expected;
      counts.desired = api::deployment::ScaledValue(min_available, *expected, true);
    } else {
      failed = expected.status();
    }
  }
  if (!failed.ok()) {
    // failSafe: nothing may be disrupted while the budget cannot be computed.
    events_.Event(pdb_ref, runtime::kEventTypeWarning, "CalculateExpectedPodCountFailed",
                  "Failed to calculate the number of expected pods: " + failed.message());
    status["disruptionsAllowed"] = 0;
    api::SetSyncFailedCondition(status, failed.message(), now);
  } else {
    // buildDisruptedPodMap: evictions not yet seen through, until they time out.
    json::object disrupted;
    std::optional<TimePoint> recheck;
    const json::object* recorded = GetObject(ObjectOrEmpty(pdb, "status"), "disruptedPods");
    for (const runtime::ObjectPtr& pod : pods) {
      std::string pod_name = MetaAt(*pod, "name");
      const json::value* at = recorded != nullptr ? recorded->if_contains(pod_name) : nullptr;
      if (at == nullptr || Terminating(*pod)) continue;
      std::optional<TimePoint> when = ParseTime(*at);
      if (!when || *when + kDeletionTimeout < now) {
        events_.Event(WithKind(*pod, "v1", "Pod"), runtime::kEventTypeWarning, "NotDeleted",
                      "Pod was expected by PDB " + key + " to be deleted but it wasn't");
        continue;
      }
      disrupted[pod_name] = *at;
      if (!recheck || *when + kDeletionTimeout < *recheck) recheck = *when + kDeletionTimeout;
    }
    for (const runtime::ObjectPtr& pod : pods) {
      if (!Terminating(*pod) && !disrupted.contains(MetaAt(*pod, "name")) && IsPodReady(*pod)) {
        ++counts.healthy;
      }
    }
    int64_t allowed =
        counts.expected <= 0 ? 0 : std::max<int64_t>(0, counts.healthy - counts.desired);
    status["currentHealthy"] = counts.healthy;
    status["desiredHealthy"] = counts.desired;
    status["expectedPods"] = counts.expected;
    status["disruptionsAllowed"] = allowed;
    if (disrupted.empty()) {
      status.erase("disruptedPods");
    } else {
      status["disruptedPods"] = std::move(disrupted);
    }
    status["observedGeneration"] = GetInt(ObjectOrEmpty(pdb, "metadata"), "generation").value_or(0);
    api::SetDisruptionAllowedCondition(status, now);
    // The earliest recorded eviction times out then.
    if (recheck) result.requeue_after = *recheck - now + std::chrono::seconds(1);
  }
  if (status == ObjectOrEmpty(pdb, "status")) return result;
  Status s = client_.UpdateStatus(kPodDisruptionBudgets, ns, updated).status();
  // A conflict or a budget gone: its own event brings it back.
  if (!s.ok() && !s.Is(Reason::kConflict) && !s.Is(Reason::kNotFound)) return s;
  return result;
}

}  // namespace flotilla::member
