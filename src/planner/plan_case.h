// The JSON line format of `flotilla plan`, shared by the command and the
// planner's data-driven tests (src/planner/testdata/*.jsonl).
//
// A case is one JSON object:
//   {"replicas": 50, "clusters": ["A", "B", "C"], "current": {"A": 20},
//    "capacity": {"C": 6}, "key": "default/web",
//    "preferences": {"rebalance": false, "clusters": {"*": {"weight": 1}}}}
// "replicas" and "clusters" are required; "current" and "capacity" (cluster
// name -> count) default to none, "key" to "", "preferences" to
// {"*": {"weight": 1}}. Counts for clusters not listed in "clusters" (offline
// ones) are accepted and ignored. Unknown fields are errors.
//
// A result is {"plan": {...}, "overflow": {...}} with clusters in the order of
// the case's "clusters" list (overflow: positive entries only), plus
// "explain" when asked for; a case that cannot be read gives {"error": "..."}.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "planner/planner.h"
#include "planner/preferences.h"

namespace flotilla::planner {

struct PlanCase {
  int64_t replicas = 0;
  std::vector<std::string> clusters;
  ReplicaCounts current;
  ReplicaCounts capacity;
  std::string key;
  Preferences preferences = Preferences::Default();
};

// Reads a case; errors are Invalid (BadRequest for malformed JSON) and name
// the field, e.g. `clusters[2]` or `preferences.clusters[A].maxReplicas`.
StatusOr<PlanCase> ParsePlanCase(std::string_view line);
StatusOr<PlanCase> PlanCaseFromJson(const json::object& doc);

// Plans the case. With `explain`, the result also has "explain": for every
// cluster the preferences entry used, the replicas from minReplicas, kept
// running replicas and the weighted share, the limit that stopped it, and a
// sentence saying why.
json::object RunPlanCase(const PlanCase& c, bool explain);

// The result line for a case that could not be read: {"error": message}.
json::object ErrorResult(const Status& status);

}  // namespace flotilla::planner
