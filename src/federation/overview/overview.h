// The federation at a glance: what `kubectl flotilla status` and
// `kubectl flotilla clusters` show (docs/dashboard.md), read from the
// objects the federation's controllers write: each Cluster's status, and
// each federated workload's per-cluster breakdown annotation (its kind's,
// e.g. replica-set-status, deployment-status, statefulset-status) with the
// federated HPA's hpa-status where one scales it.
//
// Pure: no I/O. The dashboard's page reads the same annotations in the
// browser.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"

namespace flotilla::federation::overview {

struct ClusterInfo {
  std::string name;
  std::string health;   // "Ready", "NotReady" (reachable), "Offline", "Unknown"
  std::string message;  // why it is not Ready (the last failed probe); "" when Ready
  // The resources the federation uses that it does not serve (an older
  // Kubernetes): status.unsupportedKinds.
  std::vector<std::string> unsupported;
  std::string scheduling;  // "Schedulable", "Cordoned", "Draining"
  std::string region;
  std::vector<std::string> zones;
  std::string version;
  std::optional<int64_t> nodes, ready_nodes;
  // Allocatable of the ready nodes and what bound pods request; none until
  // the federation's caches of the member synced.
  std::optional<int64_t> cpu_allocatable, cpu_allocated;  // millicores
  std::optional<int64_t> memory_allocatable, memory_allocated;
  std::optional<int64_t> pods_allocatable, pods_allocated;
  std::optional<int64_t> federated_objects;
};

ClusterInfo ClusterInfoOf(const json::object& cluster);

// One workload in one cluster.
struct Cell {
  int64_t planned = 0;
  int64_t ready = 0;
  std::string rollout;  // "complete", "updating", "waiting", "failed", "paused"; "" if none
  bool reachable = true;
  // The federated HPA's bounds for the cluster, where one scales the workload.
  std::optional<int64_t> min_replicas, max_replicas;
};

// One listed object: a workload, or a kind listed beside them (a
// PodDisruptionBudget: desired and current healthy pods; an Ingress or a
// claim: its copies, and those served or Bound).
struct WorkloadInfo {
  std::string kind;  // "Deployment", "ReplicaSet", "StatefulSet", "Job", ...
  std::string ns, name;
  int64_t desired = 0;                // spec.replicas
  int64_t ready = 0;                  // status.readyReplicas
  std::map<std::string, Cell> cells;  // by cluster; only the clusters it has a share in
  // "complete", "progressing", "paused" or "failed" (Deployments and
  // StatefulSets); "" for ReplicaSets.
  std::string rollout;
  std::vector<std::string> updating, done, waiting;  // clusters, by their rollout
  std::string hpa;  // the federated HPA that scales it; "" when none
  std::optional<int64_t> hpa_min, hpa_max;
  std::string affinity;     // the location-affinity class
  std::string application;  // its federation.kubernetes.io/application label
};

// `obj` a federated Deployment, ReplicaSet or StatefulSet; `hpa` the
// federated HPA whose scaleTargetRef names it, or null; its per-cluster
// breakdown in the annotation `breakdown_annotation` ("": none).
WorkloadInfo WorkloadInfoOf(const json::object& obj, const json::object* hpa,
                            std::string_view breakdown_annotation);

// A shadow ReplicaSet of a federated Deployment (not a workload of its own).
bool IsShadow(const json::object& replicaset);

struct Overview {
  std::vector<ClusterInfo> clusters;    // by name
  std::vector<WorkloadInfo> workloads;  // by namespace, name, kind
};

// The annotation of each workload kind's per-cluster breakdown, by kind
// ("Deployment": its deployment-status), as the kinds declare them
// (federation::ListedWorkloads).
using BreakdownAnnotations = std::map<std::string, std::string, std::less<>>;

// From the Clusters, the federated workloads (ReplicaSets that are a
// Deployment's shadows left out), and the federated HPAs (matched to their
// targets by scaleTargetRef).
Overview Build(const std::vector<json::object>& clusters,
               const std::vector<json::object>& workloads, const std::vector<json::object>& hpas,
               const BreakdownAnnotations& breakdowns);

// For `-o json`.
json::object ToJson(const ClusterInfo& c);
json::object ToJson(const WorkloadInfo& w);

}  // namespace flotilla::federation::overview
