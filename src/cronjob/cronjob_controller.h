// The CronJob controller, as kube-controller-manager's (cronjob_controllerv2),
// on whatever API server it is given: a simulated member runs it on its own
// Jobs, and the federation runs it on its own (docs/federation.md,
// "Federated CronJobs"): each run is then one federated Job, divided over
// the members, so a schedule runs once across the federation.
//
// For each CronJob not suspended, on its clock:
// - the most recent schedule time due since status.lastScheduleTime (or its
//   creation), in spec.timeZone (UTC when unset); none due: it waits for the
//   next. With startingDeadlineSeconds a time older than that is missed
//   (Warning MissSchedule); more than 100 missed times are reported
//   (Warning TooManyMissedTimes) and the latest is run;
// - concurrencyPolicy: Allow runs beside the active Jobs; Forbid waits until
//   none is active (Normal JobAlreadyActive; the run starts late, unless its
//   deadline passes); Replace deletes the active ones first;
// - a run is a Job named <cronjob>-<scheduled time in minutes since the
//   epoch>, from spec.jobTemplate (labels, annotations, spec), owned by the
//   CronJob, annotated batch.kubernetes.io/cronjob-scheduled-timestamp;
// - status.active lists the running Jobs, lastScheduleTime the last run's
//   time, lastSuccessfulTime the last completed Job's completion;
// - finished Jobs beyond successfulJobsHistoryLimit / failedJobsHistoryLimit
//   are deleted, oldest first (with their pods).
// Events: SuccessfulCreate, FailedCreate, SawCompletedJob, SuccessfulDelete,
// JobAlreadyActive, MissSchedule, TooManyMissedTimes, UnknownTimeZone,
// UnparseableSchedule.
// Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "base/clock.h"
#include "client/client.h"
#include "runtime/controller_manager.h"
#include "runtime/event_recorder.h"
#include "runtime/shared_informers.h"

namespace flotilla::cronjob {

struct CronJobControllerOptions {
  std::string name = "cronjob-controller";  // the controller's and the events' source
  int workers = 2;
};

class CronJobController {
 public:
  // Registers the controller and its informers' handlers with `manager`;
  // everything given must outlive it.
  CronJobController(client::Client& client, Clock& clock, runtime::ControllerManager& manager,
                    runtime::SharedInformers& informers, CronJobControllerOptions options = {});

 private:
  StatusOr<runtime::Result> Reconcile(const std::string& key);
  std::string OwnerKey(const json::object& job) const;

  client::Client& client_;
  Clock& clock_;
  const CronJobControllerOptions options_;
  runtime::EventRecorder events_;
  runtime::Informer& cronjobs_;
  runtime::Informer& jobs_;
  runtime::Controller* controller_ = nullptr;
};

}  // namespace flotilla::cronjob
