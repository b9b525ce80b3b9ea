// How a federated Deployment's pod template reaches the member clusters
// (seed 001, "Implementation"): which clusters get the federation's
// template in this check, and where each cluster's rollout stands.
//
// RollingUpdate: one cluster at a time. Clusters are taken in the order
// of the annotation federation.kubernetes.io/cluster-update-order (names,
// comma-separated; names of clusters not present are skipped), then the
// rest alphabetically. A cluster whose local Deployment runs another
// template gets the new one only when no other cluster is mid-update, where
// mid-update means, for its local Deployment:
//   status.updatedReplicas != status.replicas, or
//   status.unavailableReplicas != 0 (not in a cluster full for the
//     workload, whose waiting pods would otherwise hold every rollout), or
//   status.observedGeneration != metadata.generation.
// A cluster mid-update on an older template (the federated template changed
// during its rollout) is the one cluster in progress: it gets the newest
// template at once. A rollout that failed in a cluster (its Progressing
// condition says ProgressDeadlineExceeded) keeps that cluster mid-update,
// so no further cluster is updated until the template changes again.
// Recreate: every cluster gets the template at once. spec.paused: no
// cluster's template changes. A cluster without a local Deployment gets the
// template with its first copy (and counts as complete until it has one).
//
// Pure: no I/O, no clock.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/json.h"

namespace flotilla::federation::deployment {

enum class ClusterRollout {
  kComplete,  // on the federation's template, not mid-update
  kUpdating,  // on the federation's template (or given it now), mid-update
  kFailed,    // on the federation's template, past its progress deadline
  kWaiting,   // on another template, waiting for its turn
  kPaused,    // on another template while the Deployment is paused
};

const char* Name(ClusterRollout r);

struct LocalDeployment {
  std::string cluster;
  // The managed local Deployment (not being deleted); null when there is
  // none yet.
  const json::object* local = nullptr;
  // The placer found the cluster full for this workload: the pods it keeps
  // waiting there (the probes) are no rollout in progress.
  bool full = false;
};

struct RolloutPlan {
  // Per cluster, in the order given: whether its local Deployment gets the
  // federation's template now (or has it already).
  std::vector<bool> new_template;
  std::vector<ClusterRollout> states;
};

// spec.template of a Deployment or ReplicaSet; null when absent.
const json::object* TemplateOf(const json::object& obj);
// spec.paused is true.
bool Paused(const json::object& deployment);
// The seed's mid-update test on a local Deployment. In a cluster that is
// full for the workload, unavailable replicas (the pods that wait for room)
// do not count: the other two tests still catch a rollout in progress.
bool MidUpdate(const json::object& local, bool full = false);
// Its Progressing condition says ProgressDeadlineExceeded.
bool TimedOut(const json::object& local);
// `local` runs the pod template `tmpl` (ignoring the pod-template-hash
// label; null, empty objects and empty arrays count as absent).
bool RunsTemplate(const json::object& local, const json::object& tmpl);

// The clusters in update order: those the annotation names, in its order,
// then the rest alphabetically.
std::vector<std::string> UpdateOrder(const json::object& federated,
                                     std::vector<std::string> clusters);

RolloutPlan PlanRollout(const json::object& federated, std::span<const LocalDeployment> clusters);

}  // namespace flotilla::federation::deployment
