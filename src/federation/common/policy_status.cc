// What each propagation policy places (policy_status.h).
#include "federation/common/policy_status.h"

#include "api/annotations.h"
#include "api/views.h"
#include "federation/common/policies.h"

namespace flotilla::federation {

namespace policy = api::policy;

PolicyStatuses::PolicyStatuses(client::Client& fed, runtime::SharedInformers& informers,
                               runtime::ControllerManager& manager, runtime::EventRecorder& events,
                               std::function<bool()> known)
    : fed_(fed),
      namespaced_(informers.For(kPropagationPolicies)),
      cluster_scoped_(informers.For(kClusterPropagationPolicies)),
      events_(events),
      known_(std::move(known)) {
  controller_ = &manager.AddController("propagation-policy-status", 1,
                                       [this](const std::string& key) { return Reconcile(key); });
  auto handler = [this](const std::string& prefix) {
    auto enqueue = [this, prefix](const runtime::ObjectPtr& obj) {
      controller_->queue().Add(prefix + runtime::ObjectKey(*obj));
    };
    return runtime::EventHandler{
        .on_add = enqueue,
        .on_update = [enqueue](const runtime::ObjectPtr&,
                               const runtime::ObjectPtr& obj) { enqueue(obj); },
    };
  };
  namespaced_.AddEventHandler(handler("pp/"));
  cluster_scoped_.AddEventHandler(handler("cpp/"));
}

std::string PolicyStatuses::KeyOf(const policy::PropagationPolicy& p) {
  return p.cluster_scoped ? "cpp/" + p.name : "pp/" + p.ns + "/" + p.name;
}

runtime::ObjectPtr PolicyStatuses::Find(const std::string& key) const {
  if (key.starts_with("cpp/")) return cluster_scoped_.cache().Get(key.substr(4));
  if (key.starts_with("pp/")) return namespaced_.cache().Get(key.substr(3));
  return nullptr;
}

void PolicyStatuses::EnqueueAll() {
  for (const std::string& key : namespaced_.cache().Keys()) controller_->queue().Add("pp/" + key);
  for (const std::string& key : cluster_scoped_.cache().Keys()) {
    controller_->queue().Add("cpp/" + key);
  }
}

void PolicyStatuses::Placed(const std::string& id, const policy::PropagationPolicy* p) {
  std::string now = p != nullptr ? KeyOf(*p) : "";
  std::string before;
  {
    MutexLock lock(mu_);
    auto it = placed_by_.find(id);
    before = it != placed_by_.end() ? it->second : "";
    if (before == now) return;
    if (!before.empty() && --counts_[before] == 0) counts_.erase(before);
    if (now.empty()) {
      placed_by_.erase(id);
    } else {
      placed_by_[id] = now;
      ++counts_[now];
    }
  }
  for (const std::string& key : {before, now}) {
    if (!key.empty()) controller_->queue().Add(key);
  }
}

void PolicyStatuses::Event(const std::string& key, std::string_view reason,
                           const std::string& message) {
  runtime::ObjectPtr obj = Find(key);
  if (obj == nullptr) return;  // a policy that went hears nothing
  json::object typed = *obj;
  typed["apiVersion"] = policy::kGroup + std::string("/") + policy::kVersion;
  typed["kind"] = key.starts_with("cpp/") ? "ClusterPropagationPolicy" : "PropagationPolicy";
  events_.Event(typed, runtime::kEventTypeNormal, reason, message);
}

void PolicyStatuses::Recorded(const std::string& id, const json::object& before,
                              const policy::PropagationPolicy* now) {
  std::string was;
  if (std::string_view name =
          api::AnnotationAt(before, policy::kClusterPropagationPolicyNameAnnotation);
      !name.empty()) {
    was = "cpp/" + std::string(name);
  } else if (std::string_view name =
                 api::AnnotationAt(before, policy::kPropagationPolicyNameAnnotation);
             !name.empty()) {
    was = "pp/" +
          std::string(api::AnnotationAt(before, policy::kPropagationPolicyNamespaceAnnotation)) +
          "/" + std::string(name);
  }
  std::string is = now != nullptr ? KeyOf(*now) : "";
  if (was == is) return;
  if (!was.empty()) Event(was, "Unmatched", "no longer places " + id);
  if (!is.empty()) Event(is, "Matched", "places " + id);
}

StatusOr<runtime::Result> PolicyStatuses::Reconcile(const std::string& key) {
  // Before every object was checked once, a count would be short.
  if (!known_()) return runtime::Result{.requeue_after = std::chrono::seconds(1)};
  runtime::ObjectPtr obj = Find(key);
  if (obj == nullptr) return runtime::Result{};
  int64_t count = 0;
  {
    MutexLock lock(mu_);
    if (auto it = counts_.find(key); it != counts_.end()) count = it->second;
  }
  const json::value* have = flotilla::Find(*obj, "status.placedObjects");
  if (have != nullptr && have->is_int64() && have->get_int64() == count) return runtime::Result{};
  json::object updated = *obj;
  EnsureObject(updated, "status")["placedObjects"] = count;
  bool cluster = key.starts_with("cpp/");
  Status s = fed_.UpdateStatus(cluster ? kClusterPropagationPolicies : kPropagationPolicies,
                               cluster ? "" : std::string(api::ObjectView(*obj).ns()), updated)
                 .status();
  // A conflict: the policy's own event brings it back; one gone: nothing.
  if (!s.ok() && !s.Is(Reason::kConflict) && !s.Is(Reason::kNotFound)) return s;
  return runtime::Result{};
}

}  // namespace flotilla::federation
