// Node ports of Services, as kube-apiserver's portallocator and the Service
// strategy handle them: a NodePort or LoadBalancer service (the latter
// unless spec.allocateLoadBalancerNodePorts is false) gets a free port of
// 30000-32767 for every port that names none; an update that leaves a
// port's nodePort out keeps the one it had; a service that stops needing
// node ports loses the ones it did not ask for again (dropTypeDependentFields).
#pragma once

#include <cstdint>
#include <string>

#include "base/json.h"
#include "storage/store.h"

namespace flotilla::apiserver {

inline constexpr int64_t kNodePortMin = 30000;
inline constexpr int64_t kNodePortMax = 32767;

// Fills in spec.ports[].nodePort where `service` needs one. `current` is
// the stored object on update (nullptr on create); `services_prefix` is the
// store prefix of all services, whose node ports are taken; `seed` picks
// where the search for a free port starts.
void AllocateNodePorts(storage::Store& store, const std::string& services_prefix,
                       const json::object* current, json::object& service, uint64_t seed);

}  // namespace flotilla::apiserver
