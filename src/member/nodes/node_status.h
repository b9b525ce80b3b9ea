// What a simulated node looks like to the API: the Node a kubelet would
// register (labels, capacity, allocatable, conditions, nodeInfo, addresses)
// and the heartbeat patches it sends afterwards. Pure functions;
// thread-safe. Internal to src/member/nodes.
#pragma once

#include <string>

#include "base/clock.h"
#include "base/json.h"
#include "member/context.h"

namespace flotilla::member::nodes {

inline constexpr std::string_view kKubeletVersion = "v1.32.0";
inline constexpr std::string_view kInstanceType = "flotilla-simulated";

// "<cluster_name>-node-<index>".
std::string NodeName(const SimulationOptions& options, int index);

// The Node object (no status: the API drops it on create) for node
// `index` of the member, with its labels: kubernetes.io/hostname, os, arch,
// instance type, zone (round-robin over options.zones) and region when set.
json::object NewNode(const SimulationOptions& options, int index);

// The labels a kubelet puts on every node it registers that `node` lacks,
// as a merge patch of metadata.labels; empty when none are missing.
json::object MissingLabels(const json::object& node);

// True when `node` lacks what a registered kubelet reports (a Ready
// condition, nodeInfo, addresses, capacity or allocatable).
bool NeedsRegistration(const json::object& node);

// A strategic merge patch of the status subresource that fills in what
// NeedsRegistration found missing: the capacity and allocatable entries
// (cpu, memory, pods, ephemeral-storage, hugepages) that are absent, from
// `options` (what someone set stays), the four kubelet
// conditions, nodeInfo, addresses (InternalIP `ip`, Hostname) and
// daemonEndpoints.
json::object RegistrationPatch(const json::object& node, const SimulationOptions& options,
                               const std::string& ip, TimePoint now);

// A strategic merge patch renewing lastHeartbeatTime of the four kubelet
// conditions (merged by type; nothing else is touched).
json::object HeartbeatPatch(const json::object& node, TimePoint now);

// lastHeartbeatTime of the Ready condition; nullopt when absent.
std::optional<TimePoint> LastHeartbeat(const json::object& node);

}  // namespace flotilla::member::nodes
