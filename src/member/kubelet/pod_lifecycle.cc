#include "member/kubelet/pod_lifecycle.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>

#include "member/object_util.h"

namespace flotilla::member::kubelet {
namespace {

constexpr Duration kBackoffBase = std::chrono::seconds(10);
constexpr Duration kBackoffMax = std::chrono::minutes(5);

std::string AnnotationOf(const json::object& pod, std::string_view key) {
  const json::value* annotations = Find(pod, "metadata.annotations");
  if (annotations == nullptr || !annotations->is_object()) return "";
  const json::value* v = annotations->get_object().if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : "";
}

TimePoint Time(const json::object& o, std::string_view path) {
  TimePoint t{};
  ParseRfc3339(StringAt(o, path), &t);
  return t;
}

std::string Hex64(const std::string& seed) {
  std::string out;
  uint64_t h = 14695981039346656037ULL;
  for (int round = 0; round < 4; ++round) {
    for (unsigned char ch : seed + static_cast<char>('0' + round)) h = (h ^ ch) * 1099511628211ULL;
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    out += buf;
  }
  return out;
}

std::string ContainerId(const json::object& pod, const std::string& name, int64_t restarts) {
  return "containerd://" +
         Hex64(StringAt(pod, "metadata.uid") + "/" + name + "/" + std::to_string(restarts));
}

std::string ImageId(const std::string& image) {
  std::string repo = NormalizeImage(image);
  size_t at = repo.find('@');
  if (at != std::string::npos) return repo;
  size_t colon = repo.rfind(':');
  if (colon != std::string::npos && colon > repo.rfind('/')) repo = repo.substr(0, colon);
  return repo + "@sha256:" + Hex64(NormalizeImage(image));
}

Duration Backoff(int64_t restarts) {
  Duration d = kBackoffBase;
  for (int64_t i = 1; i < restarts && d < kBackoffMax; ++i) d *= 2;
  return std::min(d, kBackoffMax);
}

std::string Seconds(Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + "s";
}

// The container's status in the current pod status, by name.
std::map<std::string, const json::object*> CurrentStatuses(const json::object& pod,
                                                           std::string_view path) {
  std::map<std::string, const json::object*> out;
  for (const json::object* cs : ObjectsAt(pod, path)) out[StringAt(*cs, "name")] = cs;
  return out;
}

json::object BaseStatus(const json::object& c, const json::object* cur) {
  json::object s = {{"name", StringAt(c, "name")},
                    {"image", NormalizeImage(StringAt(c, "image"))},
                    {"imageID", ""},
                    {"ready", false},
                    {"started", false},
                    {"restartCount", cur ? IntAt(*cur, "restartCount") : 0}};
  if (cur != nullptr) {
    for (std::string_view key : {"lastState", "containerID", "imageID"}) {
      if (const json::value* v = cur->if_contains(key)) s[key] = *v;
    }
  }
  if (!s.contains("lastState")) s["lastState"] = json::object{};
  return s;
}

void SetRunning(json::object& s, const json::object& pod, const json::object& c, TimePoint since) {
  s["state"] = json::object{{"running", json::object{{"startedAt", FormatRfc3339(since)}}}};
  s["started"] = true;
  s["imageID"] = ImageId(StringAt(c, "image"));
  s["containerID"] = ContainerId(pod, StringAt(c, "name"), s["restartCount"].as_int64());
}

// The exit code the pod's containers end with (its annotation); `fallback`
// without one.
int64_t ExitCode(const json::object& pod, int64_t fallback) {
  std::string text = AnnotationOf(pod, kExitCodeAnnotation);
  if (text.empty()) return fallback;
  char* end = nullptr;
  long long code = std::strtoll(text.c_str(), &end, 10);
  return end != nullptr && *end == '\0' && code >= 0 && code <= 255 ? code : fallback;
}

struct Step {
  Simulated& out;
  void Next(TimePoint t) {
    if (!out.next || t < *out.next) out.next = t;
  }
};

// One regular container once its pod started: running, ready after the
// readiness delay, or crash-looping.
json::object RunContainer(const json::object& pod, const json::object& c, const json::object* cur,
                          const PodFacts& f, std::optional<Duration> crash_after, Step& step) {
  const bool crash_loop = crash_after.has_value();
  json::object s = BaseStatus(c, cur);
  std::string name = StringAt(c, "name");
  const json::object* running = cur ? GetObject(*cur, "state") : nullptr;
  running = running ? GetObject(*running, "running") : nullptr;
  std::string waiting = cur ? StringAt(*cur, "state.waiting.reason") : "";
  TimePoint started_at = f.now;
  if (running != nullptr) {
    started_at = Time(*running, "startedAt");
  } else if (waiting == "CrashLoopBackOff") {
    TimePoint restart_at =
        Time(*cur, "lastState.terminated.finishedAt") + Backoff(IntAt(*cur, "restartCount"));
    if (f.now < restart_at) {
      s["state"] = *Find(*cur, "state");
      step.Next(restart_at);
      return s;
    }
    step.out.events.push_back({"Normal", "Started", "Started container " + name});
  } else {
    std::string image = StringAt(c, "image");
    step.out.events.push_back(
        {"Normal", "Pulled", "Container image \"" + image + "\" already present on machine"});
    step.out.events.push_back({"Normal", "Created", "Created container " + name});
    step.out.events.push_back({"Normal", "Started", "Started container " + name});
  }
  if (crash_loop && f.now >= started_at + *crash_after) {
    int64_t restarts = s["restartCount"].as_int64() + 1;
    std::string id = ContainerId(pod, name, restarts - 1);
    s["lastState"] =
        json::object{{"terminated", json::object{{"exitCode", ExitCode(pod, 1)},
                                                 {"reason", "Error"},
                                                 {"startedAt", FormatRfc3339(started_at)},
                                                 {"finishedAt", FormatRfc3339(f.now)},
                                                 {"containerID", id}}}};
    s["restartCount"] = restarts;
    std::string pod_ref = StringAt(pod, "metadata.name") + "_" +
                          StringAt(pod, "metadata.namespace") + "(" +
                          StringAt(pod, "metadata.uid") + ")";
    s["state"] = json::object{
        {"waiting", json::object{{"reason", "CrashLoopBackOff"},
                                 {"message", "back-off " + Seconds(Backoff(restarts)) +
                                                 " restarting failed container=" + name +
                                                 " pod=" + pod_ref}}}};
    s["imageID"] = ImageId(StringAt(c, "image"));
    s["containerID"] = id;
    step.out.events.push_back(
        {"Warning", "BackOff",
         "Back-off restarting failed container " + name + " in pod " + pod_ref});
    step.Next(f.now + Backoff(restarts));
    return s;
  }
  if (crash_loop) step.Next(started_at + *crash_after);
  SetRunning(s, pod, c, started_at);
  Duration delay = std::chrono::seconds(IntAt(c, "readinessProbe.initialDelaySeconds"));
  bool ready = f.now >= started_at + delay;
  if (!ready) step.Next(started_at + delay);
  s["ready"] = ready;
  return s;
}

json::object Condition(const json::object& pod, std::string_view type, bool ok,
                       std::string_view reason, const std::string& message, TimePoint now) {
  std::string status = ok ? "True" : "False";
  std::string since = FormatRfc3339(now);
  for (const json::object* c : ObjectsAt(pod, "status.conditions")) {
    if (StringAt(*c, "type") == type && StringAt(*c, "status") == status) {
      since = StringAt(*c, "lastTransitionTime");
    }
  }
  json::object c = {{"type", type}, {"status", status}, {"lastTransitionTime", since}};
  if (!ok && !reason.empty()) {
    c["reason"] = reason;
    c["message"] = message;
  }
  return c;
}

// conditions in the kubelet's order, the other types (e.g. readiness
// gates' or DisruptionTarget) kept after them.
json::array Conditions(const json::object& pod, bool sandbox, bool initialized,
                       const std::vector<std::string>& unready, TimePoint now) {
  std::string names;
  for (const std::string& n : unready) names += (names.empty() ? "" : " ") + n;
  std::string message = "containers with unready status: [" + names + "]";
  bool ready = unready.empty();
  json::array out = {Condition(pod, "PodReadyToStartContainers", sandbox, "", "", now),
                     Condition(pod, "Initialized", initialized, "ContainersNotInitialized",
                               "containers with incomplete status: []", now),
                     Condition(pod, "Ready", ready, "ContainersNotReady", message, now),
                     Condition(pod, "ContainersReady", ready, "ContainersNotReady", message, now),
                     Condition(pod, "PodScheduled", true, "", "", now)};
  for (const json::object* c : ObjectsAt(pod, "status.conditions")) {
    std::string type = StringAt(*c, "type");
    if (type != "PodReadyToStartContainers" && type != "Initialized" && type != "Ready" &&
        type != "ContainersReady" && type != "PodScheduled") {
      out.push_back(*c);
    }
  }
  return out;
}

json::object StatusBase(const json::object& pod, const std::string& host_ip, TimePoint now) {
  json::object status;
  if (const json::value* s = Find(pod, "status"); s && s->is_object()) status = s->get_object();
  // hostIPs is not in the schema the API prunes by (python-kubernetes'
  // models predate it), so only hostIP is reported.
  status["hostIP"] = host_ip;
  if (StringAt(status, "startTime").empty()) status["startTime"] = FormatRfc3339(now);
  return status;
}

json::object InitStatus(const json::object& c, const json::object& pod, TimePoint at) {
  json::object s = BaseStatus(c, nullptr);
  s["imageID"] = ImageId(StringAt(c, "image"));
  s["containerID"] = ContainerId(pod, StringAt(c, "name"), 0);
  s["state"] = json::object{{"terminated", json::object{{"exitCode", 0},
                                                        {"reason", "Completed"},
                                                        {"startedAt", FormatRfc3339(at)},
                                                        {"finishedAt", FormatRfc3339(at)}}}};
  return s;
}

}  // namespace

std::string NormalizeImage(const std::string& image) {
  std::string out = image;
  size_t slash = out.find('/');
  std::string first = slash == std::string::npos ? "" : out.substr(0, slash);
  bool has_registry =
      slash != std::string::npos && (first.find('.') != std::string::npos ||
                                     first.find(':') != std::string::npos || first == "localhost");
  if (slash == std::string::npos) {
    out = "docker.io/library/" + out;
  } else if (!has_registry) {
    out = "docker.io/" + out;
  }
  size_t last_slash = out.rfind('/');
  if (out.find('@') == std::string::npos && out.find(':', last_slash) == std::string::npos) {
    out += ":latest";
  }
  return out;
}

std::optional<Duration> RunFor(const json::object& pod) {
  std::string text = AnnotationOf(pod, kRunForAnnotation);
  if (!text.empty()) {
    if (std::optional<Duration> d = ParseGoDuration(text)) return d;
  }
  for (const json::object* ref : ObjectsAt(pod, "metadata.ownerReferences")) {
    if (StringAt(*ref, "kind") == "Job" && StringAt(*ref, "apiVersion") == "batch/v1") {
      return kDefaultJobRunFor;
    }
  }
  return std::nullopt;
}

Simulated Exited(const json::object& pod, const PodFacts& f, TimePoint started, TimePoint ended) {
  Simulated out;
  int64_t code = ExitCode(pod, 0);
  bool succeeded = code == 0;
  json::object status = StatusBase(pod, f.host_ip, f.now);
  auto current = CurrentStatuses(pod, "status.containerStatuses");
  bool changed = StringAt(pod, "status.phase") != (succeeded ? "Succeeded" : "Failed");
  json::array statuses;
  for (const json::object* c : ObjectsAt(pod, "spec.containers")) {
    std::string name = StringAt(*c, "name");
    auto it = current.find(name);
    const json::object* cur = it == current.end() ? nullptr : it->second;
    json::object s = BaseStatus(*c, cur);
    s["imageID"] = ImageId(StringAt(*c, "image"));
    s["containerID"] = ContainerId(pod, name, s["restartCount"].as_int64());
    s["state"] =
        json::object{{"terminated", json::object{{"exitCode", code},
                                                 {"reason", succeeded ? "Completed" : "Error"},
                                                 {"startedAt", FormatRfc3339(started)},
                                                 {"finishedAt", FormatRfc3339(ended)},
                                                 {"containerID", s["containerID"]}}}};
    statuses.push_back(std::move(s));
  }
  status["containerStatuses"] = std::move(statuses);
  std::string reason = succeeded ? "PodCompleted" : "PodFailed";
  auto terminal = [&](std::string_view type, bool ok) {
    json::object c = Condition(pod, type, ok, "", "", ended);
    if (!ok || type == "Initialized") c["reason"] = reason;
    return c;
  };
  json::array conditions = {terminal("PodReadyToStartContainers", false),
                            terminal("Initialized", true), terminal("Ready", false),
                            terminal("ContainersReady", false),
                            Condition(pod, "PodScheduled", true, "", "", ended)};
  for (const json::object* c : ObjectsAt(pod, "status.conditions")) {
    std::string type = StringAt(*c, "type");
    if (type != "PodReadyToStartContainers" && type != "Initialized" && type != "Ready" &&
        type != "ContainersReady" && type != "PodScheduled") {
      conditions.push_back(*c);
    }
  }
  status["conditions"] = std::move(conditions);
  status["phase"] = succeeded ? "Succeeded" : "Failed";
  if (changed && !succeeded) {
    out.events.push_back(
        {"Warning", "Failed", "Container exited with code " + std::to_string(code)});
  }
  out.status = std::move(status);
  return out;
}

// A container that cannot be created: waiting with the reason, and the
// kubelet's event when it starts waiting so.
json::object ConfigError(const json::object& c, const json::object* cur, const std::string& error,
                         Step& step) {
  json::object s = BaseStatus(c, cur);
  s["state"] = json::object{
      {"waiting", json::object{{"reason", "CreateContainerConfigError"}, {"message", error}}}};
  if (!cur || StringAt(*cur, "state.waiting.reason") != "CreateContainerConfigError" ||
      StringAt(*cur, "state.waiting.message") != error) {
    step.out.events.push_back({"Warning", "Failed", "Error: " + error});
  }
  return s;
}

Simulated Run(const json::object& pod, const PodFacts& f) {
  Simulated out;
  Step step{out};
  bool started = f.now >= f.start_at && f.missing.mount_error.empty();

  json::object status = StatusBase(pod, f.host_ip, f.now);
  auto current = CurrentStatuses(pod, "status.containerStatuses");
  std::optional<Duration> crash_after;
  if (AnnotationOf(pod, kCrashLoopAnnotation) == "true") crash_after = kCrashLoopRunTime;
  if (std::optional<Duration> run_for = RunFor(pod)) {
    if (ExitCode(pod, 0) != 0 && StringAt(pod, "spec.restartPolicy") == "OnFailure") {
      // The kubelet restarts a container that failed, with back-off.
      crash_after = run_for;
    } else if (started && f.missing.config_errors.empty()) {
      TimePoint since = f.now;
      for (const json::object* cs : ObjectsAt(pod, "status.containerStatuses")) {
        if (const json::value* at = Find(*cs, "state.running.startedAt")) {
          TimePoint t;
          if (at->is_string() && ParseRfc3339(std::string(at->get_string()), &t))
            since = std::min(since, t);
        }
      }
      if (f.now >= since + *run_for) return Exited(pod, f, since, since + *run_for);
      step.Next(since + *run_for);
    }
  }
  json::array statuses;
  std::vector<std::string> unready;
  bool any_started = false;  // a container past its config (running or crash-looping)
  for (const json::object* c : ObjectsAt(pod, "spec.containers")) {
    std::string name = StringAt(*c, "name");
    auto it = current.find(name);
    const json::object* cur = it == current.end() ? nullptr : it->second;
    auto error = f.missing.config_errors.find(name);
    json::object s;
    if (!started) {
      s = BaseStatus(*c, cur);
      s["state"] = json::object{{"waiting", json::object{{"reason", "ContainerCreating"}}}};
    } else if (error != f.missing.config_errors.end()) {
      s = ConfigError(*c, cur, error->second, step);
    } else {
      s = RunContainer(pod, *c, cur, f, crash_after, step);
      any_started = true;
    }
    if (!s["ready"].as_bool()) unready.push_back(name);
    statuses.push_back(std::move(s));
  }
  std::vector<const json::object*> init = ObjectsAt(pod, "spec.initContainers");
  if (!init.empty()) {
    auto done = CurrentStatuses(pod, "status.initContainerStatuses");
    json::array init_statuses;
    for (const json::object* c : init) {
      auto it = done.find(StringAt(*c, "name"));
      if (started) {
        init_statuses.push_back(it != done.end() && Find(*it->second, "state.terminated")
                                    ? json::value(*it->second)
                                    : json::value(InitStatus(*c, pod, f.now)));
      } else {
        json::object s = BaseStatus(*c, nullptr);
        s["state"] = json::object{{"waiting", json::object{{"reason", "PodInitializing"}}}};
        init_statuses.push_back(std::move(s));
      }
    }
    status["initContainerStatuses"] = std::move(init_statuses);
  }
  status["containerStatuses"] = std::move(statuses);
  status["conditions"] = Conditions(pod, started, started || init.empty(), unready, f.now);
  status["phase"] = any_started ? "Running" : "Pending";
  if (started && !f.pod_ip.empty()) {
    status["podIP"] = f.pod_ip;
    status["podIPs"] = json::array{json::object{{"ip", f.pod_ip}}};
  }
  // (While a volume cannot be mounted, what it waits for brings the pod
  // back; start_at may have passed.)
  if (!started && f.missing.mount_error.empty()) step.Next(f.start_at);
  out.status = std::move(status);
  return out;
}

Simulated Terminate(const json::object& pod, TimePoint now) {
  Simulated out;
  const json::value* s = Find(pod, "status");
  json::object status = s && s->is_object() ? s->get_object() : json::object{};
  auto current = CurrentStatuses(pod, "status.containerStatuses");
  json::array statuses;
  std::vector<std::string> names;
  for (const json::object* c : ObjectsAt(pod, "spec.containers")) {
    std::string name = StringAt(*c, "name");
    names.push_back(name);
    auto it = current.find(name);
    const json::object* cur = it == current.end() ? nullptr : it->second;
    json::object cs = BaseStatus(*c, cur);
    if (cur != nullptr && Find(*cur, "state.terminated") != nullptr) {
      cs["state"] = *Find(*cur, "state");
    } else {
      std::string started_at = cur ? StringAt(*cur, "state.running.startedAt") : "";
      json::object terminated = {
          {"exitCode", 0},
          {"reason", "Completed"},
          {"startedAt", started_at.empty() ? FormatRfc3339(now) : started_at},
          {"finishedAt", FormatRfc3339(now)}};
      if (cur != nullptr && !StringAt(*cur, "containerID").empty()) {
        terminated["containerID"] = StringAt(*cur, "containerID");
      }
      cs["state"] = json::object{{"terminated", std::move(terminated)}};
      if (cur != nullptr && Find(*cur, "state.running") != nullptr) {
        out.events.push_back({"Normal", "Killing", "Stopping container " + name});
      }
    }
    statuses.push_back(std::move(cs));
  }
  status["containerStatuses"] = std::move(statuses);
  bool sandbox = false;
  for (const json::object* c : ObjectsAt(pod, "status.conditions")) {
    if (StringAt(*c, "type") == "PodReadyToStartContainers")
      sandbox = StringAt(*c, "status") == "True";
  }
  json::array conditions = Conditions(pod, sandbox, true, names, now);
  status["conditions"] = std::move(conditions);
  out.status = std::move(status);
  return out;
}

}  // namespace flotilla::member::kubelet
