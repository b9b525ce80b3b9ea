// Helpers for the workload controllers' component tests (ReplicaSet,
// Deployment): manifests, reading pods, and standing in for the kubelet by
// writing pod status. Test-only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/json.h"
#include "member/context.h"
#include "member/test_util.h"

namespace flotilla::member::testing {

inline json::object PodTemplate(const std::string& app, const std::string& image = "nginx:1") {
  return {{"metadata", {{"labels", {{"app", app}}}}},
          {"spec", {{"containers", json::array{{{"name", "c"}, {"image", image}}}}}}};
}

inline json::object ReplicaSetManifest(const std::string& name, int replicas,
                                       const std::string& app) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "ReplicaSet"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec",
           {{"replicas", replicas},
            {"selector", {{"matchLabels", {{"app", app}}}}},
            {"template", PodTemplate(app)}}}};
}

// Pods in "default" (all, terminating ones included), by name.
inline std::vector<json::object> Pods(MemberTestEnv& env) {
  auto list = env.client().List(kPods, "default", {});
  return list.ok() ? list->items : std::vector<json::object>{};
}

inline bool Terminating(const json::object& pod) {
  const json::value* ts = Find(pod, "metadata.deletionTimestamp");
  return ts != nullptr && !ts->is_null();
}

// Pods neither terminating nor terminated, optionally only those whose
// label `key` is `value`.
inline std::vector<json::object> ActivePods(MemberTestEnv& env, const std::string& key = "",
                                            const std::string& value = "") {
  std::vector<json::object> out;
  for (json::object& p : Pods(env)) {
    const json::value* phase = Find(p, "status.phase");
    bool terminated = phase != nullptr && phase->is_string() &&
                      (phase->get_string() == "Failed" || phase->get_string() == "Succeeded");
    const json::value* label = key.empty() ? nullptr : Find(p, "metadata.labels." + key);
    bool matches =
        key.empty() || (label != nullptr && label->is_string() && label->get_string() == value);
    if (!Terminating(p) && !terminated && matches) out.push_back(std::move(p));
  }
  return out;
}

// Stands in for the kubelet: sets phase and the Ready condition, which
// turned as it is at `since` (default: now on the env's clock). Returns
// false when the write failed.
inline bool SetPodStatus(MemberTestEnv& env, const std::string& name, const std::string& phase,
                         bool ready, std::optional<TimePoint> since = std::nullopt) {
  auto pod = env.client().Get(kPods, "default", name);
  if (!pod.ok()) return false;
  std::string now = FormatRfc3339(since.value_or(env.clock().Now()));
  (*pod)["status"] = json::object{{"phase", phase},
                                  {"conditions", json::array{{{"type", "Ready"},
                                                              {"status", ready ? "True" : "False"},
                                                              {"lastTransitionTime", now}}}}};
  return env.client().UpdateStatus(kPods, "default", *pod).ok();
}

inline std::string Name(const json::object& obj) {
  const json::value* v = Find(obj, "metadata.name");
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : "";
}

}  // namespace flotilla::member::testing
