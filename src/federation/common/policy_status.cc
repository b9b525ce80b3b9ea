// What each propagation policy places (policy_status.h).
#include "federation/common/policy_status.h"

#include <set>
#include <vector>

#include "api/annotations.h"
#include "api/views.h"
#include "federation/common/policies.h"

namespace flotilla::federation {

namespace policy = api::policy;

namespace {

// The kinds of the policies, by the prefix of their keys.
struct PolicyKind {
  std::string_view prefix;
  std::string_view kind;
  const client::ResourceRef* resource;
};
const PolicyKind kPolicyKinds[] = {
    {"pp/", "PropagationPolicy", &kPropagationPolicies},
    {"cpp/", "ClusterPropagationPolicy", &kClusterPropagationPolicies},
    {"op/", "OverridePolicy", &kOverridePolicies},
    {"cop/", "ClusterOverridePolicy", &kClusterOverridePolicies},
};

const PolicyKind* KindOf(const std::string& key) {
  for (const PolicyKind& k : kPolicyKinds) {
    if (key.starts_with(k.prefix)) return &k;
  }
  return nullptr;
}

}  // namespace

PolicyStatuses::PolicyStatuses(client::Client& fed, runtime::SharedInformers& informers,
                               runtime::ControllerManager& manager, runtime::EventRecorder& events,
                               std::function<bool()> known)
    : fed_(fed), events_(events), known_(std::move(known)) {
  controller_ = &manager.AddController("policy-status", 1,
                                       [this](const std::string& key) { return Reconcile(key); });
  for (size_t i = 0; i < std::size(kPolicyKinds); ++i) {
    informers_[i] = &informers.For(*kPolicyKinds[i].resource);
    auto enqueue = [this,
                    prefix = std::string(kPolicyKinds[i].prefix)](const runtime::ObjectPtr& obj) {
      controller_->queue().Add(prefix + runtime::ObjectKey(*obj));
    };
    informers_[i]->AddEventHandler(
        {.on_add = enqueue,
         .on_update = [enqueue](const runtime::ObjectPtr&, const runtime::ObjectPtr& obj) {
           enqueue(obj);
         }});
  }
}

std::string PolicyStatuses::KeyOf(const policy::OverridePolicy& p) {
  return p.cluster_scoped ? "cop/" + p.name : "op/" + p.ns + "/" + p.name;
}

std::string PolicyStatuses::KeyOf(const policy::PropagationPolicy& p) {
  return p.cluster_scoped ? "cpp/" + p.name : "pp/" + p.ns + "/" + p.name;
}

runtime::ObjectPtr PolicyStatuses::Find(const std::string& key) const {
  const PolicyKind* k = KindOf(key);
  if (k == nullptr) return nullptr;
  return informers_[k - kPolicyKinds]->cache().Get(key.substr(k->prefix.size()));
}

void PolicyStatuses::EnqueueAll() {
  for (size_t i = 0; i < std::size(kPolicyKinds); ++i) {
    for (const std::string& key : informers_[i]->cache().Keys()) {
      controller_->queue().Add(std::string(kPolicyKinds[i].prefix) + key);
    }
  }
}

void PolicyStatuses::Gone(const std::string& id) {
  Placed(id, nullptr);
  Overridden(id, {});
}

void PolicyStatuses::Overridden(const std::string& id,
                                const std::map<std::string, Failure>& failures) {
  std::map<std::string, Failed> now;
  for (const auto& [cluster, f] : failures) {
    if (f.policy == nullptr) continue;
    std::string key = KeyOf(*f.policy);
    // The message names the policy; its own status need not.
    std::string ref =
        f.policy->cluster_scoped ? f.policy->name : f.policy->ns + "/" + f.policy->name;
    std::string message = f.message;
    if (size_t at = message.find(ref + ": "); at != std::string::npos) {
      message = message.substr(at + ref.size() + 2);
    }
    now[cluster] = Failed{.policy = std::move(key), .message = std::move(message)};
  }
  std::set<std::string> touched;
  std::vector<std::pair<std::string, Failed>> news;  // cluster, failure
  {
    MutexLock lock(mu_);
    auto it = failures_.find(id);
    if (it == failures_.end() && now.empty()) return;
    std::map<std::string, Failed> before = it != failures_.end() ? it->second : decltype(before){};
    if (before == now) return;
    for (const auto& [cluster, f] : before) touched.insert(f.policy);
    for (const auto& [cluster, f] : now) {
      touched.insert(f.policy);
      auto was = before.find(cluster);
      if (was == before.end() || !(was->second == f)) news.emplace_back(cluster, f);
    }
    if (now.empty()) {
      failures_.erase(id);
    } else {
      failures_[id] = std::move(now);
    }
  }
  for (const auto& [cluster, f] : news) {
    Event(f.policy, runtime::kEventTypeWarning, "ApplyOverridePolicyFailed",
          "cannot apply to " + id + " in cluster " + cluster + ": " + f.message);
  }
  for (const std::string& key : touched) controller_->queue().Add(key);
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

void PolicyStatuses::Event(const std::string& key, std::string_view type, std::string_view reason,
                           const std::string& message) {
  runtime::ObjectPtr obj = Find(key);
  if (obj == nullptr) return;  // a policy that went hears nothing
  json::object typed = *obj;
  typed["apiVersion"] = policy::kGroup + std::string("/") + policy::kVersion;
  typed["kind"] = KindOf(key)->kind;
  events_.Event(typed, type, reason, message);
}

void PolicyStatuses::Recorded(const std::string& id, const json::object& before,
                              const policy::PropagationPolicy* now) {
  std::string was;
  std::string cluster_policy =
      api::AnnotationAt(before, policy::kClusterPropagationPolicyNameAnnotation);
  std::string namespaced_policy =
      api::AnnotationAt(before, policy::kPropagationPolicyNameAnnotation);
  if (!cluster_policy.empty()) {
    was = "cpp/" + cluster_policy;
  } else if (!namespaced_policy.empty()) {
    was = "pp/" + api::AnnotationAt(before, policy::kPropagationPolicyNamespaceAnnotation) + "/" +
          namespaced_policy;
  }
  std::string is = now != nullptr ? KeyOf(*now) : "";
  if (was == is) return;
  if (!was.empty()) Event(was, runtime::kEventTypeNormal, "Unmatched", "no longer places " + id);
  if (!is.empty()) Event(is, runtime::kEventTypeNormal, "Matched", "places " + id);
}

StatusOr<runtime::Result> PolicyStatuses::Reconcile(const std::string& key) {
  // Before every object was checked once, a count would be short.
  if (!known_()) return runtime::Result{.requeue_after = std::chrono::seconds(1)};
  runtime::ObjectPtr obj = Find(key);
  if (obj == nullptr) return runtime::Result{};
  if (key.starts_with("op/") || key.starts_with("cop/")) return WriteFailures(key, *obj);
  int64_t count = 0;
  {
    MutexLock lock(mu_);
    if (auto it = counts_.find(key); it != counts_.end()) count = it->second;
  }
  const json::value* have = flotilla::Find(*obj, "status.placedObjects");
  if (have != nullptr && have->is_int64() && have->get_int64() == count) return runtime::Result{};
  json::object updated = *obj;
  EnsureObject(updated, "status")["placedObjects"] = count;
  return WriteStatus(key, updated);
}

StatusOr<runtime::Result> PolicyStatuses::WriteFailures(const std::string& key,
                                                        const json::object& obj) {
  json::array list;
  {
    MutexLock lock(mu_);
    for (const auto& [id, clusters] : failures_) {
      for (const auto& [cluster, f] : clusters) {
        if (f.policy != key || list.size() >= kMaxFailures) continue;
        list.push_back(json::object{{"object", id}, {"cluster", cluster}, {"message", f.message}});
      }
    }
  }
  const json::value* have = flotilla::Find(obj, "status.failures");
  if (have != nullptr && have->is_array() && have->get_array() == list) return runtime::Result{};
  json::object updated = obj;
  EnsureObject(updated, "status")["failures"] = std::move(list);
  return WriteStatus(key, updated);
}

StatusOr<runtime::Result> PolicyStatuses::WriteStatus(const std::string& key,
                                                      const json::object& updated) {
  const PolicyKind* k = KindOf(key);
  Status s =
      fed_.UpdateStatus(*k->resource, std::string(api::ObjectView(updated).ns()), updated).status();
  // A conflict: the policy's own event brings it back; one gone: nothing.
  if (!s.ok() && !s.Is(Reason::kConflict) && !s.Is(Reason::kNotFound)) return s;
  return runtime::Result{};
}

}  // namespace flotilla::federation
