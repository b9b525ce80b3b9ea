// The federation's admission rules (docs/federation.md, "Admission"): the
// federation API server refuses, at create and update, annotations its
// controllers could not act on, with 422 Invalid naming the field, so that
// a mistake shows at `kubectl apply` instead of as a silent non-placement.
//  - federation.alpha.kubernetes.io/cluster-selector on every kind the
//    federation propagates must be a valid cluster selector;
//  - federation.kubernetes.io/replica-set-preferences on ReplicaSets and
//    federation.kubernetes.io/deployment-preferences on Deployments must be
//    valid placement preferences (planner::ParsePreferences);
//  - federation.kubernetes.io/cluster-update-order on Deployments must be a
//    comma-separated list of cluster names (DNS-1123 subdomains).
// On update an annotation whose value did not change is not checked again,
// so an object stored before a rule existed can still be updated (and its
// finalizers removed).
//
// Only the federation's server installs these; members keep plain
// Kubernetes validation. Pure functions; thread-safe.
#pragma once

#include <string_view>
#include <vector>

#include "api/registry.h"
#include "base/json.h"
#include "base/status.h"

namespace flotilla::federation {

// Chains the rules onto the kinds of `registry` they apply to. REQUIRES:
// the kinds are registered and the registry is not shared yet.
void AddFederationAdmission(api::Registry& registry);

// The cluster-selector rule: causes for an invalid annotation on `obj`
// (nothing when absent, or unchanged from `old`, which is null on create).
std::vector<StatusCause> ValidateClusterSelectorAnnotation(const json::object& obj,
                                                           const json::object* old);
// The preferences rule for annotation `key`; same contract.
std::vector<StatusCause> ValidatePreferencesAnnotation(const json::object& obj,
                                                       const json::object* old,
                                                       std::string_view key);

// The update-order rule on a Deployment; same contract.
std::vector<StatusCause> ValidateUpdateOrderAnnotation(const json::object& obj,
                                                       const json::object* old);

}  // namespace flotilla::federation
