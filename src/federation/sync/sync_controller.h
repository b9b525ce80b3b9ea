// The sync controller: propagates the federation's Namespaces, ConfigMaps,
// Secrets and Services to the member clusters (docs/federation.md,
// "Propagation"), one reconciler per kind (common/reconciler.h) with the
// strategy below.
//
// For every federated object that Propagates() (kinds.h), in every Ready
// cluster whose informers have synced:
// - the cluster selector admits the cluster: the copy is created when
//   missing and rewritten when a propagated field differs (so a copy
//   edited or deleted by hand is restored, and a cluster that joins or
//   comes back gets what it lacks);
// - it does not: a managed copy there is deleted, unless an object that
//   depends on it (GetDependencies of its customization) has its copy in
//   that cluster (dependencies.h).
// A member object without the managed-by label is never written: a Warning
// NotManagedInCluster event says so (a Namespace that already exists is left
// alone quietly, and objects are still propagated into it). A copy whose
// namespace does not exist in the member yet is retried with backoff, and
// at once when the member's Namespace appears.
//
// Deletion as every reconciler does it: Orphan leaves the copies,
// Background and Foreground delete the managed ones.
//
// Controllers "sync-namespaces", "sync-configmaps", "sync-secrets",
// "sync-services", "sync-customresourcedefinitions", and
// "sync-<plural>.<group>" for each custom kind added (custom_kinds.h);
// events from "federation-" + that + "-controller".
// Thread-safe; time runs on the context's clock.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "federation/common/context.h"
#include "federation/common/reconciler.h"
#include "federation/sync/kinds.h"

namespace flotilla::federation::sync {

struct SyncControllerOptions {
  int workers = 8;  // per kind
  // Every kind a CustomResourceDefinition serves is propagated too
  // (custom_kinds.h).
  bool custom_kinds = true;
};

class CustomKinds;

class SyncController {
 public:
  // Registers one reconciler per kind with `ctx`, which must outlive it.
  explicit SyncController(FederationContext& ctx, SyncControllerOptions options = {});
  ~SyncController();
  SyncController(const SyncController&) = delete;
  SyncController& operator=(const SyncController&) = delete;

  // Propagates `kind` too, before or after the context started (a custom
  // kind once its CustomResourceDefinition is established). False when a
  // kind of the same group and resource is propagated already.
  bool AddKind(SyncKind kind);
  // Stops propagating the kind of `resource`'s group and resource (its
  // CustomResourceDefinition went, or federates another version now): its
  // reconciler unregisters and its workers stop, after the check under way.
  // False when it is not propagated. Not from one of its own checks.
  bool RemoveKind(const client::ResourceRef& resource);

 private:
  class KindStrategy;
  void EnqueueNamespace(const std::string& ns);

  FederationContext& ctx_;
  const SyncControllerOptions options_;
  Mutex mu_;
  std::vector<std::unique_ptr<KindStrategy>> kinds_ GUARDED_BY(mu_);
  std::unique_ptr<CustomKinds> custom_;  // null unless options.custom_kinds
};

}  // namespace flotilla::federation::sync
