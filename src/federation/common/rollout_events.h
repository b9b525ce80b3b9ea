// The Events of a rollout that goes cluster by cluster (rollout.h), for
// every kind that rolls templates out: RolloutStarted when a check gave a
// cluster the federation's template ("Rolling out revision 2 to cluster
// b"), RolloutCompleted when a cluster that was updating completed,
// RolloutFailed (Warning) when one failed. What the last check of an object
// reported per cluster is remembered; after a restart it is read from the
// object's breakdown annotation ({"clusters": {"b": {"rollout":
// "updating"}}}), so a restart neither repeats nor loses a completion.
//
// Thread-safe.
#pragma once

#include <map>
#include <string>

#include "base/mutex.h"
#include "federation/common/reconciler.h"
#include "federation/common/rollout.h"
#include "runtime/event_recorder.h"

namespace flotilla::federation {

class RolloutReporter {
 public:
  // `events` must outlive the reporter.
  RolloutReporter(runtime::EventRecorder& events, std::string breakdown_annotation)
      : events_(events), breakdown_annotation_(std::move(breakdown_annotation)) {}

  // The events of `check`, whose plan is `plan` (states and new_template per
  // copy) for the template of `revision`.
  void Report(const Check& check, const RolloutPlan& plan, const std::string& revision);
  void Forget(const std::string& key);

 private:
  runtime::EventRecorder& events_;
  const std::string breakdown_annotation_;
  Mutex mu_;
  // object key -> cluster -> the rollout state its last check reported
  std::map<std::string, std::map<std::string, std::string>> reported_ GUARDED_BY(mu_);
};

// The rollout state of `cluster` in a breakdown annotation's text; "" when
// it has none.
std::string PreviousRollout(const std::string& breakdown, const std::string& cluster);

}  // namespace flotilla::federation
