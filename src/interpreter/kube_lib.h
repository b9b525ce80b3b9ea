// The `kube` library the resource interpreter's scripts `require`
// (docs/interpreter.md), as Karmada provides it:
//   kube.accuratePodRequirements(podTemplate) -> {nodeClaim = {nodeSelector,
//       tolerations, hardNodeAffinity}, resourceRequest = {cpu, memory,
//       ["ephemeral-storage"]}}, each part only when the template has it; nil
//       when it has neither;
//   kube.getPodDependencies(podTemplate, namespace) -> the ConfigMaps,
//       Secrets, ServiceAccount (not "default") and PersistentVolumeClaims
//       the pod template uses, as {apiVersion, kind, namespace, name};
//   kube.resourceAdd(q1, q2, ...) -> the sum of the quantities, as a string;
//   kube.getResourceQuantity(q) -> the quantity as a number.
// Also the conversions between JSON values and Lua values (lua_vm.h).
#pragma once

#include "base/json.h"

struct lua_State;

namespace flotilla::interpreter {

enum class EmptyAs;

// Pushes the kube library's table.
void OpenKube(lua_State* L);
// Pushes `v` as a Lua value.
void PushJson(lua_State* L, const json::value& v);
// The Lua value at `idx` as JSON (no references: an empty table inside is
// dropped, an empty table at the top is `empty`).
json::value ToJson(lua_State* L, int idx, EmptyAs empty);

}  // namespace flotilla::interpreter
