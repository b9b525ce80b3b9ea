// Custom kinds that a ResourceInterpreterCustomization explains
// (docs/interpreter.md, "In the federation"): what the sync controller does
// with their scripts (the customizations themselves, Retain and
// GetDependencies are every reconciler's: common/customizations.h).
//
// A kind whose customization has replicaResource and replicaRevision is
// divided like a Deployment: GetReplicas says how many replicas the object
// asks for, the planner (seed 000, an even spread by default, or the
// object's federation.kubernetes.io/replica-preferences annotation) places
// them over the admitted Ready clusters, and each cluster's copy is
// ReviseReplica(object, its count); a cluster that gets none has no copy.
// A lost cluster's share goes to the others at its next check. A cluster
// with resource figures (its Cluster's status.resourceSummary) takes at
// most what it has room for: its free cpu, memory and pods divided by what
// one replica requests (GetReplicas' resourceRequest), plus the pods the
// copy there owns on nodes (they are in the allocated figures; pods of
// pods' owners the copy owns are not counted); replicas that fit nowhere are not placed (a Warning
// event NotEnoughRoom, and a check again after a minute). With statusAggregation
// (and a status subresource), the object's status is AggregateStatus of the
// copies' statuses (ReflectStatus of each when given, their status
// otherwise), with InterpretHealth's verdict per cluster.
//
// A script that fails leaves the object and its copies as they are: the
// check fails (retried with backoff) and the object gets a Warning event
// InterpreterFailed naming the operation and Lua's message.
//
// Built-in kinds of the sync controller keep their own behaviour; a
// customization that targets one (v1 ConfigMap, v1 Service, ...) overrides
// only the operations it defines that mean something for it: besides
// Retain and GetDependencies (every kind's), AggregateStatus (with
// ReflectStatus) for Services.
//
// Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/json.h"
#include "federation/common/reconciler.h"
#include "interpreter/interpreter.h"

namespace flotilla::federation::sync {

// Divides the object's replicas over check.copies (see above), setting each
// copy's desired (and remove); `desired` is the whole copy. Returns how many
// replicas had no room. REQUIRES: `c` has InterpretReplica and
// ReviseReplica.
StatusOr<int64_t> PlanDivided(const interpreter::Customization& c, MemberInformers& members,
                              Check& check, const json::object& desired);

// The federated object's status from its managed copies, as
// AggregateStatus makes it. REQUIRES: `c` has AggregateStatus.
StatusOr<json::object> AggregatedStatus(const interpreter::Customization& c, const Check& check);

}  // namespace flotilla::federation::sync
