#include "api/kinds/pod_status.h"

#include <map>

#include "api/kinds/kinds.h"
#include "api/kinds/util.h"

namespace flotilla::api::kinds {
namespace {

struct PodSummary {
  int64_t ready = 0;
  int64_t total = 0;
  std::string reason;
  int64_t restarts = 0;
  std::optional<TimePoint> last_restart;
};

bool HasCondition(const json::object& pod, std::string_view type) {
  for (const json::object* c : ObjectsAt(pod, "status.conditions")) {
    if (StringAt(*c, "type") == type && StringAt(*c, "status") == "True") return true;
  }
  return false;
}

// Moves `latest` to the container's last termination when that is later.
void NoteTermination(const json::object& status, std::optional<TimePoint>& latest) {
  TimePoint t;
  std::string finished = StringAt(status, "lastState.terminated.finishedAt");
  if (!finished.empty() && ParseRfc3339(finished, &t) && (!latest || *latest < t)) latest = t;
}

std::string TerminatedReason(const json::object& terminated, std::string_view prefix) {
  std::string reason = StringAt(terminated, "reason");
  if (!reason.empty()) return std::string(prefix) + reason;
  int64_t signal = IntOr(terminated, "signal", 0);
  if (signal != 0) return std::string(prefix) + "Signal:" + std::to_string(signal);
  return std::string(prefix) + "ExitCode:" + std::to_string(IntOr(terminated, "exitCode", 0));
}

// The init container part of printPod; returns whether the pod is still
// initializing.
bool SummarizeInit(const json::object& pod, PodSummary& s, int64_t& restartable_restarts,
                   std::optional<TimePoint>& restartable_last) {
  std::map<std::string, bool> restartable;
  std::vector<const json::object*> init = ObjectsAt(pod, "spec.initContainers");
  for (const json::object* c : init) {
    bool always = StringAt(*c, "restartPolicy") == "Always";
    restartable[StringAt(*c, "name")] = always;
    if (always) ++s.total;
  }
  std::vector<const json::object*> statuses = ObjectsAt(pod, "status.initContainerStatuses");
  for (size_t i = 0; i < statuses.size(); ++i) {
    const json::object& cs = *statuses[i];
    s.restarts += IntOr(cs, "restartCount", 0);
    NoteTermination(cs, s.last_restart);
    bool is_restartable = restartable[StringAt(cs, "name")];
    if (is_restartable) {
      restartable_restarts += IntOr(cs, "restartCount", 0);
      NoteTermination(cs, restartable_last);
    }
    const json::object* terminated = ObjectAt(cs, "state.terminated");
    std::string waiting = StringAt(cs, "state.waiting.reason");
    if (terminated != nullptr && IntOr(*terminated, "exitCode", 0) == 0) continue;
    if (is_restartable && GetBool(cs, "started").value_or(false)) {
      if (GetBool(cs, "ready").value_or(false)) ++s.ready;
      continue;
    }
    if (terminated != nullptr) {
      s.reason = TerminatedReason(*terminated, "Init:");
    } else if (!waiting.empty() && waiting != "PodInitializing") {
      s.reason = "Init:" + waiting;
    } else {
      s.reason = "Init:" + std::to_string(i) + "/" + std::to_string(init.size());
    }
    return true;
  }
  return false;
}

void SummarizeContainers(const json::object& pod, PodSummary& s) {
  bool has_running = false;
  std::vector<const json::object*> statuses = ObjectsAt(pod, "status.containerStatuses");
  for (auto it = statuses.rbegin(); it != statuses.rend(); ++it) {
    const json::object& cs = **it;
    s.restarts += IntOr(cs, "restartCount", 0);
    NoteTermination(cs, s.last_restart);
    std::string waiting = StringAt(cs, "state.waiting.reason");
    const json::object* terminated = ObjectAt(cs, "state.terminated");
    if (!waiting.empty()) {
      s.reason = waiting;
    } else if (terminated != nullptr) {
      s.reason = TerminatedReason(*terminated, "");
    } else if (GetBool(cs, "ready").value_or(false) && ObjectAt(cs, "state.running") != nullptr) {
      has_running = true;
      ++s.ready;
    }
  }
  if (s.reason == "Completed" && has_running) {
    s.reason = HasCondition(pod, "Ready") ? "Running" : "NotReady";
  }
}

PodSummary Summarize(const json::object& pod) {
  PodSummary s;
  s.total = static_cast<int64_t>(ObjectsAt(pod, "spec.containers").size());
  std::string phase = StringAt(pod, "status.phase");
  std::string status_reason = StringAt(pod, "status.reason");
  s.reason = status_reason.empty() ? phase : status_reason;
  for (const json::object* c : ObjectsAt(pod, "status.conditions")) {
    if (StringAt(*c, "type") == "PodScheduled" && StringAt(*c, "reason") == "SchedulingGated") {
      s.reason = "SchedulingGated";
    }
  }
  int64_t restartable_restarts = 0;
  std::optional<TimePoint> restartable_last;
  bool initializing = SummarizeInit(pod, s, restartable_restarts, restartable_last);
  if (!initializing || HasCondition(pod, "Initialized")) {
    s.restarts = restartable_restarts;
    s.last_restart = restartable_last;
    SummarizeContainers(pod, s);
  }
  bool deleting = !StringAt(pod, "metadata.deletionTimestamp").empty();
  if (deleting && status_reason == "NodeLost") {
    s.reason = "Unknown";
  } else if (deleting && phase != "Succeeded" && phase != "Failed") {
    s.reason = "Terminating";
  }
  return s;
}

json::value NoneIfEmpty(std::string s) { return json::string(s.empty() ? "<none>" : s); }

// "2 (5m ago)": restarts and the time since the last one.
json::value RestartsCell(const json::object& pod, TimePoint now) {
  PodSummary s = Summarize(pod);
  std::string out = std::to_string(s.restarts);
  if (s.restarts != 0 && s.last_restart) {
    out += " (" + HumanDuration(now - *s.last_restart) + " ago)";
  }
  return json::string(out);
}

json::value ReadinessGates(const json::object& pod, TimePoint) {
  std::vector<const json::object*> gates = ObjectsAt(pod, "spec.readinessGates");
  if (gates.empty()) return json::string("<none>");
  int64_t true_conditions = 0;
  for (const json::object* gate : gates) {
    std::string type = StringAt(*gate, "conditionType");
    for (const json::object* c : ObjectsAt(pod, "status.conditions")) {
      if (StringAt(*c, "type") != type) continue;
      if (StringAt(*c, "status") == "True") ++true_conditions;
      break;
    }
  }
  return json::string(std::to_string(true_conditions) + "/" + std::to_string(gates.size()));
}

}  // namespace

std::vector<TableColumn> PodColumns() {
  return {NameColumn(),
          Column("Ready", "string",
                 "The aggregate readiness state of this pod for accepting traffic.", 0,
                 [](const json::object& pod, TimePoint) -> json::value {
                   PodSummary s = Summarize(pod);
                   return json::string(std::to_string(s.ready) + "/" + std::to_string(s.total));
                 }),
          Column("Status", "string", "The aggregate status of the containers in this pod.", 0,
                 [](const json::object& pod, TimePoint) -> json::value {
                   return json::string(Summarize(pod).reason);
                 }),
          Column("Restarts", "string",
                 "The number of times the containers in this pod have been restarted and when "
                 "the last container in this pod has restarted.",
                 0, RestartsCell),
          AgeColumn(),
          Column("IP", "string", "podIP address allocated to the pod.", 1,
                 [](const json::object& pod, TimePoint) -> json::value {
                   std::vector<const json::object*> ips = ObjectsAt(pod, "status.podIPs");
                   return NoneIfEmpty(ips.empty() ? "" : StringAt(*ips[0], "ip"));
                 }),
          Column("Node", "string", "NodeName indicates in which node this pod is scheduled.", 1,
                 [](const json::object& pod, TimePoint) -> json::value {
                   return NoneIfEmpty(StringAt(pod, "spec.nodeName"));
                 }),
          Column("Nominated Node", "string",
                 "nominatedNodeName is set only when this pod preempts other pods on the node.", 1,
                 [](const json::object& pod, TimePoint) -> json::value {
                   return NoneIfEmpty(StringAt(pod, "status.nominatedNodeName"));
                 }),
          Column("Readiness Gates", "string",
                 "If specified, all readiness gates will be evaluated for pod readiness.", 1,
                 ReadinessGates)};
}

}  // namespace flotilla::api::kinds
