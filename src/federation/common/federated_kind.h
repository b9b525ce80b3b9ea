// How a federated kind declares itself, once (docs/architecture.md,
// "Adding a federated kind"). Every controller `flotilla server` can run (the cluster
// controller, the sync controller and one per federated workload kind)
// describes itself in a FederatedKind, in its own folder:
//
//   void RegisterHpa(KindRegistry& kinds) {
//     kinds.Add({.controller = "hpa", .help = "...", .kind = "HorizontalPodAutoscaler",
//                .propagates = {kHorizontalPodAutoscalers},
//                .admission = {.preferences_annotation = api::kHpaPreferencesAnnotation},
//                .build = [](const KindEnv& env) { return std::make_shared<HpaController>(...);
//                }});
//   }
//
// and its folder's CMakeLists.txt names the function
// (flotilla_federated_kind(flotilla_federation_hpa REGISTER RegisterHpa)).
// The build collects those functions into BuiltInKinds() (federation/
// controllers.h), in the order the folders are added. From that one
// description come:
//  - the name --controllers takes, and its line in `flotilla server --help`;
//  - the admission rules (federation/admission): the placement annotations
//    and the federation's finalizer on every resource the kind propagates,
//    and the kind's own annotations (KindAdmission);
//  - the controller, built by `build` when it is enabled;
//  - what a cascading `flotilla unjoin` deletes in a member, and the API
//    groups the controllers' ClusterRole grants (controllers.h);
//  - the workloads `kubectl flotilla status` lists, and the names it takes
//    for them (WorkloadListing).
// What never reaches a member copy needs no declaration: every annotation in
// the federation's own domains does not (member_copy.h).
#pragma once

#include <any>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <typeindex>
#include <unordered_map>
#include <vector>

#include "client/client.h"
#include "federation/common/placer.h"

namespace flotilla::federation {

class FederationContext;

// The options of the federation's parts, each under its own type: a part
// reads its own (options.Get<hpa::HpaOptions>()) and gets the defaults when
// nobody set them; flags write them (options.Mutable<...>()). A copy holds
// copies of the options. Not thread-safe; set before the controllers start.
class PartOptions {
 public:
  template <typename T>
  T& Mutable() {
    std::any& slot = by_type_[std::type_index(typeid(T))];
    if (!slot.has_value()) slot = T{};
    return *std::any_cast<T>(&slot);
  }
  template <typename T>
  const T& Get() const {
    auto it = by_type_.find(std::type_index(typeid(T)));
    if (it != by_type_.end()) return *std::any_cast<T>(&it->second);
    static const T kDefaults{};
    return kDefaults;
  }

 private:
  std::unordered_map<std::type_index, std::any> by_type_;
};

// What a kind's controller is built from.
struct KindEnv {
  FederationContext& ctx;
  // The options of federated workloads; `applications` is set for a kind
  // whose objects join coupled applications (FederatedKind::applications).
  const WorkloadOptions& workloads;
  const PartOptions& options;
};

// The annotations of a kind's objects that the federation's admission checks
// (federation/admission/admission.h), on the first resource it propagates.
struct KindAdmission {
  // Holds the kind's placement preferences (planner::Preferences); "" none.
  std::string_view preferences_annotation;
  // federation.kubernetes.io/cluster-update-order may be set.
  bool update_order = false;
  // The local objects in the members are named <name>-<cluster> and may
  // have at most this many characters; 0: they are named as the federated
  // object. A new object whose local names would be longer is refused.
  size_t max_local_name = 0;
};

// A kind that `kubectl flotilla status` and the dashboard list
// (federation/overview): its objects' per-cluster breakdown is read from
// `breakdown_annotation` (planned and ready, rollout, per cluster: what
// they count is the kind's, e.g. replicas, completions, healthy pods, a
// served or bound copy), and the command takes it by its lower-case kind,
// its plural, either with its group (".apps"), and `short_names`.
struct WorkloadListing {
  std::vector<std::string> short_names;  // "deploy"
  std::string breakdown_annotation;
  // The resource and kind listed; unset: the FederatedKind's (its first
  // propagated resource).
  std::optional<client::ResourceRef> resource;
  std::string kind;
};

struct FederatedKind {
  // The name --controllers takes ("hpa").
  std::string controller;
  // One line for `flotilla server --help`.
  std::string help;
  // The kind its admission rules name in messages ("HorizontalPodAutoscaler");
  // "" for a controller of several kinds.
  std::string kind;
  // The federated resources it propagates to the members: each gets the
  // placement annotation rules and the federation's finalizer at create.
  std::vector<client::ResourceRef> propagates;
  KindAdmission admission;
  // Its objects join coupled applications (federation/applications): the
  // application label and annotations are checked, and the controller is
  // given the federation's Applications in KindEnv::workloads.
  bool applications = false;
  // A workload kind listed by `kubectl flotilla status`; none otherwise.
  std::vector<WorkloadListing> listings;
  // Builds the controller on env.ctx; it runs once the context starts and
  // stops when the result is destroyed.
  std::function<std::shared_ptr<void>(const KindEnv& env)> build;
};

// The kinds, in the order they were added (their controllers are built in
// that order). Not thread-safe while being filled; read-only after.
class KindRegistry {
 public:
  // REQUIRES: no kind of the same controller name was added.
  void Add(FederatedKind kind);
  const std::vector<FederatedKind>& kinds() const { return kinds_; }
  // Null when none has that controller name.
  const FederatedKind* Find(std::string_view controller) const;

 private:
  std::vector<FederatedKind> kinds_;
};

}  // namespace flotilla::federation
