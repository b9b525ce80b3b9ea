// The controllers every simulated member runs, built in order on one
// ControllerContext before its manager starts.
#pragma once

#include <memory>
#include <vector>

#include "member/context.h"

namespace flotilla::member {

std::vector<std::unique_ptr<Component>> BuildComponents(ControllerContext& ctx);

}  // namespace flotilla::member
