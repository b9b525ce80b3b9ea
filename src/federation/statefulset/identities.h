// A federated StatefulSet's identities across clusters (seed 002, "Instance
// identity and discovery"): its local StatefulSet in cluster c is named
// <name>-<c>, so its pods are <name>-<c>-<ordinal>, unique across the
// federation; with federation.kubernetes.io/statefulset-lb-needed each pod
// gets a Service of type LoadBalancer of its own name, in its cluster only.
//
// Pure: no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/json.h"
#include "planner/planner.h"

namespace flotilla::federation::statefulset {

// The label on a pod's LoadBalancer Service naming its StatefulSet.
inline constexpr char kStatefulSetLabel[] = "federation.kubernetes.io/statefulset";
// The label Kubernetes gives every StatefulSet pod, with the pod's name.
inline constexpr char kPodNameLabel[] = "statefulset.kubernetes.io/pod-name";

// "<name>-<cluster>".
std::string LocalName(const std::string& name, const std::string& cluster);

struct StatefulPod {
  std::string name;
  std::string cluster;
};

// The pods `shares` (cluster -> replicas) give StatefulSet `name`, by
// cluster and ordinal.
std::vector<StatefulPod> Pods(const std::string& name, const planner::ReplicaCounts& shares);

// The value of federation.kubernetes.io/stateful-replica-list: the pods'
// names, ", "-separated.
std::string ReplicaList(const std::vector<StatefulPod>& pods);

// The federation's Service for `pod` of StatefulSet `sts`: type
// LoadBalancer, the governing Service's ports, a selector on the pod's
// name label, placed in the pod's cluster (federation.kubernetes.io/cluster),
// labelled with the StatefulSet and controlled by it.
json::object LoadBalancerService(const json::object& sts, const StatefulPod& pod,
                                 const json::array& ports);
// `existing` differs from `desired` in what the controller sets.
bool ServiceNeedsUpdate(const json::object& existing, const json::object& desired);

// The mid-update test on a local StatefulSet: not observed yet, pods on two
// revisions, or not every replica ready.
bool MidUpdate(const json::object& local);

}  // namespace flotilla::federation::statefulset
