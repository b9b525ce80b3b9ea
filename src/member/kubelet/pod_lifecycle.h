// What a simulated kubelet reports for a pod at a moment: the pod's status
// (phase, conditions, IPs, container statuses) derived from its current
// status, its spec and the time, so that the kubelet stays level-based: the
// same inputs give the same status, and a status already written is not
// written again. Pure functions; thread-safe. Internal to src/member/kubelet.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/json.h"
#include "member/kubelet/pod_dependencies.h"

namespace flotilla::member::kubelet {

// The annotation that makes every container of a pod crash after
// kCrashLoopRunTime and restart with the kubelet's back-off (10 s doubling
// to 5 min): restartCount grows, state.waiting is CrashLoopBackOff and the
// pod is not Ready in between.
inline constexpr std::string_view kCrashLoopAnnotation = "sim.flotilla.io/crash-loop";
inline constexpr Duration kCrashLoopRunTime = std::chrono::seconds(5);

// How long a pod's containers run before they exit (a Go duration, "30s"),
// and the code they exit with (default 0): a pod that exits 0, or whose
// restartPolicy is Never, ends Succeeded or Failed; a failing pod with
// restartPolicy OnFailure has its containers restarted with back-off. A
// Job's pods run kDefaultJobRunFor without the annotation; other pods run
// until deleted.
inline constexpr std::string_view kRunForAnnotation = "sim.flotilla.io/run-for";
inline constexpr std::string_view kExitCodeAnnotation = "sim.flotilla.io/exit-code";
inline constexpr Duration kDefaultJobRunFor = std::chrono::seconds(5);

struct PodFacts {
  TimePoint now;
  TimePoint start_at;   // when the sandbox is up and the containers start
  std::string host_ip;  // the node's InternalIP
  std::string pod_ip;   // "" before start_at
  // What the pod still lacks (pod_dependencies.h): with a mount error the
  // sandbox does not start; a container with a config error waits.
  Dependencies missing;
};

struct Event {
  std::string type;  // "Normal" or "Warning"
  std::string reason;
  std::string message;
};

struct Simulated {
  json::object status;
  std::optional<TimePoint> next;  // when the status changes next by itself
  std::vector<Event> events;      // what happened since the current status
};

// The status of a running (not deleted) pod: Pending with containers
// ContainerCreating before start_at or while a volume cannot be mounted
// (the kubelet reports FailedMount), then Running with ready containers (a
// readinessProbe's initialDelaySeconds after they started), crash loops
// for annotated pods; a container whose config cannot be resolved waits
// in CreateContainerConfigError (event Failed), the pod Pending while no
// container runs.
Simulated Run(const json::object& pod, const PodFacts& facts);

// The pod's run time (kRunForAnnotation, or a Job pod's default); nullopt:
// it runs until deleted.
std::optional<Duration> RunFor(const json::object& pod);

// The status of a pod whose containers ran from `started` and exited at
// `ended` with the pod's exit code: Succeeded or Failed.
Simulated Exited(const json::object& pod, const PodFacts& facts, TimePoint started,
                 TimePoint ended);

// The status of a pod being deleted: every container terminated, the pod
// not Ready.
Simulated Terminate(const json::object& pod, TimePoint now);

// "docker.io/library/nginx:latest" for "nginx", as containerd reports it.
std::string NormalizeImage(const std::string& image);

}  // namespace flotilla::member::kubelet
