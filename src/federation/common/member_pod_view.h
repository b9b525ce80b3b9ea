// What the federation keeps of a member cluster's pod (its informers'
// runtime::Transform, set by FederationContext). A member pod as the kubelet
// writes it is ~2 KiB of JSON and ~8 KiB parsed; the federation reads a
// quarter of it, and it caches every pod of every member.
//
// Kept, with who reads it:
// - metadata name, namespace, uid, resourceVersion: the informer and its
//   keys; labels: workload and application selectors, IsManaged;
//   ownerReferences: PodsOf and the controllers' owner lookups;
//   deletionTimestamp: pods being deleted hold nothing.
// - spec.nodeName, and of each (init) container its name, resources and
//   restartPolicy, and spec.overhead: api::PodHoldsNode and
//   api::PodRequests (capacity, the cluster's resource summary).
// - status.phase (api::PodHoldsNode) and the PodScheduled condition (the
//   placer's unschedulable pods).
// A new reader of a member pod's field adds the field here. (Pods are not a
// propagated kind: a reconciler comparing copies would need whole pods.)
//
// Pure; thread-safe.
#pragma once

#include "base/json.h"

namespace flotilla::federation {

// Idempotent: the view of a view is itself.
json::object MemberPodView(const json::object& pod);

}  // namespace flotilla::federation
