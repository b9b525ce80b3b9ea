// kube-scheduler's filter plugins as far as a simulated member needs them,
// in the default profile's order (NodeUnschedulable, TaintToleration,
// NodeAffinity, NodeResourcesFit), VolumeBinding's PreFilter, and the
// FitError message it writes when a pod fits nowhere. Pure functions; thread-safe. Internal to
// src/member/scheduler.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "api/resources.h"
#include "base/json.h"

namespace flotilla::member::scheduler {

using api::Allocatable;
using api::NonZeroPodRequests;
using api::ParseQuantity;
using api::PodRequests;
using api::QuantityValue;
using api::Resources;

// Why one node does not fit a pod: the reasons of the first filter that
// rejected it (NodeResourcesFit may give several), and whether preemption
// could help (UnschedulableAndUnresolvable filters say it cannot).
struct NodeVerdict {
  std::vector<std::string> reasons;  // empty: the pod fits
  bool unresolvable = false;
  bool Fits() const { return reasons.empty(); }
};

// What is already placed on a node: the requests of its non-terminal pods.
struct NodeUsage {
  Resources requested;           // real requests, pods counted
  Resources non_zero_requested;  // NonZeroPodRequests, for scoring
};

// Runs the filters for `pod` with requests `request` on `node`. A node whose
// Ready condition is not True is treated as carrying the taint the node
// lifecycle controller would put on it (node.kubernetes.io/not-ready or
// unreachable, NoSchedule).
NodeVerdict Filter(const json::object& pod, const Resources& request, const json::object& node,
                   const NodeUsage& usage);

// The DaemonSet controller's NodeShouldRunDaemonPod for `pod`, a
// DaemonSet's pod as made for `node` (with its tolerations): it should run
// there when the node selector and required node affinity match and it
// tolerates the node's NoSchedule and NoExecute taints (a node that is not
// Ready counting as tainted, as in Filter); a pod already there should
// continue when they match and it tolerates the NoExecute ones. Resources are the
// scheduler's business, as in Kubernetes.
struct DaemonPlacement {
  bool should_run = false;
  bool should_continue = false;
};
DaemonPlacement PlaceDaemonPod(const json::object& pod, const json::object& node);

// The NodeResourcesFit (least allocated) plus NodeResourcesBalancedAllocation
// score, 0..200, for a node that fits.
int64_t Score(const Resources& non_zero_request, const json::object& node, const NodeUsage& usage);

// FitError.Error() with the default preemption's post-filter message, e.g.
// "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are
// available: 3 No preemption victims found for incoming pod.."; with no
// nodes, "no nodes available to schedule pods".
// With `pre_filter` (a PreFilter's refusal, e.g. ClaimsPreFilter's), that
// message stands for the nodes' reasons: "0/3 nodes are available:
// persistentvolumeclaim \"data\" not found. preemption: 0/3 nodes are
// available: 3 Preemption is not helpful for scheduling..".
std::string FitErrorMessage(const json::object& pod, const std::vector<NodeVerdict>& verdicts,
                            const std::string& pre_filter = "");

// An object by name (of the pod's namespace for claims, as a cache shares
// it); null when none.
using Lookup = std::function<std::shared_ptr<const json::object>(const std::string& name)>;

// The VolumeBinding plugin's PreFilter: "" when the pod's claims let it be
// scheduled; else why not: a claim not found ("persistentvolumeclaim
// \"data\" not found") or being deleted, a class not found, or a claim not
// yet bound whose class binds at once (Immediate, or no class: "pod has
// unbound immediate PersistentVolumeClaims"). A WaitForFirstConsumer claim
// is bound once the pod is scheduled (statefulset/volume_binder.h).
std::string ClaimsPreFilter(const json::object& pod, const Lookup& claims,
                            const Lookup& storage_classes);

// How many feasible nodes a search looks for before it scores them:
// kube-scheduler's numFeasibleNodesToFind with percentageOfNodesToScore
// left unset. Every node of a cluster under 100; else 50% of them less 1%
// per 125 nodes, at least 5%, and at least 100 nodes.
size_t FeasibleNodesToFind(size_t all);

}  // namespace flotilla::member::scheduler
