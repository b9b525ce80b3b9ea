#include "member/components.h"

#include "member/hpa/hpa_controller.h"
#include "member/deployment/deployment_controller.h"
#include "member/replicaset/replicaset_controller.h"

// One include and one line per component; each component's library is
// listed in flotilla_member_components' DEPS (src/member/CMakeLists.txt).

namespace flotilla::member {

std::vector<std::unique_ptr<Component>> BuildComponents(ControllerContext& ctx) {
  std::vector<std::unique_ptr<Component>> out;
  out.push_back(std::make_unique<ReplicaSetController>(ctx));
  out.push_back(std::make_unique<DeploymentController>(ctx));
  out.push_back(std::make_unique<hpa::HpaController>(ctx));
  return out;
}

}  // namespace flotilla::member
