// The member's StatefulSet controller (pkg/controller/statefulset): pods
// "<set>-<ordinal>" with stable identity and storage, created in order and
// only once their predecessors are Running and Ready (OrderedReady) or all
// at once (Parallel), removed from the highest ordinal down, updated from
// the highest ordinal down to spec.updateStrategy.rollingUpdate.partition
// one pod at a time (RollingUpdate) or only when deleted (OnDelete), with
// revisions kept as ControllerRevisions (history.h) and the status
// kubectl reads. A failed or deleted pod is recreated with the same name.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "api/labels.h"
#include "member/context.h"
#include "runtime/controller_history.h"

namespace flotilla::member {

class StatefulSetController : public Component {
 public:
  explicit StatefulSetController(ControllerContext& ctx);

 private:
  struct Pass;

  StatusOr<runtime::Result> Reconcile(const std::string& key);
  // Enqueues the set controlling `pod`, or for an orphan the sets that
  // would adopt it.
  void EnqueueFor(const json::object& pod, runtime::WorkQueue& queue) const;
  // ClaimPods: orphans named after `set` and matched by its selector get
  // its controller ownerReference (after `kubectl delete statefulset
  // --cascade=orphan` and a re-create). True when any was adopted.
  StatusOr<bool> AdoptOrphans(const json::object& set, const api::LabelSelector& selector);
  // The pass over `set`'s pods: its revisions, its pods by ordinal and
  // the status they count for. Returns the revisions the pods carry.
  std::set<std::string> BuildPass(const json::object& set, const runtime::Revisions& revisions,
                                  Pass& pass) const;
  // completeRollingUpdate and the status fields beyond the counts.
  void FinishStatus(Pass& pass, runtime::Revisions& revisions) const;
  // The ordered steps of one pass; each returns false when the pass must
  // stop and wait for the world (a pod to become ready or to go away).
  Status ProcessReplicas(Pass& pass, bool& proceed);
  Status ProcessCondemned(Pass& pass, bool& proceed);
  Status RollOut(Pass& pass);
  Status CreatePod(Pass& pass, int index, bool& created);
  Status DeletePod(Pass& pass, const json::object& pod);
  Status CreateClaims(const json::object& set, int ordinal, const std::string& pod_name);
  Status DeleteClaims(const json::object& set, int ordinal);
  Status WriteStatus(const json::object& set, const json::object& status);
  void Record(const json::object& set, std::string_view type, std::string_view reason,
              const std::string& message);

  client::Client& client_;
  Clock& clock_;
  runtime::EventRecorder& events_;
  runtime::Informer& sets_;
  runtime::Informer& pods_;
  runtime::Informer& claims_;
  runtime::Informer& revisions_;
  runtime::ControllerHistory history_;
};

}  // namespace flotilla::member
