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
// - it does not: a managed copy there is deleted.
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
// "sync-services"; events from "federation-sync-<resource>-controller".
// Thread-safe; time runs on the context's clock.
#pragma once

#include <memory>
#include <vector>

#include "federation/common/context.h"
#include "federation/common/reconciler.h"
#include "federation/sync/kinds.h"

namespace flotilla::federation::sync {

struct SyncControllerOptions {
  int workers = 2;  // per kind
};

class SyncController {
 public:
  // Registers one reconciler per kind with `ctx`, which must outlive it.
  explicit SyncController(FederationContext& ctx, SyncControllerOptions options = {});
  ~SyncController();
  SyncController(const SyncController&) = delete;
  SyncController& operator=(const SyncController&) = delete;

 private:
  class KindStrategy;
  void EnqueueNamespace(const std::string& ns);

  std::vector<std::unique_ptr<KindStrategy>> kinds_;
};

}  // namespace flotilla::federation::sync
