// ClusterSelector: which member clusters a federated object goes to, read
// from its annotation federation.alpha.kubernetes.io/cluster-selector
// (api::kClusterSelectorAnnotation). The annotation holds a JSON list of
// requirements on Cluster labels, the original federation's format:
//
//   [{"key": "region", "operator": "In", "values": ["eu", "us"]},
//    {"key": "tier", "operator": "Gt", "values": ["2"]}]
//
// Requirements mean what a Kubernetes NodeSelectorRequirement means: In and
// NotIn take one value or more, Exists and DoesNotExist none, Gt and Lt
// exactly one integer and compare the label read as an integer (a label that
// is no integer does not match); NotIn and DoesNotExist match a cluster
// without the key. All requirements must hold; an empty list, like no
// annotation, admits every cluster. docs/federation.md, "Cluster selector".
//
// A propagation policy's cluster affinity (api/policy/policy.h) is a
// selector too (ForAffinity).
//
// A ClusterSelector is an immutable value, safe to share between threads.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/labels.h"
#include "api/policy/policy.h"
#include "base/json.h"
#include "base/status.h"

namespace flotilla::federation {

// Where the annotations' errors point to.
inline constexpr std::string_view kClusterSelectorField =
    "metadata.annotations[federation.alpha.kubernetes.io/cluster-selector]";
inline constexpr std::string_view kPlacementClusterField =
    "metadata.annotations[federation.kubernetes.io/cluster]";

class ClusterSelector {
 public:
  // Admits every cluster.
  ClusterSelector() = default;

  // Parses the annotation's value. Operators are In, NotIn, Exists,
  // DoesNotExist, Gt and Lt, and the original federation's spellings in,
  // notin, exists, "!", gt, lt, "=", "==" and "!=" (the last three with one
  // value). Errors are Invalid with one cause per problem; fields are
  // prefixed by `path`, e.g. "<path>[0].operator".
  static StatusOr<ClusterSelector> Parse(std::string_view json,
                                         std::string_view path = kClusterSelectorField);
  // The selector of an object's annotations; admits every cluster when the
  // object has none. federation.kubernetes.io/cluster (api::
  // kPlacementClusterAnnotation), when set, admits only the Cluster of that
  // name (and only if the selector admits it too).
  static StatusOr<ClusterSelector> Of(const json::object& obj);
  // Admits no cluster.
  static ClusterSelector Nowhere();
  // Admits the clusters a propagation policy's cluster affinity admits.
  static ClusterSelector ForAffinity(api::policy::ClusterAffinity affinity);

  // The label requirements only (not the placement cluster, nor a policy's
  // affinity).
  bool Matches(const std::map<std::string, std::string>& labels) const;
  // `cluster` is a Cluster object; its metadata.labels are matched, its
  // name against the placement cluster, and the whole of it against a
  // policy's affinity.
  bool Matches(const json::object& cluster) const;
  // True when it admits every cluster.
  bool Empty() const { return requirements_.empty() && !cluster_ && !affinity_ && !nowhere_; }

 private:
  std::vector<api::LabelRequirement> requirements_;
  std::optional<std::string> cluster_;
  std::shared_ptr<const api::policy::ClusterAffinity> affinity_;
  bool nowhere_ = false;
};

}  // namespace flotilla::federation
