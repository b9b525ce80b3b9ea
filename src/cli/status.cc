// `flotilla status` and `flotilla clusters` (also `kubectl flotilla status`
// and `clusters`): the federation at a glance in the terminal
// (docs/dashboard.md). They read what the controllers write, with the
// user's own kubeconfig, and change nothing.
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "cli/commands.h"
#include "cli/federation_flags.h"
#include "federation/common/names.h"
#include "federation/controllers.h"
#include "federation/hpa/hpa_controller.h"
#include "federation/overview/table.h"

namespace flotilla::cli {
namespace {

namespace overview = federation::overview;

struct StatusFlags {
  FederationFlags fed;
  std::string ns = "default";
  bool all_namespaces = false;
  std::string output;  // "", "wide", "json"
  std::string target;  // KIND/NAME
};

StatusOr<std::vector<json::object>> ListAll(client::Client& fed, const client::ResourceRef& r,
                                            const std::string& ns) {
  FLOTILLA_ASSIGN_OR_RETURN(client::ObjectList list, fed.List(r, ns, {}));
  return std::move(list.items);
}

bool Colour() { return ::isatty(STDOUT_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr; }

overview::TableOptions TableOptionsOf(const std::string& output, bool all_namespaces) {
  return {.wide = output == "wide", .all_namespaces = all_namespaces, .colour = Colour()};
}

int RunStatus(const StatusFlags& flags) {
  auto fed = FederationClient(flags.fed);
  if (!fed.ok()) return Fail(fed.status());
  std::string ns = flags.all_namespaces ? "" : flags.ns;
  const std::vector<federation::ListedWorkload> listed = federation::ListedWorkloads();
  std::vector<const client::ResourceRef*> kinds;
  overview::BreakdownAnnotations breakdowns;
  for (const federation::ListedWorkload& w : listed) {
    kinds.push_back(&w.resource);
    breakdowns[w.kind] = w.breakdown_annotation;
  }
  std::string only;
  if (!flags.target.empty() && flags.all_namespaces) {
    return Fail(Status::BadRequest("a workload cannot be named across all namespaces: use -n"));
  }
  if (!flags.target.empty()) {
    auto slash = flags.target.find('/');
    const federation::ListedWorkload* listed_kind =
        slash == std::string::npos
            ? nullptr
            : federation::FindListedWorkload(listed, flags.target.substr(0, slash));
    if (listed_kind == nullptr) {
      std::string expected;
      for (const federation::ListedWorkload& w : listed) {
        expected += (expected.empty() ? "" : ", ") + w.names.front() + "/NAME";
      }
      return Fail(Status::BadRequest("\"" + flags.target + "\": expected " + expected));
    }
    const client::ResourceRef* kind = &listed_kind->resource;
    only = flags.target.substr(slash + 1);
    auto got = (*fed)->Get(*kind, ns, only);
    if (!got.ok()) return Fail(got.status());
    kinds = {kind};
  }
  auto clusters = ListAll(**fed, federation::kClusters, "");
  if (!clusters.ok()) return Fail(clusters.status());
  std::vector<json::object> workloads;
  for (const client::ResourceRef* kind : kinds) {
    auto items = ListAll(**fed, *kind, ns);
    if (!items.ok()) return Fail(items.status());
    for (json::object& o : *items) {
      if (only.empty() || StringAt(o, "metadata.name") == only) workloads.push_back(std::move(o));
    }
  }
  auto hpas = ListAll(**fed, federation::hpa::kHorizontalPodAutoscalers, ns);
  if (!hpas.ok()) return Fail(hpas.status());
  overview::Overview o = overview::Build(*clusters, workloads, *hpas, breakdowns);
  if (flags.output == "json") {
    json::array c, w;
    for (const auto& info : o.clusters) c.push_back(overview::ToJson(info));
    for (const auto& info : o.workloads) w.push_back(overview::ToJson(info));
    std::cout << ToJson(json::object{{"clusters", c}, {"workloads", w}}) << "\n";
    return 0;
  }
  if (o.workloads.empty()) {
    std::cerr << "No federated workloads found"
              << (flags.all_namespaces ? "" : " in " + flags.ns + " namespace") << ".\n";
    return 0;
  }
  std::cout << overview::StatusTable(o.clusters, o.workloads,
                                     TableOptionsOf(flags.output, flags.all_namespaces));
  return 0;
}

struct ClustersFlags {
  FederationFlags fed;
  std::string output;
};

int RunClusters(const ClustersFlags& flags) {
  auto fed = FederationClient(flags.fed);
  if (!fed.ok()) return Fail(fed.status());
  auto clusters = ListAll(**fed, federation::kClusters, "");
  if (!clusters.ok()) return Fail(clusters.status());
  overview::Overview o = overview::Build(*clusters, {}, {}, {});
  if (flags.output == "json") {
    json::array c;
    for (const auto& info : o.clusters) c.push_back(overview::ToJson(info));
    std::cout << ToJson(json::object{{"clusters", c}}) << "\n";
    return 0;
  }
  if (o.clusters.empty()) {
    std::cerr << "No member clusters joined.\n";
    return 0;
  }
  std::cout << overview::ClustersTable(o.clusters, TableOptionsOf(flags.output, false));
  return 0;
}

void AddOutputOption(CLI::App& cmd, std::string& output) {
  cmd.add_option("-o,--output", output, "Output format: wide or json")
      ->check(CLI::IsMember({"wide", "json"}));
}

}  // namespace

void AddStatusCommands(CLI::App& app) {
  auto status = std::make_shared<StatusFlags>();
  auto* cmd = app.add_subcommand(
      "status",
      "Show each federated workload's ready/planned replicas per cluster, its rollout, HPA "
      "and location affinity");
  cmd->add_option("KIND/NAME", status->target,
                  "One workload (deployment/NAME, replicaset/NAME, statefulset/NAME)");
  cmd->add_option("-n,--namespace", status->ns, "The namespace")->capture_default_str();
  cmd->add_flag("-A,--all-namespaces", status->all_namespaces, "Every namespace");
  AddOutputOption(*cmd, status->output);
  AddFederationFlags(*cmd, status->fed);
  cmd->callback([status] { std::exit(RunStatus(*status)); });

  auto clusters = std::make_shared<ClustersFlags>();
  cmd = app.add_subcommand(
      "clusters",
      "Show each member cluster's health, zones, version, capacity, cordon state and how many "
      "federated objects it holds");
  AddOutputOption(*cmd, clusters->output);
  AddFederationFlags(*cmd, clusters->fed);
  cmd->callback([clusters] { std::exit(RunClusters(*clusters)); });
}

}  // namespace flotilla::cli
