// How a federated HorizontalPodAutoscaler's minReplicas and maxReplicas are
// shared by the member clusters (seed 004, design alternative 1;
// docs/federation.md, "Federated HPAs"). Every chosen cluster gets a local
// HPA whose min and max are its share; the local mins sum to the federated
// min and the local maxes to the federated max.
//
// Which clusters are chosen: the candidates (ready, admitted, not given
// maxReplicas 0 by the hpa-preferences, and not full for the target unless
// all are) ordered by: holding a local HPA of
// it, running the target's replicas, the preferences' weight (highest
// first), name. The first min(federated min, candidates) are chosen, so that
// none gets a min below 1.
//
// The default shares: min spread equally over the chosen (each at least 1
// and its preferred minReplicas while the federated min allows), then max
// spread equally, never below a cluster's min; the remainders go to the
// first in order; a preferred maxReplicas caps a share unless the federated
// total cannot be met otherwise.
//
// A check starts from the shares the local HPAs hold (a cluster without one
// starts from its default share) and, in this order:
//  1. Sums: brings the mins to the federated min and the maxes to the
//     federated max (a cluster that went away gave its shares up; one that
//     came back takes its default share from those furthest above theirs),
//     keeping max >= min everywhere.
//  2. Max to the load (seed points 1-3): a cluster at its ceiling
//     (current == desired == max) whose load asks for more gets, in one
//     step, what the load asks for (ceil(current * load) - max), from
//     clusters that do not need their max (what lies above both their min
//     and what they run), most spare first; bounded by what they can give.
//  3. Max back: with no cluster at its ceiling wanting more, max above a
//     cluster's default share that it does not use goes back to those below
//     theirs.
//  4. Min to the load (seed point 4): a cluster at its floor (current ==
//     desired == min, min > 1) whose load is under `min_transfer_load` gives
//     min to clusters whose desired is above their min, up to that desired.
//  5. Min back: min above a cluster's default share goes back, from
//     clusters at their floor with a low load, to those below theirs.
// Steps 2-5 leave frozen clusters (whose shares changed within the freeze
// window) alone.
//
// Pure: no I/O, no clock.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "planner/preferences.h"

namespace flotilla::federation::hpa {

struct Bounds {
  int64_t min = 0;
  int64_t max = 0;
  friend bool operator==(const Bounds&, const Bounds&) = default;
};

// A candidate cluster of a federated HPA, as a check sees it.
struct HpaCluster {
  std::string name;
  // Its local target object has replicas.
  bool runs_target = false;
  // The min and max its local HPA holds now; none: it has no local HPA.
  std::optional<Bounds> held;
  // The local HPA's status.currentReplicas and status.desiredReplicas.
  int64_t current = 0;
  int64_t desired = 0;
  // The most demanding metric's current value over its target (1.0: on
  // target), from the local HPA's status; none when it has none.
  std::optional<double> load;
  // Its shares changed within the freeze window.
  bool frozen = false;
  // Cordoned: chosen only where it holds a share already, and its max
  // does not grow.
  bool cordoned = false;
  // The target's controller found that the cluster can run none of the
  // target's pods (their capacity there is 0, e.g. its nodes cannot fit
  // the template): not chosen while other candidates remain.
  bool full = false;
};

struct PartitionOptions {
  // A cluster at its floor whose load is under this fraction of the target
  // gives its min away (step 4).
  double min_transfer_load = 0.5;
};

// One transfer of shares, for the events.
struct Move {
  bool min = false;  // minReplicas moved; else maxReplicas
  std::string to;
  std::vector<std::pair<std::string, int64_t>> from;  // cluster, amount
  int64_t amount = 0;
  std::string reason;  // why `to` gets it
};

struct Partition {
  std::vector<std::string> chosen;       // in the order of choice
  std::map<std::string, Bounds> shares;  // the chosen clusters'
  std::map<std::string, Bounds> base;    // their default shares
  std::vector<Move> moves;               // steps 2-5
  // Shares (min or max) a preferred maxReplicas could not cap, the
  // federated total needing them.
  bool over_preferences = false;

  // The clusters whose shares differ from what they held.
  std::vector<std::string> Changed(std::span<const HpaCluster> clusters) const;
};

// `min` and `max` are the federated HPA's (1 <= min <= max).
Partition PartitionHpa(int64_t min, int64_t max, const planner::Preferences& prefs,
                       std::span<const HpaCluster> clusters, const PartitionOptions& options = {});

// Every candidate gets the whole of `bounds` (a policy that duplicates the
// HPA into each cluster it places it in); a cordoned cluster only where it
// holds a share already.
Partition Duplicate(Bounds bounds, std::span<const HpaCluster> clusters);

// The HPA tolerance: a load within 10% of the target asks for no change
// (kube-controller-manager's --horizontal-pod-autoscaler-tolerance).
inline constexpr double kTolerance = 0.1;

// "a=1/4, b=1/4" (min/max per cluster), for events.
std::string Describe(const std::map<std::string, Bounds>& shares);

}  // namespace flotilla::federation::hpa
