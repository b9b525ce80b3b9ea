// `flotilla plan`: the replica planner as a what-if tool. Reads one JSON case
// per line on stdin and writes one JSON result per line on stdout, in order
// (format: src/planner/plan_case.h, docs/planner.md). A line that cannot be
// read gets {"error": "..."} and the following lines go on.
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "federation/overview/policy_plan.h"
#include "planner/plan_case.h"

namespace flotilla::cli {
namespace {

constexpr const char* kFooter = R"(Input, one case per line:
  {"replicas": 50, "clusters": ["A","B","C"], "current": {"A": 20}, "capacity": {"C": 6},
   "key": "default/web", "preferences": {"rebalance": false, "clusters": {"*": {"weight": 1}}}}
Output, one result per line:
  {"plan": {"A": 22, "B": 22, "C": 6}, "overflow": {}}
"current", "capacity", "key" and "preferences" are optional; the preferences default
to {"clusters": {"*": {"weight": 1}}}.
With a propagation policy instead of preferences, where the policy would place them:
  {"replicas": 6, "clusters": ["A","B"], "policy": {"kind": "ClusterPropagationPolicy", ...},
   "clusterObjects": {"A": {"metadata": {"labels": {"location": "cloud"}}}}}
(--explain then says, per cluster, whether the policy admits it and why not.))";

// One case line: the planner's, or with a policy (federation/overview/policy_plan.h).
json::object RunLine(std::string_view line, bool explain) {
  StatusOr<json::object> doc = ParseJsonObject(line);
  if (doc.ok() && federation::overview::HasPolicy(*doc)) {
    StatusOr<json::object> result =
        federation::overview::RunPolicyPlanCase(*std::move(doc), explain);
    return result.ok() ? *std::move(result) : planner::ErrorResult(result.status());
  }
  StatusOr<planner::PlanCase> c = planner::ParsePlanCase(line);
  return c.ok() ? planner::RunPlanCase(*c, explain) : planner::ErrorResult(c.status());
}

void RunPlanLines(std::istream& in, std::ostream& out, bool explain) {
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out << json::serialize(RunLine(line, explain)) << '\n';
    // Answer before waiting for more input, so that the command also works
    // line by line as a coprocess.
    if (in.rdbuf()->in_avail() <= 0) out.flush();
  }
  out.flush();
}

}  // namespace

void AddPlanCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "plan", "What-if replica placement: JSON cases on stdin, one plan per line on stdout");
  auto explain = std::make_shared<bool>(false);
  cmd->add_flag("--explain", *explain,
                "Also say, per cluster, why it got its number (minReplicas, kept running "
                "replicas, weight share, capped by maxReplicas or capacity) and, for a case with "
                "a policy, whether the policy admits it");
  cmd->footer(kFooter);
  cmd->callback([explain] { RunPlanLines(std::cin, std::cout, *explain); });
}

}  // namespace flotilla::cli
