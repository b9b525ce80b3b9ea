#include "member/replicaset/pod_util.h"

#include <algorithm>
#include <string>
#include <tuple>

namespace flotilla::member {
namespace {

const json::object* ReadyCondition(const json::object& pod) {
  const json::value* conds = Find(pod, "status.conditions");
  if (conds == nullptr || !conds->is_array()) return nullptr;
  for (const json::value& c : conds->get_array()) {
    if (c.is_object() && GetString(c.get_object(), "type") == "Ready") return &c.get_object();
  }
  return nullptr;
}

int PhaseRank(const json::object& pod) {
  std::string phase = StringAt(pod, "status.phase");
  if (phase == "Pending" || phase.empty()) return 0;
  if (phase == "Unknown") return 1;
  return 2;
}

int64_t DeletionCost(const json::object& pod) {
  const json::value* annotations = Find(pod, "metadata.annotations");
  if (annotations == nullptr || !annotations->is_object()) return 0;
  auto v = GetString(annotations->get_object(), "controller.kubernetes.io/pod-deletion-cost");
  if (!v) return 0;
  try {
    return std::stoll(std::string(*v));
  } catch (...) {
    return 0;  // the API server rejects invalid costs; treat leftovers as 0
  }
}

int64_t Restarts(const json::object& pod) {
  int64_t total = 0;
  const json::value* statuses = Find(pod, "status.containerStatuses");
  if (statuses == nullptr || !statuses->is_array()) return 0;
  for (const json::value& s : statuses->get_array()) {
    if (s.is_object()) total += GetInt(s.get_object(), "restartCount").value_or(0);
  }
  return total;
}

TimePoint Created(const json::object& pod) {
  TimePoint t{};
  ParseRfc3339(StringAt(pod, "metadata.creationTimestamp"), &t);
  return t;
}

}  // namespace

bool IsPodActive(const json::object& pod) {
  std::string phase = StringAt(pod, "status.phase");
  if (phase == "Succeeded" || phase == "Failed") return false;
  const json::value* ts = Find(pod, "metadata.deletionTimestamp");
  return ts == nullptr || ts->is_null();
}

bool IsPodReady(const json::object& pod) {
  const json::object* c = ReadyCondition(pod);
  return c != nullptr && GetString(*c, "status") == "True";
}

std::optional<TimePoint> ReadySince(const json::object& pod) {
  const json::object* c = ReadyCondition(pod);
  if (c == nullptr || GetString(*c, "status") != "True") return std::nullopt;
  auto text = GetString(*c, "lastTransitionTime");
  TimePoint t{};
  if (!text || !ParseRfc3339(std::string(*text), &t)) return std::nullopt;
  return t;
}

std::optional<TimePoint> AvailableAt(const json::object& pod, int64_t min_ready_seconds) {
  if (!IsPodReady(pod)) return std::nullopt;
  if (min_ready_seconds <= 0) return TimePoint{};
  std::optional<TimePoint> since = ReadySince(pod);
  if (!since) return TimePoint::max();  // ready without a time: never available
  // podutil: lastTransitionTime + minReadySeconds strictly before now.
  return *since + std::chrono::seconds(min_ready_seconds) + std::chrono::seconds(1);
}

bool IsPodAvailable(const json::object& pod, int64_t min_ready_seconds, TimePoint now) {
  if (!IsPodReady(pod)) return false;
  if (min_ready_seconds <= 0) return true;
  std::optional<TimePoint> since = ReadySince(pod);
  return since && *since + std::chrono::seconds(min_ready_seconds) < now;
}

void SortForDeletion(std::vector<runtime::ObjectPtr>& pods) {
  auto rank = [](const json::object& p) {
    bool scheduled = !StringAt(p, "spec.nodeName").empty();
    bool ready = IsPodReady(p);
    // Ready more recently first: negate the time so that later sorts earlier.
    std::optional<TimePoint> since = ReadySince(p);
    int64_t since_key = since ? -since->time_since_epoch().count() : 0;
    return std::make_tuple(scheduled, PhaseRank(p), ready, DeletionCost(p), since_key, -Restarts(p),
                           -Created(p).time_since_epoch().count(), StringAt(p, "metadata.name"));
  };
  std::stable_sort(pods.begin(), pods.end(),
                   [&](const runtime::ObjectPtr& a, const runtime::ObjectPtr& b) {
                     return rank(*a) < rank(*b);
                   });
}

}  // namespace flotilla::member
