// The member's Job controller (kube-controller-manager's, docs/member.md
// "Jobs"): runs a batch/v1 Job's pods to completion on the member's clock.
// - Pods are the template's, owned by the Job, named <job>-<random>
//   (Indexed: <job>-<index>-<random>, with the batch.kubernetes.io/
//   job-completion-index annotation and label, JOB_COMPLETION_INDEX in every
//   container's environment and hostname <job>-<index>).
// - At most spec.parallelism run at once, and no more than the completions
//   still needed (a work queue Job, without completions, runs parallelism
//   pods until one succeeds). A failed pod is replaced after a back-off
//   (10 s doubling, at most 6 min) until the failures exceed backoffLimit
//   (with restartPolicy OnFailure: the containers' restarts reach it); then
//   the Job fails (BackoffLimitExceeded), as it does when it has been active
//   longer than activeDeadlineSeconds (DeadlineExceeded). A failing Job
//   gets FailureTarget, its running pods are deleted, then Failed.
// - A Job with the completions it asks for gets SuccessCriteriaMet and then
//   Complete, and completionTime.
// - spec.suspend deletes the running pods (Suspended condition); resuming
//   sets a new startTime.
// - status: active, ready, succeeded, failed, terminating, completedIndexes
//   (Indexed), uncountedTerminatedPods, startTime, completionTime. Counts of
//   finished pods are kept when the pods are deleted.
// - A finished Job with ttlSecondsAfterFinished is deleted with its pods
//   that long after it finished.
// Events from "job-controller": SuccessfulCreate, SuccessfulDelete,
// Completed, BackoffLimitExceeded, DeadlineExceeded, Suspended, Resumed.
#pragma once

#include <string>
#include <vector>

#include "member/context.h"
#include "member/replicaset/expectations.h"

namespace flotilla::member {

class JobController : public Component {
 public:
  static constexpr char kControllerName[] = "job-controller";
  static constexpr Duration kBackoffBase = std::chrono::seconds(10);
  static constexpr Duration kBackoffMax = std::chrono::minutes(6);

  explicit JobController(ControllerContext& ctx);

 private:
  StatusOr<runtime::Result> Reconcile(const std::string& key);
  // The Job's key of a pod it controls; "" for other pods.
  std::string OwnerKey(const json::object& pod) const;
  std::vector<runtime::ObjectPtr> PodsOf(const json::object& job) const;
  Status DeletePods(const std::string& key, const json::object& job,
                    const std::vector<runtime::ObjectPtr>& pods);
  Status CreatePod(const std::string& key, const json::object& job, std::optional<int64_t> index);
  StatusOr<runtime::Result> Expire(const json::object& job);
  StatusOr<runtime::Result> Finish(StatusOr<runtime::Result> written, const json::object& job,
                                   const json::object& status);

  client::Client& client_;
  Clock& clock_;
  runtime::EventRecorder events_;
  runtime::Informer& jobs_;
  runtime::Informer& pods_;
  Expectations expectations_;
  runtime::Controller* controller_ = nullptr;
};

}  // namespace flotilla::member
