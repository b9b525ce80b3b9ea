// What the federation keeps of a member cluster's pods and nodes (its
// informers' runtime::Transforms, set by FederationContext): it caches every
// pod and node of every member, and reads a small part of each.
//
// Pods. A member pod as the kubelet
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
// Nodes. A node as a kubelet registers it is ~2 KiB of JSON and ~10 KiB
// parsed, most of it conditions with their times, nodeInfo, images and
// addresses; a member may have thousands. Kept, with who reads it:
// - metadata name, uid, resourceVersion: the informer; labels: the
//   cluster's zones and region (TopologyOfNodes), IsManaged;
//   deletionTimestamp.
// - spec.unschedulable and spec.taints; status.allocatable and capacity
//   (api::Allocatable: the cluster's resource summary, an application's
//   room); of status.conditions only each one's type and status
//   (api::NodeSchedulable reads Ready), so a heartbeat, which changes only
//   the conditions' times, leaves the view as it was.
// A new reader of a member node's field adds the field here.
//
// Pure; thread-safe.
#pragma once

#include "base/json.h"

namespace flotilla::federation {

// Idempotent: the view of a view is itself.
json::object MemberPodView(const json::object& pod);
json::object MemberNodeView(const json::object& node);

}  // namespace flotilla::federation
