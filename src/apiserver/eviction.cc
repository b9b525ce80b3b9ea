// Objects::Evict: the pods/eviction subresource (objects.h), as
// kube-apiserver's EvictionREST (pkg/registry/core/pod/storage/eviction.go)
// checks a pod's PodDisruptionBudget before deleting it.
#include "api/conditions.h"
#include "api/disruption.h"
#include "api/views.h"
#include "apiserver/meta.h"
#include "apiserver/objects.h"

namespace flotilla::apiserver {
namespace {

// How often a budget's status write may lose a race before the eviction
// gives up (kube's EvictionsRetry: 5 steps).
constexpr int kAttempts = 5;
// kube's MaxDisruptedPodSize: evictions the disruption controller has not
// confirmed yet.
constexpr size_t kMaxDisruptedPods = 2000;

// The object at `field` of `obj`, or an empty one.
const json::object& ObjectField(const json::object& obj, std::string_view field) {
  static const json::object kNone;
  const json::object* o = GetObject(obj, field);
  return o != nullptr ? *o : kNone;
}

constexpr std::string_view kViolates =
    "Cannot evict pod as it would violate the pod's disruption budget.";

// canIgnorePDB: the pod is not running, or already going.
bool CanIgnoreBudget(const json::object& pod) {
  std::string_view phase = StringViewAt(pod, "status.phase");
  return phase == "Succeeded" || phase == "Failed" || phase == "Pending" ||
         api::IsBeingDeleted(pod);
}

Status TooManyRequests(std::string message) {
  return Status(Reason::kTooManyRequests, std::string(kViolates),
                {StatusCause{"DisruptionBudget", std::move(message), ""}});
}

// checkAndDecrement: `pdb` with one disruption fewer allowed and `pod`
// recorded as disrupted at `now`, or why the eviction is refused.
StatusOr<json::object> Decremented(json::object pdb, const std::string& pod, TimePoint now) {
  const json::object& status = ObjectField(pdb, "status");
  std::string name(StringViewAt(pdb, "metadata.name"));
  if (GetInt(status, "observedGeneration").value_or(0) <
      GetInt(ObjectField(pdb, "metadata"), "generation").value_or(0)) {
    return TooManyRequests("The disruption budget " + name +
                           " is still being processed by the server.");
  }
  int64_t allowed = GetInt(status, "disruptionsAllowed").value_or(0);
  if (allowed < 0) {
    return Status::Forbidden("poddisruptionbudget.policy \"" + name +
                             "\" is forbidden: pdb disruptions allowed is negative");
  }
  const json::object* disrupted = GetObject(status, "disruptedPods");
  if (disrupted != nullptr && disrupted->size() > kMaxDisruptedPods) {
    return Status::Forbidden("poddisruptionbudget.policy \"" + name +
                             "\" is forbidden: DisruptedPods map too big - too many evictions not "
                             "confirmed by PDB controller");
  }
  if (allowed == 0) {
    return TooManyRequests(
        "The disruption budget " + name + " needs " +
        std::to_string(GetInt(status, "desiredHealthy").value_or(0)) + " healthy pods and has " +
        std::to_string(GetInt(status, "currentHealthy").value_or(0)) + " currently");
  }
  json::object& out = EnsureObject(pdb, "status");
  out["disruptionsAllowed"] = allowed - 1;
  if (allowed == 1) api::SetDisruptionAllowedCondition(out, now);
  EnsureObject(out, "disruptedPods")[pod] = FormatRfc3339(now);
  return pdb;
}

// The DisruptionTarget condition an evicted pod gets before it is deleted.
json::object EvictionCondition(TimePoint now) {
  return json::object{{"type", "DisruptionTarget"},
                      {"status", "True"},
                      {"reason", "EvictionByEvictionAPI"},
                      {"message", "Eviction API: evicting"},
                      {"lastTransitionTime", FormatRfc3339(now)}};
}

json::object Success() {
  return json::object{{"kind", "Status"},
                      {"apiVersion", "v1"},
                      {"metadata", json::object()},
                      {"status", "Success"},
                      {"code", 201}};
}

}  // namespace

bool HasEviction(const api::Resource& res) { return HasBinding(res); }

StatusOr<json::object> Objects::Evict(const api::Resource& res, const std::string& ns,
                                      const std::string& name, const json::object& eviction,
                                      const DeleteOptions& opts) {
  if (!HasEviction(res)) {
    return Status::NotFound("the server could not find the requested resource");
  }
  if (MetaString(eviction, "name") != name) {
    return Status::BadRequest("name in URL does not match name in Eviction object");
  }
  const api::Resource* budgets = registry_.Find("policy", "v1", "poddisruptionbudgets");
  // Deletes the pod as checked: the DisruptionTarget condition first, and
  // the pod's uid as a precondition unless the eviction gave one.
  auto evict = [&](const json::object& pod) -> StatusOr<json::object> {
    DeleteOptions del = opts;
    if (!del.precondition_uid) del.precondition_uid = MetaString(pod, "uid");
    if (!del.dry_run && !api::ConditionTrue(pod, "DisruptionTarget")) {
      Transform add = [&](const json::object& current) -> StatusOr<json::object> {
        json::object updated = current;
        api::SetCondition(EnsureObject(updated, "status"), EvictionCondition(clock_.Now()));
        return updated;
      };
      WriteOptions wopts;
      Status s = GuaranteedUpdate(res, ns, name, add, true, wopts).status();
      if (!s.ok()) return s;
    }
    FLOTILLA_RETURN_IF_ERROR(Delete(res, ns, name, del).status());
    return Success();
  };
  Status last;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    FLOTILLA_ASSIGN_OR_RETURN(json::object pod, Get(res, ns, name));
    if (budgets == nullptr || CanIgnoreBudget(pod)) return evict(pod);
    FLOTILLA_ASSIGN_OR_RETURN(ListPage page, List(*budgets, ns, ListOptions{}));
    std::vector<json::object*> selecting;
    for (json::object& pdb : page.items) {
      if (api::BudgetSelects(pdb, pod)) selecting.push_back(&pdb);
    }
    if (selecting.size() > 1) {
      return Status::Internal(
          "This pod has more than one PodDisruptionBudget, which the eviction subresource does "
          "not support.");
    }
    if (selecting.empty()) return evict(pod);
    const json::object& pdb = *selecting.front();
    // A pod that is not Ready does not count as healthy: evicting it takes
    // nothing from the budget when the budget says so or is met.
    if (!api::ConditionTrue(pod, "Ready")) {
      const json::object& status = ObjectField(pdb, "status");
      int64_t desired = GetInt(status, "desiredHealthy").value_or(0);
      if (StringViewAt(pdb, "spec.unhealthyPodEvictionPolicy") == "AlwaysAllow" ||
          (desired > 0 && GetInt(status, "currentHealthy").value_or(0) >= desired)) {
        return evict(pod);
      }
    }
    FLOTILLA_ASSIGN_OR_RETURN(json::object decremented, Decremented(pdb, name, clock_.Now()));
    if (!opts.dry_run) {
      WriteOptions wopts;
      StatusOr<json::object> written =
          Update(*budgets, ns, MetaString(pdb, "name"), "status", std::move(decremented), wopts);
      if (!written.ok()) {
        if (!written.status().Is(Reason::kConflict)) return written.status();
        last = written.status();
        continue;  // another eviction or the controller wrote it: read again
      }
    }
    return evict(pod);
  }
  return last;
}

}  // namespace flotilla::apiserver
