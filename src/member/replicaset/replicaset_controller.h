// The ReplicaSet controller of a simulated member, as kube-controller-
// manager's (pkg/controller/replicaset): it keeps spec.replicas active pods
// for every ReplicaSet, creating pods from the template (named
// <replicaset>-<5 random characters> through generateName, with a
// controller ownerReference) and deleting the least useful pods first
// (SortForDeletion). It adopts orphan pods its selector matches and
// releases owned pods that no longer match; pods being deleted and
// terminated pods (Succeeded, Failed) do not count, so a failed pod is
// replaced. Expectations keep it from acting twice on a stale cache.
//
// Status: replicas, fullyLabeledReplicas, readyReplicas, availableReplicas
// (ready for minReadySeconds on the clock), observedGeneration, and the
// ReplicaFailure condition (FailedCreate / FailedDelete, with the API
// error's message) while creating or deleting pods fails. Events:
// SuccessfulCreate, FailedCreate, SuccessfulDelete, FailedDelete.
#pragma once

#include <string>

#include "member/context.h"
#include "member/replicaset/expectations.h"

namespace flotilla::member {

class ReplicaSetController : public Component {
 public:
  static constexpr const char* kControllerName = "replicaset";
  // Pods created or deleted in one sync at most (kube's burstReplicas).
  static constexpr int kBurstReplicas = 500;

  explicit ReplicaSetController(ControllerContext& ctx);

 private:
  struct Outcome {
    Status error;
    std::string reason;  // "FailedCreate" or "FailedDelete" when error is set
  };

  StatusOr<runtime::Result> Reconcile(const std::string& key);
  Outcome ManageReplicas(const std::string& key, const json::object& rs,
                         std::vector<runtime::ObjectPtr> pods);
  Outcome CreatePods(const std::string& key, const json::object& rs, int count);
  Outcome DeletePods(const std::string& key, const json::object& rs,
                     std::vector<runtime::ObjectPtr> pods, int count);
  json::object CalculateStatus(const json::object& rs, const std::vector<runtime::ObjectPtr>& pods,
                               const Outcome& outcome) const;
  Status WriteStatus(const json::object& rs, json::object status);
  Duration UntilNextAvailable(const json::object& rs,
                              const std::vector<runtime::ObjectPtr>& pods) const;

  // Event handlers (pods): which ReplicaSets to wake.
  std::string OwnerKey(const json::object& pod) const;
  void EnqueueMatching(const json::object& pod);
  void OnPodAdd(const runtime::ObjectPtr& pod);
  void OnPodUpdate(const runtime::ObjectPtr& old_pod, const runtime::ObjectPtr& pod);
  void OnPodDelete(const runtime::ObjectPtr& pod);

  client::Client& client_;
  Clock& clock_;
  runtime::EventRecorder& events_;
  runtime::Informer& replicasets_;
  runtime::Informer& pods_;
  Expectations expectations_;
  runtime::Controller* controller_ = nullptr;
};

}  // namespace flotilla::member
