// Shadow federated ReplicaSets (seed 001): for each pod template a
// federated Deployment has had, a ReplicaSet on the federation named
// <deployment>-<pod-template-hash> (the hash the members' Deployment
// controllers give their local ReplicaSets of that template), controlled by
// the Deployment, labelled with the template's labels, pod-template-hash
// and federation.kubernetes.io/shadow-of=<deployment>, annotated
// federation.kubernetes.io/shadow-replicaset: "true" and with the
// deployment.kubernetes.io annotations Kubernetes gives a Deployment's
// ReplicaSets (revision, revision-history, desired-replicas,
// max-replicas) plus the Deployment's own annotations, as Kubernetes copies
// them. Its spec.replicas and status are the sums of the members' local
// ReplicaSets of the same name. So `kubectl rollout history` and `undo`,
// `get rs` and `describe deploy` read them as they read a Deployment's
// ReplicaSets on one cluster.
//
// Pure: no I/O.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/json.h"
#include "runtime/cache.h"

namespace flotilla::federation::deployment {

// A shadow's counts: the members' local ReplicaSets of its name, summed.
struct ShadowCounts {
  int64_t spec_replicas = 0;
  int64_t replicas = 0;
  int64_t fully_labeled = 0;
  int64_t ready = 0;
  int64_t available = 0;
  void Add(const json::object& local_rs);
};

// The shadows of Deployment `d` among federation ReplicaSets: those in its
// namespace that `d` controls, and those labelled shadow-of=<its name> with
// the shadow annotation that nothing controls (an orphaning delete of `d`
// stripped the reference).
std::vector<runtime::ObjectPtr> ShadowsOf(const json::object& d,
                                          std::span<const runtime::ObjectPtr> replicasets);

// The shadow of d's current template (the oldest that runs it); null when
// there is none.
runtime::ObjectPtr CurrentShadow(const json::object& d,
                                 std::span<const runtime::ObjectPtr> shadows);

// <name>-<hash of d's template with d's status.collisionCount>.
std::string NewShadowName(const json::object& d);

// deployment.kubernetes.io/revision of each shadow, the highest.
int64_t MaxRevision(std::span<const runtime::ObjectPtr> shadows);
// The revision d's current template has (or gets): its shadow's when that is
// the highest, else one more than the highest of the others.
std::string CurrentRevision(const json::object& d, std::span<const runtime::ObjectPtr> shadows);

// The shadow of d's current template: `existing` (null to create it) with
// what the controller owns restored, the revision `revision` (moving an old
// one into revision-history, as Kubernetes does for a rollback) and
// `counts` as spec.replicas.
json::object DesiredCurrentShadow(const json::object& d, const json::object* existing,
                                  const std::string& revision, const ShadowCounts& counts);
// An old shadow: its template, selector and annotations stay; its owner,
// labels, shadow annotation and spec.replicas are restored.
json::object DesiredOldShadow(const json::object& d, const json::object& existing,
                              const ShadowCounts& counts);
// `existing` differs from `desired` in what the controller sets (labels,
// annotations, owner references, spec).
bool ShadowNeedsUpdate(const json::object& existing, const json::object& desired);
// The status a shadow with `counts` shows.
json::object ShadowStatus(const json::object& shadow, const ShadowCounts& counts);

// Old shadows beyond d's spec.revisionHistoryLimit (default 10) that hold
// no replicas, oldest revision first: to delete (Kubernetes'
// cleanupDeployment). `old` excludes the current shadow.
std::vector<runtime::ObjectPtr> ShadowsBeyondHistory(const json::object& d,
                                                     std::span<const runtime::ObjectPtr> old);

}  // namespace flotilla::federation::deployment
