// The Deployment controller of a simulated member, as kube-controller-
// manager's (pkg/controller/deployment). A Deployment owns ReplicaSets
// named <deployment>-<pod-template-hash> (deployment_util.h: ComputeHash),
// labelled and selected with pod-template-hash; the one whose template
// equals the Deployment's is the new ReplicaSet, the others are old.
//
// - RollingUpdate: the new ReplicaSet grows while all pods stay within
//   replicas + maxSurge, old ones shrink while available pods stay at least
//   replicas - maxUnavailable (unhealthy old pods go first). Recreate: old
//   ReplicaSets go to 0, and once their pods are gone the new one is scaled
//   up. A replica change alone (a scaling event, or a paused Deployment)
//   scales ReplicaSets proportionally.
// - Revisions: the new ReplicaSet carries deployment.kubernetes.io/revision
//   (max old + 1; an old ReplicaSet that becomes new again keeps its former
//   revisions in revision-history), desired-replicas and max-replicas, and
//   the Deployment's annotations (kubernetes.io/change-cause ...); the
//   Deployment carries the revision. Old ReplicaSets beyond
//   revisionHistoryLimit with no pods are deleted (in revision order).
// - Status: replicas, updatedReplicas, readyReplicas, availableReplicas,
//   unavailableReplicas, observedGeneration, collisionCount, and the
//   conditions Progressing (NewReplicaSetCreated, FoundNewReplicaSet,
//   ReplicaSetUpdated, NewReplicaSetAvailable, ProgressDeadlineExceeded,
//   DeploymentPaused, DeploymentResumed, ReplicaSetCreateError), Available
//   (MinimumReplicasAvailable / MinimumReplicasUnavailable) and
//   ReplicaFailure (copied from a ReplicaSet), with kube's messages.
// - Events: ScalingReplicaSet ("Scaled up replica set web-5d8c7 from 1 to
//   3"), ReplicaSetCreateError, SelectingAll.
//
// `kubectl rollout undo` (which copies an old ReplicaSet's template into
// the Deployment), `restart`, `pause`, `resume`, `status` and `history`
// work on what this controller writes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "api/deployment/deployment_util.h"
#include "api/labels.h"
#include "member/context.h"

namespace flotilla::member {

namespace deployment = api::deployment;

class DeploymentController : public Component {
 public:
  static constexpr const char* kControllerName = "deployment";

  explicit DeploymentController(ControllerContext& ctx);

 private:
  // One sync's state: a private copy of the Deployment (kept current with
  // every write) and of its ReplicaSets.
  struct Sync {
    json::object d;
    std::vector<deployment::Rs> rs_list;
    // Pods by the uid of their ReplicaSet (for Recreate).
    std::map<std::string, std::vector<runtime::ObjectPtr>> pods_by_rs;
  };
  struct Split {
    deployment::Rs new_rs;                // may be null
    std::vector<deployment::Rs> old_rss;  // every old ReplicaSet
  };

  StatusOr<runtime::Result> Reconcile(const std::string& key);
  Status ClaimReplicaSets(Sync& s, const api::LabelSelector& selector);
  void MapPods(Sync& s, const api::LabelSelector& selector);
  Status CheckPausedConditions(Sync& s);
  bool IsScalingEvent(Sync& s);
  StatusOr<Split> AllReplicaSets(Sync& s, bool create);
  StatusOr<deployment::Rs> NewReplicaSet(Sync& s, const std::vector<deployment::Rs>& old_rss,
                                         bool create);
  StatusOr<deployment::Rs> CreateNewReplicaSet(Sync& s, const std::vector<deployment::Rs>& old_rss,
                                               const std::string& revision);
  Status SetDeploymentRevision(Sync& s, const std::string& revision);

  // rollout.cc
  StatusOr<runtime::Result> SyncScaling(Sync& s);
  Status Scale(Sync& s, const Split& split);
  StatusOr<runtime::Result> RolloutRolling(Sync& s);
  StatusOr<runtime::Result> RolloutRecreate(Sync& s);
  StatusOr<bool> ReconcileNewReplicaSet(Sync& s, const Split& split);
  StatusOr<bool> ReconcileOldReplicaSets(Sync& s, Split& split);
  StatusOr<int64_t> CleanupUnhealthyReplicas(Sync& s, std::vector<deployment::Rs>& old_rss,
                                             int64_t max_cleanup);
  StatusOr<int64_t> ScaleDownOldForRollingUpdate(Sync& s, const Split& split);
  bool OldPodsRunning(const Sync& s, const Split& split) const;
  StatusOr<bool> ScaleReplicaSetAndRecordEvent(Sync& s, deployment::Rs& rs, int64_t new_scale);
  StatusOr<bool> ScaleReplicaSet(Sync& s, deployment::Rs& rs, int64_t new_scale);
  Status CleanupDeployment(Sync& s, const std::vector<deployment::Rs>& old_rss);

  // deployment_status.cc
  json::object CalculateStatus(const Sync& s, const Split& split) const;
  Status SyncDeploymentStatus(Sync& s, const Split& split);
  StatusOr<runtime::Result> SyncRolloutStatus(Sync& s, const Split& split);
  runtime::Result RequeueStuck(const Sync& s, const json::object& status) const;
  Status WriteStatus(Sync& s, json::object status);
  Status WriteCondition(Sync& s, std::string_view type, std::string_view status,
                        std::string_view reason, const std::string& message);
  void Record(const Sync& s, std::string_view type, std::string_view reason,
              const std::string& message);

  // Event handlers.
  void EnqueueOwner(const json::object& rs);
  void EnqueueMatching(const json::object& rs);
  void OnReplicaSetUpdate(const runtime::ObjectPtr& old_rs, const runtime::ObjectPtr& rs);
  void OnPodDelete(const runtime::ObjectPtr& pod);

  client::Client& client_;
  Clock& clock_;
  runtime::EventRecorder& events_;
  runtime::Informer& deployments_;
  runtime::Informer& replicasets_;
  runtime::Informer& pods_;
  runtime::Controller* controller_ = nullptr;
};

}  // namespace flotilla::member
