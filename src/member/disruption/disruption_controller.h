// The member's disruption controller (kube-controller-manager's
// pkg/controller/disruption; docs/member.md "Disruption budgets"): keeps
// each PodDisruptionBudget's status for the eviction subresource
// (apiserver/objects.h, Objects::Evict) and `kubectl get pdb`:
// - expectedPods and desiredHealthy: with an integer minAvailable, the
//   budget's pods and minAvailable; with a percentage minAvailable or any
//   maxUnavailable, the scale of the pods' controllers (a ReplicaSet's
//   replicas, its Deployment's when it has one, a StatefulSet's), the
//   value scaled to it rounded up (desiredHealthy = expected -
//   maxUnavailable); pods without such a controller fail the budget
//   (DisruptionAllowed False, SyncFailed, a Warning
//   CalculateExpectedPodCountFailed) as in Kubernetes;
// - currentHealthy: the budget's Ready pods that are not being deleted and
//   not in status.disruptedPods;
// - disruptionsAllowed: currentHealthy - desiredHealthy, at least 0 (0
//   when no pod is expected); the DisruptionAllowed condition;
// - disruptedPods: what evictions recorded, dropped once the pod is being
//   deleted, or after kDeletionTimeout if it never was (a Warning
//   NotDeleted);
// - observedGeneration, which evictions wait for.
// A budget is recomputed when it changes and when a pod of its namespace
// that it selects changes.
#pragma once

#include <string>
#include <vector>

#include "member/context.h"

namespace flotilla::member {

using client::kPodDisruptionBudgets;

class DisruptionController : public Component {
 public:
  // kube's DeletionTimeout.
  static constexpr Duration kDeletionTimeout = std::chrono::minutes(2);

  explicit DisruptionController(ControllerContext& ctx);

 private:
  StatusOr<runtime::Result> Reconcile(const std::string& key);
  // getExpectedScale: the summed scale of the pods' controllers.
  StatusOr<int64_t> ExpectedScale(const std::vector<runtime::ObjectPtr>& pods) const;
  // The scale of the controller `ref` of a pod in `ns`, and its uid (a
  // Deployment's for a ReplicaSet it owns); nullopt: no such controller.
  std::optional<std::pair<std::string, int64_t>> ControllerScale(const std::string& ns,
                                                                 const json::object& ref) const;
  void EnqueueBudgetsOf(const json::object& pod);

  client::Client& client_;
  Clock& clock_;
  runtime::EventRecorder events_;
  runtime::Informer& budgets_;
  runtime::Informer& pods_;
  runtime::Informer& replicasets_;
  runtime::Informer& deployments_;
  runtime::Informer& statefulsets_;
  runtime::Controller* controller_ = nullptr;
};

}  // namespace flotilla::member
