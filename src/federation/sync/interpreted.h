// Custom kinds that a ResourceInterpreterCustomization explains
// (docs/interpreter.md, "In the federation"): the customizations on the
// federation, and what the sync controller does with their scripts.
//
// A kind whose customization has replicaResource and replicaRevision is
// divided like a Deployment: GetReplicas says how many replicas the object
// asks for, the planner (seed 000, an even spread by default, or the
// object's federation.kubernetes.io/replica-preferences annotation) places
// them over the admitted Ready clusters, and each cluster's copy is
// ReviseReplica(object, its count); a cluster that gets none has no copy.
// A lost cluster's share goes to the others at its next check. Retain keeps
// what a member sets in its copy on each update. With statusAggregation
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
// only the operations it defines that mean something for it: Retain for
// every one, AggregateStatus (with ReflectStatus) for Services. The
// federated workload kinds (ReplicaSets, Deployments, StatefulSets, HPAs)
// keep their strategies whole.
//
// Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/json.h"
#include "federation/common/reconciler.h"
#include "interpreter/interpreter.h"
#include "runtime/informer.h"

namespace flotilla::federation::sync {

inline const client::ResourceRef kResourceInterpreterCustomizations{
    "config.karmada.io", "v1alpha1", "resourceinterpretercustomizations", false};

class Customizations {
 public:
  // `informer` (on kResourceInterpreterCustomizations) must outlive this.
  explicit Customizations(runtime::Informer& informer) : informer_(informer) {}

  // The scripts for `kind` of `api_version`: per operation, that of the
  // first customization (by name) that targets the kind and defines it;
  // nullopt when none targets it.
  std::optional<interpreter::Customization> For(std::string_view api_version,
                                                std::string_view kind) const;

 private:
  runtime::Informer& informer_;
};

// Divides the object's replicas over check.copies (see above), setting each
// copy's desired (and remove); `desired` is the whole copy. REQUIRES: `c`
// has InterpretReplica and ReviseReplica.
Status PlanDivided(const interpreter::Customization& c, Check& check, const json::object& desired);

// `updated` (a copy about to be written) with what Retain keeps of
// `existing`; `updated` itself when the customization has no retention or
// the script fails (logged).
json::object Retained(const interpreter::Customization& c, json::object updated,
                      const json::object& existing);

// The federated object's status from its managed copies, as
// AggregateStatus makes it. REQUIRES: `c` has AggregateStatus.
StatusOr<json::object> AggregatedStatus(const interpreter::Customization& c, const Check& check);

}  // namespace flotilla::federation::sync
