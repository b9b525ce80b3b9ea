// The resource interpreter (docs/interpreter.md): Karmada's
// ResourceInterpreterCustomization objects (config.karmada.io/v1alpha1),
// unchanged, run on the sandboxed Lua of lua_vm.h. A customization names
// its target kind (spec.target.apiVersion, kind) and holds up to seven Lua
// scripts under spec.customizations, each defining one function:
//
//   operation            customization field        Lua function
//   InterpretReplica     replicaResource            GetReplicas(obj) -> replicas, requires
//   ReviseReplica        replicaRevision            ReviseReplica(obj, replicas) -> obj
//   Retain               retention                  Retain(desired, observed) -> obj
//   AggregateStatus      statusAggregation          AggregateStatus(desired, items) -> obj
//   InterpretStatus      statusReflection           ReflectStatus(observed) -> status
//   InterpretHealth      healthInterpretation       InterpretHealth(observed) -> bool
//   InterpretDependency  dependencyInterpretation   GetDependencies(desired) -> refs
//
// Pure functions; thread-safe.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "interpreter/lua_vm.h"

namespace flotilla::interpreter {

enum class Operation {
  kInterpretReplica,
  kReviseReplica,
  kRetain,
  kAggregateStatus,
  kInterpretStatus,
  kInterpretHealth,
  kInterpretDependency,
};
inline constexpr std::array<Operation, 7> kOperations = {
    Operation::kInterpretReplica,   Operation::kReviseReplica,   Operation::kRetain,
    Operation::kAggregateStatus,    Operation::kInterpretStatus, Operation::kInterpretHealth,
    Operation::kInterpretDependency};

std::string_view OperationName(Operation op);       // "InterpretReplica"
std::string_view CustomizationField(Operation op);  // "replicaResource"
std::string_view LuaFunction(Operation op);         // "GetReplicas"
// Karmada's names, as karmadactl takes them in either case
// ("interpretReplica", "InterpretReplica"); nullopt for another.
std::optional<Operation> ParseOperation(std::string_view name);

struct Customization {
  std::string name;
  std::string api_version;  // of the target kind
  std::string kind;
  std::array<std::string, kOperations.size()> scripts;  // by Operation; "" when not customized

  const std::string& Script(Operation op) const { return scripts[static_cast<size_t>(op)]; }
  bool Has(Operation op) const { return !Script(op).empty(); }
};

// Reads a ResourceInterpreterCustomization. Invalid naming the field
// when it is not one.
StatusOr<Customization> Read(const json::object& obj);
// The causes of an invalid customization: fields (spec.target.apiVersion,
// kind; a script that does not compile, fails at its top level or does not
// define its function, by its path: spec.customizations.retention.luaScript).
std::vector<StatusCause> Validate(const json::object& obj, Limits limits = {});

struct Replicas {
  int64_t replicas = 0;
  std::optional<json::object> requirements;  // ReplicaRequirements; nullopt: nil
};

// The operations. Each is Invalid when the customization lacks the
// script, the script fails or returns what the operation cannot use.
StatusOr<Replicas> GetReplicas(const Customization& c, const json::object& obj, Limits limits = {});
StatusOr<json::object> ReviseReplica(const Customization& c, const json::object& obj,
                                     int64_t replicas, Limits limits = {});
StatusOr<json::object> Retain(const Customization& c, const json::object& desired,
                              const json::object& observed, Limits limits = {});
// `items` are AggregatedStatusItems: {clusterName, status, applied, health}.
StatusOr<json::object> AggregateStatus(const Customization& c, const json::object& desired,
                                       const json::array& items, Limits limits = {});
StatusOr<json::value> ReflectStatus(const Customization& c, const json::object& observed,
                                    Limits limits = {});
StatusOr<bool> InterpretHealth(const Customization& c, const json::object& observed,
                               Limits limits = {});
// DependentObjectReferences: {apiVersion, kind, namespace, name | labelSelector}.
StatusOr<json::array> GetDependencies(const Customization& c, const json::object& desired,
                                      Limits limits = {});

// What `flotilla interpret --operation` prints: the named results of one
// operation, in order (Karmada's: replica and requires; revised; retained;
// aggregatedStatus; status; healthy; dependencies). The object operations
// take `observed` when given, else `desired`, as karmadactl does.
struct Inputs {
  std::optional<json::object> desired, observed;
  json::array status_items;
  int64_t desired_replica = 0;
};
StatusOr<std::vector<std::pair<std::string, json::value>>> Execute(const Customization& c,
                                                                   Operation op, const Inputs& in,
                                                                   Limits limits = {});

}  // namespace flotilla::interpreter
