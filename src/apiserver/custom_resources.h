// The CustomResourceDefinitions of one API server, as kube-apiserver's
// apiextensions controllers run them (docs/crds.md):
//
// - every change to a CRD makes the server's set of custom resources again
//   (one per served version of each CRD whose names were accepted) and
//   hands it to `publish` (the ApiServer then serves them, with discovery
//   and OpenAPI), and only then marks the CRD Established;
// - names: a CRD whose plural, singular, short names, kind or list kind
//   another CRD of its group took first (older creationTimestamp) gets
//   NamesAccepted=False, reason NameConflict, and is not served;
// - status: acceptedNames, storedVersions (the storage versions it ever
//   had) and the NamesAccepted and Established conditions;
// - deletion: a CRD being deleted gets Terminating=True, its objects are
//   deleted (every namespace), then its finalizer
//   customresourcecleanup.apiextensions.k8s.io is removed and it goes.
//   Objects held by finalizers of their own are waited for (checked again
//   every `recheck`).
//
// Runs on the shared blocking pool (a PoolTrigger), never two passes at
// once. Thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/registry.h"
#include "apiserver/objects.h"
#include "base/io.h"
#include "base/timer.h"
#include "storage/store.h"

namespace flotilla::apiserver {

class CustomResources {
 public:
  using Publish = std::function<void(std::vector<std::shared_ptr<api::Resource>>)>;

  // `crds` is the registered customresourcedefinitions resource; `objects`
  // outlives this. With `cluster_roles` (the clusterroles resource), the
  // ClusterRole kControllerRole grants every verb on each served custom kind
  // (and its status and scale), kept so as CRDs come and go: what the
  // federation's controllers, bound to it, propagate them with.
  CustomResources(Objects& objects, const api::Resource& crds, Publish publish,
                  const api::Resource* cluster_roles = nullptr,
                  Duration recheck = std::chrono::seconds(1));
  static constexpr char kControllerRole[] = "flotilla:federation-controller:custom-kinds";
  ~CustomResources();
  CustomResources(const CustomResources&) = delete;
  CustomResources& operator=(const CustomResources&) = delete;

  // Serves the stored CRDs (one pass, before this returns), then watches.
  Status Start();
  void Stop();

 private:
  void Sync();
  // Deletes the objects of a CRD being deleted; true when none is left.
  bool CleanUp(const api::Resource& res);
  // Writes kControllerRole with `rules` unless it has them; false when the
  // write failed.
  bool GrantControllers(const json::array& rules);

  Objects& objects_;
  const api::Resource& crds_;
  const Publish publish_;
  const api::Resource* const cluster_roles_;
  const Duration recheck_;
  std::unique_ptr<storage::Watcher> watcher_;
  // What was published last (only Sync, never twice at once, touches them).
  bool published_ = false;
  std::string published_signature_;
  std::optional<json::array> granted_;  // kControllerRole's rules as written last
  PoolTrigger trigger_{SharedBlockingPool(), [this] { Sync(); }};
  Timer retry_{objects_.clock(), [this] { trigger_.Kick(); }};
};

}  // namespace flotilla::apiserver
