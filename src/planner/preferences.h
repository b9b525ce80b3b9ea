// Replica placement preferences of a federated workload (seed 000).
//
// A Preferences value says how the replicas of one federated ReplicaSet,
// Deployment or StatefulSet may be spread over the member clusters. It travels
// as the JSON annotation `federation.kubernetes.io/replica-set-preferences`
// (and its deployment twin) with the seed's field names:
//
//   {"rebalance": false,
//    "clusters": {"*": {"weight": 1}, "eu-1": {"minReplicas": 2, "maxReplicas": 10}}}
//
// ParsePreferences is the one place where such a document enters Flotilla: it
// rejects unknown fields, wrong types and invalid values with an Invalid status
// whose causes name the offending field (e.g. `clusters[eu-1].maxReplicas`).
// Everything here is pure: no I/O, no clock, no threads.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/json.h"
#include "base/status.h"

namespace flotilla::planner {

// The key that matches every cluster without an entry of its own.
inline constexpr std::string_view kAnyCluster = "*";

// Preferences for the replicas one cluster receives.
struct ClusterPreferences {
  int64_t min_replicas = 0;
  // Unbounded when absent.
  std::optional<int64_t> max_replicas;
  // Preference for placing an additional replica here; 0 means the cluster
  // only receives its minReplicas (and, without rebalance, what it runs).
  int64_t weight = 0;

  friend bool operator==(const ClusterPreferences&, const ClusterPreferences&) = default;
};

struct Preferences {
  // When false, replicas that already run stay where they are.
  bool rebalance = false;
  // Cluster name or kAnyCluster -> preferences. A cluster with its own entry
  // uses only that entry; otherwise it uses "*"; with neither it gets nothing.
  std::map<std::string, ClusterPreferences, std::less<>> clusters;

  // The preferences of a workload that has none: {"*": {"weight": 1}}, an even
  // spread over every available cluster.
  static Preferences Default();

  // The entry that applies to `cluster`, or nullptr when none does.
  const ClusterPreferences* For(std::string_view cluster) const;

  friend bool operator==(const Preferences&, const Preferences&) = default;
};

// Parses and validates a preferences document. Errors are Invalid with one
// StatusCause per problem; field paths look like `clusters[A].maxReplicas`.
// `null` for a field means the field is absent, as in the Go decoder the
// annotation format comes from.
StatusOr<Preferences> ParsePreferences(std::string_view json);
// Same, for a document that is already parsed. `path` prefixes every field in
// the causes (e.g. "preferences" gives `preferences.clusters[A].weight`).
StatusOr<Preferences> PreferencesFromJson(const json::value& doc, std::string_view path = "");

// Checks values of already-typed preferences (used by ParsePreferences and by
// code that builds Preferences by hand): minReplicas, maxReplicas and weight
// non-negative, maxReplicas >= minReplicas, keys valid cluster names or "*".
Status ValidatePreferences(const Preferences& prefs, std::string_view path = "");

// The canonical JSON form, with the annotation's field names; round-trips
// through ParsePreferences.
json::object PreferencesToJson(const Preferences& prefs);

// A DNS-1123 subdomain (at most 253 characters; dot-separated labels of
// letters, digits and '-', each starting and ending with a letter or digit).
// Upper-case letters are accepted because DNS names compare case-insensitively
// and the seed's examples name clusters A, B and C.
bool IsValidClusterName(std::string_view name);

}  // namespace flotilla::planner
