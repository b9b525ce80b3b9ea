// Where a federated StatefulSet's replicas go (seed 002, "Replica
// distribution" and "Limitations"): stateful replicas never move, so a
// partition only grows and shrinks the shares clusters already hold.
//
// - Scale-up (more replicas than the clusters hold): the new replicas go to
//   the ready clusters only, first to bring each to its minReplicas, then one
//   at a time to the cluster with the fewest replicas per unit of weight
//   (ties: by name), never above a cluster's maxReplicas. With the default
//   preferences ({"*": {"weight": 1}}) that is the seed's equal partition
//   (11 over c1, c2, c3: 4, 4, 3), and with fewer replicas than clusters at
//   most one per cluster.
// - Scale-down: replicas go from the ready clusters, one at a time, from
//   the cluster furthest above its share: first any above its maxReplicas,
//   then the one with the most replicas per unit of weight above its
//   minReplicas (a cluster without weight first), then any (ties: the last
//   by name). The member's controller removes the highest ordinals.
// - A cordoned cluster gets no new replicas; it gives them up as others do.
// - A cluster that is not ready keeps its share untouched: its replicas are
//   not recreated elsewhere. A cluster that left the federation is not
//   given: its share is free for the others, as new identities.
//
// Pure: no I/O, no clock.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "planner/planner.h"
#include "planner/preferences.h"

namespace flotilla::federation::statefulset {

struct StatefulCluster {
  std::string name;
  // The replicas it holds now: its local StatefulSet's spec.replicas (0
  // when it has none).
  int64_t current = 0;
  // Ready and admitted: its share may change.
  bool ready = false;
  // Cordoned: its share may shrink, never grow.
  bool cordoned = false;
};

// Every cluster's share, 0 included.
planner::ReplicaCounts Partition(int64_t replicas, std::span<const StatefulCluster> clusters,
                                 const planner::Preferences& prefs);

}  // namespace flotilla::federation::statefulset
