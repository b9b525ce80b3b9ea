// Why a federated object is where it is: what `kubectl flotilla explain
// KIND/NAME` prints (docs/policies.md, "Seeing it"). Read from the objects
// the user can read (the object, the policies, the Clusters), with the
// rules the federation places by (federation/common/policies.h):
// - what places it: its own placement annotations, the propagation policy
//   SelectPolicy chooses (the one recorded on it keeps it unless another
//   preempts), or nothing (every ready cluster);
// - per cluster: whether the placement admits it and why (the policy's
//   cluster affinity, or which of its cluster-affinity groups holds it; a
//   taint the policy does not tolerate; the cluster's health), its static
//   weight, what the federation planned there (the kind's breakdown
//   annotation) and the override policies that change its copy there, in
//   the order they apply.
//
// Pure: no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/json.h"

namespace flotilla::federation::overview {

struct ClusterVerdict {
  std::string name;
  std::string health;  // "Ready", "NotReady", "Offline", "Unknown"
  bool admitted = false;
  std::string why;
  std::optional<int64_t> weight;   // the policy's static weight
  std::optional<int64_t> planned;  // from the breakdown annotation
  std::vector<std::string> overrides;
};

struct Explanation {
  std::string object;      // "Deployment default/web"
  std::string placed_by;   // "ClusterPropagationPolicy privacy", "its annotations", "no policy"
  std::string scheduling;  // "Duplicated", "Divided, Weighted by static weights", ...
  std::vector<std::string> notes;
  std::vector<ClusterVerdict> clusters;  // by name
};

struct ExplainInputs {
  const json::object* obj = nullptr;  // the federated object
  std::string_view api_version, kind;
  // The kind's replica preferences and breakdown annotations ("": none).
  std::string_view preferences_annotation, breakdown_annotation;
  // Items with apiVersion and kind set.
  const std::vector<json::object>* propagation_policies = nullptr;
  const std::vector<json::object>* override_policies = nullptr;
  const std::vector<json::object>* clusters = nullptr;
  TimePoint now;
};

Explanation Explain(const ExplainInputs& in);

// The terminal's text, and the JSON of `-o json`.
std::string ExplainText(const Explanation& e);
json::object ToJson(const Explanation& e);

}  // namespace flotilla::federation::overview
