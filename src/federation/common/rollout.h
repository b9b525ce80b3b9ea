// How a federated workload's pod template reaches the member clusters, for
// every kind that rolls templates out (Deployments, seed 001; StatefulSets,
// seed 002): which clusters get the federation's template in a check, and
// where each cluster's rollout stands. The kind says, per cluster, whether
// its local object exists, runs the federation's template, is mid-update
// (its own test) or has failed (a progress deadline).
//
// kOneAtATime: clusters are taken in the order of the annotation
// federation.kubernetes.io/cluster-update-order (names, comma-separated;
// names of clusters not present are skipped), then the rest
// alphabetically. A cluster on another template gets the new one only when
// no other cluster is mid-update. A cluster mid-update on an older template
// (the federated template changed during its rollout) is the one cluster in
// progress: it gets the newest template at once. A failed cluster stays
// mid-update, so no further cluster is updated until the template changes.
// kAllAtOnce: every cluster gets the template. kHeld: no cluster's template
// changes (a paused Deployment). A cluster without a local object gets the
// template with its first copy (and counts as complete until it has one).
//
// Pure: no I/O, no clock.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "base/json.h"

namespace flotilla::federation {

enum class ClusterRollout {
  kComplete,  // on the federation's template, not mid-update
  kUpdating,  // on the federation's template (or given it now), mid-update
  kFailed,    // on the federation's template, past its progress deadline
  kWaiting,   // on another template, waiting for its turn
  kPaused,    // on another template while the rollout is held
};

const char* Name(ClusterRollout r);

// One admitted cluster, as the kind sees it.
// spec.template of a workload; null when absent.
const json::object* TemplateOf(const json::object& obj);

struct ClusterTemplate {
  std::string cluster;
  bool exists = false;       // a managed local object (not being deleted)
  bool on_template = false;  // it runs the federation's template
  bool busy = false;         // mid-update
  bool failed = false;       // its rollout failed (it is busy too)
};

enum class RolloutMode { kOneAtATime, kAllAtOnce, kHeld };

struct RolloutPlan {
  // Per cluster, in the order given: whether its local object gets the
  // federation's template now (or has it already).
  std::vector<bool> new_template;
  std::vector<ClusterRollout> states;
  // Per cluster, the federation's template as that cluster gets it (its
  // override policies applied); empty: the federation's template as it is
  // for every cluster.
  std::vector<json::object> cluster_templates;

  // The template cluster `i` gets; null when `federated` has none.
  const json::object* TemplateFor(size_t i, const json::object& federated) const {
    return i < cluster_templates.size() ? &cluster_templates[i] : TemplateOf(federated);
  }
};

RolloutPlan PlanRollout(const json::object& federated, std::span<const ClusterTemplate> clusters,
                        RolloutMode mode);

// The clusters in update order: those the annotation names, in its order,
// then the rest alphabetically.
std::vector<std::string> UpdateOrder(const json::object& federated,
                                     std::vector<std::string> clusters);

// `local` runs the pod template `tmpl` (ignoring the pod-template-hash
// label; null, empty objects and empty arrays count as absent).
bool RunsTemplate(const json::object& local, const json::object& tmpl);

}  // namespace flotilla::federation
