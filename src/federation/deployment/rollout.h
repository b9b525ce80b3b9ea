// How a federated Deployment's pod template reaches the member clusters
// (seed 001, "Implementation"), on the shared rollout rules
// (common/rollout.h): RollingUpdate goes one cluster at a time, Recreate
// to every cluster at once, and spec.paused holds every cluster's
// template. A cluster is mid-update when its local Deployment has
//   status.updatedReplicas != status.replicas, or
//   status.unavailableReplicas != 0 (not in a cluster full for the
//     workload, whose waiting pods would otherwise hold every rollout), or
//   status.observedGeneration != metadata.generation
// (the seed's test), and its rollout failed when its Progressing condition
// says ProgressDeadlineExceeded.
//
// Pure: no I/O, no clock.
#pragma once

#include <span>
#include <string>

#include "base/json.h"
#include "federation/common/rollout.h"

namespace flotilla::federation::deployment {

struct LocalDeployment {
  std::string cluster;
  // The managed local Deployment (not being deleted); null when there is
  // none yet.
  const json::object* local = nullptr;
  // The placer found the cluster full for this workload: the pods it keeps
  // waiting there (the probes) are no rollout in progress.
  bool full = false;
  // The federation's template as this cluster gets it (override policies
  // applied); null: the federation's template as it is.
  const json::object* tmpl = nullptr;
};

// spec.paused is true.
bool Paused(const json::object& deployment);
// The seed's mid-update test on a local Deployment. In a cluster that is
// full for the workload, unavailable replicas (the pods that wait for room)
// do not count: the other two tests still catch a rollout in progress.
bool MidUpdate(const json::object& local, bool full = false);
// Its Progressing condition says ProgressDeadlineExceeded.
bool TimedOut(const json::object& local);

RolloutPlan PlanDeploymentRollout(const json::object& federated,
                                  std::span<const LocalDeployment> clusters);

}  // namespace flotilla::federation::deployment
