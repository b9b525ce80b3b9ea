#include "member/statefulset/pod_state.h"

#include "member/object_util.h"

namespace flotilla::member::statefulset {
namespace {

const json::object* ReadyCondition(const json::object& pod) {
  const json::value* conditions = Find(pod, "status.conditions");
  if (conditions == nullptr || !conditions->is_array()) return nullptr;
  for (const json::value& c : conditions->get_array()) {
    if (c.is_object() && StringAt(c.get_object(), "type") == "Ready") return &c.get_object();
  }
  return nullptr;
}

}  // namespace

std::string PhaseOf(const json::object& pod) { return StringAt(pod, "status.phase"); }

bool IsCreated(const json::object& pod) { return !PhaseOf(pod).empty(); }

bool IsTerminating(const json::object& pod) {
  return !StringAt(pod, "metadata.deletionTimestamp").empty();
}

bool IsFinished(const json::object& pod) {
  std::string phase = PhaseOf(pod);
  return phase == "Failed" || phase == "Succeeded";
}

bool IsRunningAndReady(const json::object& pod) {
  const json::object* ready = ReadyCondition(pod);
  return PhaseOf(pod) == "Running" && ready != nullptr && StringAt(*ready, "status") == "True";
}

bool IsHealthy(const json::object& pod) { return IsRunningAndReady(pod) && !IsTerminating(pod); }

Duration UntilAvailable(const json::object& pod, Duration min_ready, TimePoint now) {
  if (min_ready <= Duration::zero()) return Duration::zero();
  const json::object* ready = ReadyCondition(pod);
  TimePoint since;
  if (ready == nullptr || !ParseRfc3339(StringAt(*ready, "lastTransitionTime"), &since)) {
    return Duration::zero();
  }
  return since + min_ready - now;
}

}  // namespace flotilla::member::statefulset
