// The terminal tables of `kubectl flotilla status` and `clusters`
// (docs/dashboard.md): columns as kubectl lays them out (left-aligned, three
// spaces apart, no trailing blanks), colour only when asked for (on a
// terminal), never the only signal: every coloured cell says the same in
// text.
//
// Pure: no I/O.
#pragma once

#include <string>
#include <vector>

#include "federation/overview/overview.h"

namespace flotilla::federation::overview {

enum class Tone { kPlain, kGood, kWarn, kBad, kDim };

struct TableCell {
  std::string text;
  Tone tone = Tone::kPlain;
};

// Header lines (a second one for sub-headings), then rows. Widths are
// counted in code points.
std::string RenderTable(const std::vector<std::vector<std::string>>& headers,
                        const std::vector<std::vector<TableCell>>& rows, bool colour);

struct TableOptions {
  bool wide = false;            // -o wide
  bool all_namespaces = false;  // -A: a NAMESPACE column
  bool colour = false;
};

// One row per workload: NAME (kind/name), READY (ready/desired), one column
// per cluster ("ready/planned", with the HPA's "[min-max]" for the cluster
// where one rules; "-" where it has no share), ROLLOUT, HPA, AFFINITY.
// -o wide adds a second header line with each cluster's region/zones.
std::string StatusTable(const std::vector<ClusterInfo>& clusters,
                        const std::vector<WorkloadInfo>& workloads, const TableOptions& opts);

// One row per cluster: NAME, STATUS, SCHEDULING, REGION, ZONES, VERSION,
// CPU and MEMORY (requested/allocatable and the share), OBJECTS (federated
// objects it holds), MESSAGE (the last failed probe; for a Ready cluster,
// the resources it does not serve, if any); -o wide adds NODES
// (ready/all) and PODS.
std::string ClustersTable(const std::vector<ClusterInfo>& clusters, const TableOptions& opts);

}  // namespace flotilla::federation::overview
