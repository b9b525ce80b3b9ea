// `flotilla status` and `flotilla clusters` (also `kubectl flotilla status`
// and `clusters`): the federation at a glance in the terminal
// (docs/dashboard.md); `flotilla explain KIND/NAME`: why an object is where
// it is (docs/policies.md). They read what the controllers write, with the
// user's own kubeconfig, and change nothing.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <tuple>

#include "base/io.h"
#include "cli/commands.h"
#include "cli/federation_flags.h"
#include "federation/common/names.h"
#include "federation/controllers.h"
#include "federation/hpa/hpa_controller.h"
#include "federation/overview/explain.h"
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

struct ExplainFlags {
  FederationFlags fed;
  std::string ns = "default";
  std::string output;  // "", "json"
  std::string target;  // KIND/NAME
};

// A kind `explain` knows: its names, resource and annotations.
struct ExplainKind {
  std::vector<std::string> names;
  const client::ResourceRef* resource;
  std::string kind;
  std::string preferences_annotation, breakdown_annotation;
};

const client::ResourceRef kConfigMaps{"", "v1", "configmaps", true};

const std::vector<ExplainKind>& ExplainKinds() {
  static const std::vector<ExplainKind> kKinds = {
      {{"deployment", "deployments", "deploy"},
       &client::kDeployments,
       "Deployment",
       api::kDeploymentPreferencesAnnotation,
       api::kDeploymentStatusAnnotation},
      {{"replicaset", "replicasets", "rs"},
       &client::kReplicaSets,
       "ReplicaSet",
       api::kReplicaSetPreferencesAnnotation,
       api::kReplicaSetStatusAnnotation},
      {{"statefulset", "statefulsets", "sts"},
       &client::kStatefulSets,
       "StatefulSet",
       api::kStatefulSetPreferencesAnnotation,
       api::kStatefulSetStatusAnnotation},
      {{"horizontalpodautoscaler", "horizontalpodautoscalers", "hpa"},
       &client::kHorizontalPodAutoscalers,
       "HorizontalPodAutoscaler",
       api::kHpaPreferencesAnnotation,
       ""},
      {{"service", "services", "svc"}, &client::kServices, "Service", "", ""},
      {{"configmap", "configmaps", "cm"}, &kConfigMaps, "ConfigMap", "", ""},
      {{"secret", "secrets"}, &client::kSecrets, "Secret", "", ""},
      {{"namespace", "namespaces", "ns"}, &client::kNamespaces, "Namespace", "", ""},
  };
  return kKinds;
}

// The items of `resource`, typed as `kind` of the policy API.
StatusOr<std::vector<json::object>> ListPolicies(client::Client& fed,
                                                 const client::ResourceRef& resource,
                                                 const std::string& ns, const char* kind) {
  FLOTILLA_ASSIGN_OR_RETURN(std::vector<json::object> items, ListAll(fed, resource, ns));
  for (json::object& o : items) {
    o["apiVersion"] = resource.ApiVersion();
    o["kind"] = kind;
  }
  return items;
}

int RunExplain(const ExplainFlags& flags) {
  auto slash = flags.target.find('/');
  const ExplainKind* kind = nullptr;
  for (const ExplainKind& k : ExplainKinds()) {
    if (slash != std::string::npos &&
        std::find(k.names.begin(), k.names.end(), flags.target.substr(0, slash)) != k.names.end()) {
      kind = &k;
    }
  }
  if (kind == nullptr) {
    std::string expected;
    for (const ExplainKind& k : ExplainKinds()) {
      expected += (expected.empty() ? "" : ", ") + k.names.front() + "/NAME";
    }
    return Fail(Status::BadRequest("\"" + flags.target + "\": expected " + expected));
  }
  auto fed = FederationClient(flags.fed);
  if (!fed.ok()) return Fail(fed.status());
  std::string ns = kind->resource->namespaced ? flags.ns : "";
  auto obj = (*fed)->Get(*kind->resource, ns, flags.target.substr(slash + 1));
  if (!obj.ok()) return Fail(obj.status());
  std::vector<json::object> pps, ops;
  for (const auto& [resource, policy_kind, scope] :
       {std::tuple{&federation::kPropagationPolicies, "PropagationPolicy", ns},
        std::tuple{&federation::kClusterPropagationPolicies, "ClusterPropagationPolicy",
                   std::string()},
        std::tuple{&federation::kOverridePolicies, "OverridePolicy", ns},
        std::tuple{&federation::kClusterOverridePolicies, "ClusterOverridePolicy",
                   std::string()}}) {
    // A cluster-scoped object meets only the cluster-scoped policies.
    if (resource->namespaced && ns.empty()) continue;
    auto items = ListPolicies(**fed, *resource, scope, policy_kind);
    if (!items.ok()) return Fail(items.status());
    std::vector<json::object>& into =
        std::string_view(policy_kind).find("Override") != std::string_view::npos ? ops : pps;
    for (json::object& o : *items) into.push_back(std::move(o));
  }
  auto clusters = ListAll(**fed, federation::kClusters, "");
  if (!clusters.ok()) return Fail(clusters.status());
  overview::Explanation e =
      overview::Explain({.obj = &*obj,
                         .api_version = kind->resource->ApiVersion(),
                         .kind = kind->kind,
                         .preferences_annotation = kind->preferences_annotation,
                         .breakdown_annotation = kind->breakdown_annotation,
                         .propagation_policies = &pps,
                         .override_policies = &ops,
                         .clusters = &*clusters,
                         .now = RealClock().Now()});
  if (flags.output == "json") {
    std::cout << ToJson(overview::ToJson(e)) << "\n";
  } else {
    std::cout << overview::ExplainText(e);
  }
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
  cmd->callback([status] { ExitProcess(RunStatus(*status)); });

  auto clusters = std::make_shared<ClustersFlags>();
  cmd = app.add_subcommand(
      "clusters",
      "Show each member cluster's health, zones, version, capacity, cordon state and how many "
      "federated objects it holds");
  AddOutputOption(*cmd, clusters->output);
  AddFederationFlags(*cmd, clusters->fed);
  cmd->callback([clusters] { ExitProcess(RunClusters(*clusters)); });

  auto explain = std::make_shared<ExplainFlags>();
  cmd = app.add_subcommand(
      "explain",
      "Show why an object is where it is: the propagation policy (or annotations) that place "
      "it, and per cluster whether it is admitted and why, its planned replicas and the "
      "override policies that change its copy there");
  cmd->add_option("KIND/NAME", explain->target,
                  "The object (deployment/NAME, statefulset/NAME, configmap/NAME, ...)")
      ->required();
  cmd->add_option("-n,--namespace", explain->ns, "The namespace")->capture_default_str();
  cmd->add_option("-o,--output", explain->output, "Output format: json")
      ->check(CLI::IsMember({"json"}));
  AddFederationFlags(*cmd, explain->fed);
  cmd->callback([explain] { ExitProcess(RunExplain(*explain)); });
}

}  // namespace flotilla::cli
