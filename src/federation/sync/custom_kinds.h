// Custom kinds federated (docs/crds.md, "Federated"): each kind a
// CustomResourceDefinition on the federation serves is propagated whole by
// the sync controller (kinds.h, WholeKind) from the moment the definition is
// Established: its objects go to the clusters their placement selects, with
// everything but their status, and each copy's status comes back in the
// annotation federation.kubernetes.io/status-by-cluster.
//
// The definition itself is a plain kind of the sync controller: it reaches
// every member its own placement selects first. A kind that a
// ResourceInterpreterCustomization on the federation targets is divided and
// its status aggregated by its scripts instead (interpreted.h); a change of
// a customization re-checks every custom kind's objects. A member's informer on the
// kind, which found it not served, lists again as soon as that member's
// copy of the definition is Established, so the objects follow at once.
//
// The version federated is the storage version when it is served, else
// the first served one. A definition that federates another version, scope
// or status subresource than before (a new storage version) gets a new
// reconciler; a definition deleted takes its reconciler and its member
// informers along (its objects went before it did).
//
// Controller "custom-kinds", one worker. Thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "federation/common/context.h"
#include "federation/sync/interpreted.h"
#include "federation/sync/sync_controller.h"
#include "runtime/controller_manager.h"

namespace flotilla::federation::sync {

class CustomKinds {
 public:
  // `ctx` and `sync` must outlive this.
  CustomKinds(FederationContext& ctx, SyncController& sync);
  CustomKinds(const CustomKinds&) = delete;
  CustomKinds& operator=(const CustomKinds&) = delete;

 private:
  StatusOr<runtime::Result> Reconcile(const std::string& name);
  // What a member's copy of a definition being Established does.
  runtime::EventHandler MemberHandler(const std::string& cluster);

  FederationContext& ctx_;
  SyncController& sync_;
  runtime::Informer& crds_;
  // The kinds federated, by the name of their definition; only the one
  // worker touches it.
  std::map<std::string, SyncKind> federated_;
};

// The kind `crd` (a CustomResourceDefinition) serves, to federate whole;
// nullopt while it is not Established or serves no version.
std::optional<SyncKind> KindOf(const json::object& crd);

}  // namespace flotilla::federation::sync
