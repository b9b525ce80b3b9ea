// The local workload (ReplicaSet, Deployment) the federation wants in a
// member cluster for a federated one (seed 000: same kind, name, namespace
// and spec; the replicas the planner gave that cluster), and whether an
// existing one needs an update.
//
// The local copy's metadata is what every member copy gets
// (federation/common/member_copy.h): the federated object's labels and
// annotations without the federation's own, plus the managed-by label and
// the federated-object annotation.
//
// Pure: no I/O.
#pragma once

#include <cstdint>
#include <optional>

#include "base/json.h"

namespace flotilla::federation {

// The desired local copy of `federated` (which has apiVersion and kind)
// with `replicas` (none: its spec as it is, for kinds without replicas).
json::object DesiredLocal(const json::object& federated, std::optional<int64_t> replicas);

// Whether `existing` differs from `desired` in what the federation sets:
// its labels and annotations, and spec fields that `desired` sets
// (JsonContains: the member's defaults, status, uid, ... are not
// compared). The reconciler asks this only of a copy written for the
// desired one that this process has not written itself
// (copy_versions.h).
bool NeedsUpdate(const json::object& existing, const json::object& desired);

// Whether a cluster has an entry in a workload's breakdown annotation: it
// has replicas planned, a local copy, pods waiting or a capacity estimate.
// One with none of these is left out (a one-replica workload over 100
// clusters names one), and a reader takes an absent cluster's counts for 0.
inline bool InBreakdown(int64_t planned, bool has_local, int64_t pending, bool has_estimate) {
  return planned != 0 || has_local || pending != 0 || has_estimate;
}

// `existing` with what the federation sets taken from `desired`, ready for
// an Update (keeps its resourceVersion and everything the member set).
json::object Updated(const json::object& existing, const json::object& desired);

}  // namespace flotilla::federation
