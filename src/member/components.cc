#include "member/components.h"

#include "cronjob/cronjob_controller.h"
#include "member/daemonset/daemonset_controller.h"
#include "member/deployment/deployment_controller.h"
#include "member/disruption/disruption_controller.h"
#include "member/hpa/hpa_controller.h"
#include "member/job/job_controller.h"
#include "member/kube_version.h"
#include "member/kubelet/kubelet.h"
#include "member/nodes/nodes.h"
#include "member/quota/quota_controller.h"
#include "member/replicaset/replicaset_controller.h"
#include "member/scheduler/scheduler.h"
#include "member/services/endpoints_controller.h"
#include "member/services/endpointslice_controller.h"
#include "member/services/load_balancer.h"
#include "member/statefulset/statefulset_controller.h"
#include "member/statefulset/volume_binder.h"

// One include and one line per component; each component's library is
// listed in flotilla_member_components' DEPS (src/member/CMakeLists.txt).

namespace flotilla::member {
namespace {

// The CronJob controller the federation runs too (cronjob/).
class CronJobs : public Component {
 public:
  explicit CronJobs(ControllerContext& ctx)
      : controller_(ctx.client, ctx.clock, ctx.manager, ctx.informers) {}

 private:
  cronjob::CronJobController controller_;
};

}  // namespace

std::vector<std::unique_ptr<Component>> BuildComponents(ControllerContext& ctx,
                                                        const KubeVersion* version) {
  std::vector<std::unique_ptr<Component>> out;
  out.push_back(std::make_unique<Nodes>(ctx));
  out.push_back(std::make_unique<Scheduler>(ctx));
  out.push_back(std::make_unique<Kubelet>(ctx));
  out.push_back(std::make_unique<ReplicaSetController>(ctx));
  out.push_back(std::make_unique<DeploymentController>(ctx));
  if (version == nullptr || version->Serves(kHorizontalPodAutoscalers.ApiVersion())) {
    out.push_back(std::make_unique<hpa::HpaController>(ctx));
  }
  out.push_back(std::make_unique<StatefulSetController>(ctx));
  out.push_back(std::make_unique<DaemonSetController>(ctx));
  if (version == nullptr || version->Serves(kPodDisruptionBudgets.ApiVersion())) {
    out.push_back(std::make_unique<DisruptionController>(ctx));
  }
  out.push_back(std::make_unique<JobController>(ctx));
  out.push_back(std::make_unique<CronJobs>(ctx));
  out.push_back(std::make_unique<VolumeBinder>(ctx));
  out.push_back(std::make_unique<LoadBalancerController>(ctx));
  out.push_back(std::make_unique<EndpointsController>(ctx));
  out.push_back(std::make_unique<EndpointSliceController>(ctx));
  out.push_back(std::make_unique<QuotaController>(ctx, MemberRegistry(version)));
  return out;
}

}  // namespace flotilla::member
