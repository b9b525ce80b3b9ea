// The member's simulated kubelet: runs the pods bound to the member's nodes
// without running anything.
// - A bound pod is Pending (containers ContainerCreating, hostIP, startTime)
//   until options.pod_startup after the kubelet first saw it, then Running
//   with a pod IP from options.pod_cidr (unique in the member), running
//   container statuses, and Ready once every container is (a
//   readinessProbe's initialDelaySeconds after it started).
// - Pods annotated sim.flotilla.io/crash-loop: "true" crash-loop
//   (pod_lifecycle.h).
// - A pod with a deletionTimestamp has its containers terminated at once and
//   is deleted (grace 0, UID precondition) when the deletionTimestamp, the
//   end of its grace period, comes.
// - A pod in phase Succeeded or Failed is left as it is (deleted at once if
//   it is being deleted).
// - A pod bound to a node that does not exist is deleted once the node has
//   been missing for kOrphanQuarantine (40 s), as the pod garbage collector
//   does.
// - A pod whose volumes or container config need objects the API does not
//   have yet (a ConfigMap, a Secret, a bound claim; pod_dependencies.h)
//   waits for them: ContainerCreating with FailedMount, or the container in
//   CreateContainerConfigError; it goes on when they come. A container
//   that started is not stopped when they go later.
// Every delay runs on the member's clock. Events come from "kubelet"
// (Pulled, Created, Started, Killing, BackOff, FailedMount, Failed).
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>

#include "base/mutex.h"
#include "member/context.h"
#include "member/kubelet/pod_lifecycle.h"
#include "runtime/event_recorder.h"

namespace flotilla::member {

class Kubelet : public Component {
 public:
  static constexpr Duration kOrphanQuarantine = std::chrono::seconds(40);

  explicit Kubelet(ControllerContext& ctx);

  // Pods whose node is gone, waiting out kOrphanQuarantine.
  size_t Quarantined();
  // Pods the kubelet keeps state for (first seen, quarantine, mount
  // errors); a pod's state goes with the pod, whoever deletes it.
  size_t Remembered();

 private:
  StatusOr<runtime::Result> Reconcile(const std::string& key);
  StatusOr<runtime::Result> Orphaned(const json::object& pod);
  StatusOr<runtime::Result> Terminating(const json::object& pod);
  StatusOr<runtime::Result> Running(const json::object& pod, const json::object& node);
  Status WriteStatus(const json::object& pod, const kubelet::Simulated& sim);
  Status ForceDelete(const json::object& pod);
  TimePoint FirstSeen(const std::string& uid);
  // Drops what is kept for the pod `uid` (it is gone).
  void Forget(const std::string& uid);
  std::string AllocateIp(const std::string& key, const json::object& pod);
  void Release(const std::string& key);
  runtime::Result After(const std::string& key, std::optional<TimePoint> next);
  void EnqueuePodsOn(const std::string& node);
  // The pods that name `obj` (a ConfigMap, Secret or claim, `kind` one of
  // pod_dependencies.h's, that came or changed) and may be waiting for it.
  void EnqueueWaitingPods(std::string_view kind, const runtime::ObjectPtr& obj);
  // What `pod` still lacks to start (for a pod already Running, only its
  // containers still waiting for their config).
  kubelet::Dependencies Missing(const json::object& pod);
  // Records FailedMount for `pod` when `error` is new for it.
  void ReportMount(const json::object& pod, const std::string& error);

  client::Client& client_;
  Clock& clock_;
  const SimulationOptions& options_;
  runtime::Informer& pods_;
  runtime::Informer& nodes_;
  runtime::Informer& config_maps_;
  runtime::Informer& secrets_;
  runtime::Informer& claims_;
  runtime::EventRecorder events_;
  runtime::Controller* controller_ = nullptr;
  uint32_t network_ = 0;  // pod_cidr
  uint32_t size_ = 0;     // addresses in pod_cidr

  Mutex mu_;
  std::map<std::string, TimePoint> first_seen_ GUARDED_BY(mu_);      // by pod uid
  std::map<std::string, TimePoint> orphaned_since_ GUARDED_BY(mu_);  // by pod uid
  // By pod uid: the FailedMount last reported (one event per new reason).
  std::map<std::string, std::string> mount_errors_ GUARDED_BY(mu_);
  std::map<std::string, std::string> ips_ GUARDED_BY(mu_);  // pod key -> IP
  std::set<std::string> used_ips_ GUARDED_BY(mu_);
  bool ips_loaded_ GUARDED_BY(mu_) = false;
  uint32_t next_ip_ GUARDED_BY(mu_) = 0;  // offset in pod_cidr
};

}  // namespace flotilla::member
