// How the StatefulSet controller reads a pod (stateful_set_utils.go):
// created (has a phase), terminating (deletionTimestamp), failed or
// succeeded, Running and Ready, available after minReadySeconds.
// Pure functions; thread-safe.
#pragma once

#include <string>

#include "base/clock.h"
#include "base/json.h"

namespace flotilla::member::statefulset {

std::string PhaseOf(const json::object& pod);
bool IsCreated(const json::object& pod);
bool IsTerminating(const json::object& pod);
bool IsFinished(const json::object& pod);  // Failed or Succeeded
bool IsRunningAndReady(const json::object& pod);
// Running, Ready and not terminating.
bool IsHealthy(const json::object& pod);
// How long until a ready pod has been Ready for `min_ready` (zero or less:
// available now). REQUIRES: IsRunningAndReady(pod).
Duration UntilAvailable(const json::object& pod, Duration min_ready, TimePoint now);

}  // namespace flotilla::member::statefulset
