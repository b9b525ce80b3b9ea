// Reading pods as kube-controller-manager does (k8s.io/kubernetes/pkg/api/v1/pod
// and pkg/controller's ActivePods ordering): whether a pod is active, ready
// or available, and which pods a controller deletes first. Pure functions,
// thread-safe.
#pragma once

#include <optional>
#include <vector>

#include "base/clock.h"
#include "base/json.h"
#include "runtime/cache.h"

namespace flotilla::member {

// Neither Succeeded nor Failed, and not being deleted (FilterActivePods).
bool IsPodActive(const json::object& pod);
// The pod's Ready condition is True.
bool IsPodReady(const json::object& pod);
// When the Ready condition last turned True; nullopt when the pod is not
// ready or the time is missing.
std::optional<TimePoint> ReadySince(const json::object& pod);
// Ready, and ready for longer than `min_ready_seconds` at `now`
// (podutil.IsPodAvailable: 0 means available once ready).
bool IsPodAvailable(const json::object& pod, int64_t min_ready_seconds, TimePoint now);
// When a ready pod becomes available: the first second at which
// IsPodAvailable turns true; nullopt when the pod is not ready.
std::optional<TimePoint> AvailableAt(const json::object& pod, int64_t min_ready_seconds);

// Orders `pods` so that the ones to delete first come first, as Kubernetes'
// ActivePods ranking does: unscheduled before scheduled; Pending before
// Unknown before Running; not ready before ready; lower
// controller.kubernetes.io/pod-deletion-cost first; ready more recently
// before ready longer; more container restarts first; newer before older.
// (The ranking by pods doubled up on one node is not done.)
void SortForDeletion(std::vector<runtime::ObjectPtr>& pods);

}  // namespace flotilla::member
