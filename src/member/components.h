// The controllers every simulated member runs, built in order on one
// ControllerContext before its manager starts.
#pragma once

#include <memory>
#include <vector>

#include "member/context.h"
#include "member/kube_version.h"

namespace flotilla::member {

// `version` (null: today's) leaves out the components whose API it does not
// serve (kube_version.h).
std::vector<std::unique_ptr<Component>> BuildComponents(ControllerContext& ctx,
                                                        const KubeVersion* version = nullptr);

}  // namespace flotilla::member
