// Federated CronJobs (docs/federation.md, "Federated CronJobs"): the
// federation runs the schedule itself, with the CronJob controller a member
// runs (cronjob/cronjob_controller.h), on the federation's own API. Each run
// is one federated Job, divided over the members by the Job controller, so
// a schedule runs once across the federation, not once per cluster, and
// keeps its time when a member is lost. CronJobs are not propagated.
#include "cronjob/cronjob_controller.h"
#include "federation/common/context.h"
#include "federation/common/federated_kind.h"

namespace flotilla::federation {

void RegisterCronJob(KindRegistry& kinds) {
  kinds.Add({.controller = "cronjob",
             .help = "federated CronJobs: the federation runs the schedule, each run one "
                     "federated Job divided over the members",
             .kind = "CronJob",
             .build = [](const KindEnv& env) {
               return std::make_shared<cronjob::CronJobController>(
                   env.ctx.fed(), env.ctx.clock(), env.ctx.manager(), env.ctx.informers(),
                   cronjob::CronJobControllerOptions{.name = "cronjob"});
             }});
}

}  // namespace flotilla::federation
