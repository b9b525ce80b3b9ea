// The member's DaemonSet controller (kube-controller-manager's
// pkg/controller/daemon; docs/member.md "DaemonSets"):
// - one pod of the template per node that should run it
//   (scheduler::PlaceDaemonPod: node selector, required node affinity,
//   taints, and the default tolerations every DaemonSet pod gets), made with
//   a required node affinity on that node's name so that the scheduler binds
//   it there; pods on nodes that should no longer run them, failed pods and
//   surplus pods on a node are deleted;
// - revisions as ControllerRevisions (runtime/controller_history.h), so
//   `kubectl rollout history|undo ds` work; pods carry the revision's hash
//   in the controller-revision-hash label;
// - RollingUpdate replaces the old pods node by node: with maxSurge 0, old
//   pods are deleted while at most maxUnavailable (of
//   desiredNumberScheduled, rounded up) nodes lack an available pod (an old
//   pod that is not available goes at once); with maxSurge, a new pod
//   starts beside the old one on at most maxSurge nodes and the old one
//   goes once the new one is available. OnDelete replaces only deleted
//   pods;
// - status: desiredNumberScheduled, currentNumberScheduled,
//   numberMisscheduled, numberReady, numberAvailable (minReadySeconds),
//   numberUnavailable, updatedNumberScheduled, observedGeneration.
// Events from "daemonset-controller": SuccessfulCreate, SuccessfulDelete,
// FailedCreate, FailedDaemonPod.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "member/context.h"
#include "member/replicaset/expectations.h"
#include "runtime/controller_history.h"

namespace flotilla::member {

using client::kDaemonSets;

class DaemonSetController : public Component {
 public:
  static constexpr char kControllerName[] = "daemonset-controller";

  explicit DaemonSetController(ControllerContext& ctx);

 private:
  struct Pass;

  StatusOr<runtime::Result> Reconcile(const std::string& key);
  // The DaemonSet's key of a pod it controls; "" for other pods.
  std::string OwnerKey(const json::object& pod) const;
  // The DaemonSet's pods by the node they are (or are to be) bound to.
  std::map<std::string, std::vector<runtime::ObjectPtr>> PodsByNode(const json::object& ds) const;
  // The pod of `ds`'s template with `hash`, owned by it and with the
  // daemon pods' tolerations (NewPod; not yet bound to a node).
  json::object NewPod(const json::object& ds, const std::string& hash) const;
  // Plans the creates and deletes of one pass (manage and rollingUpdate).
  void Manage(Pass& pass) const;
  void RollingUpdate(Pass& pass) const;
  Status Apply(const std::string& key, const Pass& pass);
  Status WriteStatus(const json::object& ds, const json::object& status);

  client::Client& client_;
  Clock& clock_;
  runtime::EventRecorder events_;
  runtime::Informer& sets_;
  runtime::Informer& pods_;
  runtime::Informer& nodes_;
  runtime::Informer& revisions_;
  runtime::ControllerHistory history_;
  Expectations expectations_;
  runtime::Controller* controller_ = nullptr;
};

}  // namespace flotilla::member
