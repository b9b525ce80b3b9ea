// Override policies (OverridePolicy, ClusterOverridePolicy) as data: which
// rules apply to an object's copy in one cluster, and what each overrider
// does to the copy, with Karmada's meanings (docs/policies.md,
// "Overrides").
//
// Pure and immutable once built; safe to share between threads.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "api/policy/policy.h"
#include "base/json.h"
#include "base/status.h"

namespace flotilla::api::policy {

// The annotations on a member copy that list the overrides applied to it,
// as Karmada writes them: a JSON list of {"policyName", "overriders"}.
inline constexpr char kAppliedOverridesAnnotation[] = "policy.karmada.io/applied-overrides";
inline constexpr char kAppliedClusterOverridesAnnotation[] =
    "policy.karmada.io/applied-cluster-overrides";

struct OverrideRule {
  std::optional<ClusterAffinity> target;  // none: every cluster
  json::object overriders;
};

struct OverridePolicy {
  bool cluster_scoped = false;
  std::string ns;  // empty for a ClusterOverridePolicy
  std::string name;
  std::vector<ResourceSelector> selectors;  // none: every object of its scope
  std::vector<OverrideRule> rules;          // spec.overrideRules, or the deprecated pair

  // How closely it selects `obj` (kAll without selectors); a namespaced
  // policy selects only objects of its namespace.
  ImplicitPriority Match(const ObjectRef& obj) const;

  static StatusOr<OverridePolicy> FromObject(const json::object& obj);
};

// One set of overriders to apply, and the policy it comes from.
struct AppliedOverriders {
  const OverridePolicy* policy = nullptr;
  const json::object* overriders = nullptr;
};

// The overriders that apply to `obj`'s copy in `cluster`, in the order
// Karmada applies them: cluster policies first, then the namespaced ones of
// the object's namespace; within each, the loosest match first (kind
// alone, then labels, then name), then by name; within a policy, its rules
// in order.
std::vector<AppliedOverriders> OverridersFor(std::span<const OverridePolicy* const> policies,
                                             const ObjectRef& obj, const ClusterFacts& cluster);

// Applies one Overriders object to `obj`, in Karmada's order: images,
// command, args, labels, annotations, fields inside string fields, then the
// plaintext JSON patch. An operation that cannot apply (a path that is not
// there to remove or replace, an image that does not parse, a field that
// holds no document) is an error naming it; `obj` is then partly changed
// and the caller keeps its own copy.
Status ApplyOverriders(const json::object& overriders, json::object& obj);

// Applies `list` to `obj` and records them in the applied-overrides
// annotations. Errors as ApplyOverriders, prefixed by the policy's name;
// `failed`, when given, is then set to that policy.
Status ApplyAll(const std::vector<AppliedOverriders>& list, json::object& obj,
                const OverridePolicy** failed = nullptr);

}  // namespace flotilla::api::policy
