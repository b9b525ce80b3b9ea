// `flotilla join`, `unjoin`, `cordon`, `uncordon`, `drain`, `migrate` and
// `install-kubectl-plugin`: adding, removing and cordoning member clusters,
// moving coupled applications (docs/federation.md). The same
// commands run as the kubectl plugin `kubectl flotilla ...`; like kubectl,
// they find the federation through --kubeconfig, else $KUBECONFIG, else
// ~/.kube/config, and --context.
#include "federation/cluster/join.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "base/io.h"
#include "base/log.h"
#include "cli/commands.h"
#include "cli/duration.h"
#include "cli/federation_flags.h"
#include "client/rest_client.h"
#include "federation/cluster/migrate.h"
#include "federation/common/names.h"
#include "federation/controllers.h"

namespace flotilla::cli {
namespace {

namespace cluster = federation::cluster;

struct JoinFlags {
  FederationFlags fed;
  std::string name, cluster_kubeconfig, cluster_context, labels;
  std::string provider, region;
  std::vector<std::string> zones;
  std::string secret_namespace = federation::kSystemNamespace;
  bool rejoin = false;
};

int RunJoin(const JoinFlags& flags) {
  cluster::JoinOptions opts;
  opts.name = flags.name;
  opts.secret_namespace = flags.secret_namespace;
  opts.rejoin = flags.rejoin;
  auto labels = cluster::ParseLabels(flags.labels);
  if (!labels.ok())
    return Fail(Status(labels.status().reason(), "--labels: " + labels.status().message()));
  opts.labels = *labels;
  opts.provider = flags.provider;
  opts.region = flags.region;
  opts.zones = flags.zones;
  auto member_config = MemberConfig(flags.cluster_kubeconfig, flags.cluster_context);
  if (!member_config.ok()) return Fail(member_config.status());
  opts.member = *member_config;
  auto fed = FederationClient(flags.fed);
  if (!fed.ok()) return Fail(fed.status());
  auto joined = cluster::Join(**fed, opts);
  if (!joined.ok()) return Fail(joined.status());
  std::cout << "cluster.federation/" << flags.name << " joined\n";
  return 0;
}

struct UnjoinFlags {
  FederationFlags fed;
  std::string name;
  bool cascade = false;
};

int RunUnjoin(const UnjoinFlags& flags) {
  auto fed = FederationClient(flags.fed);
  if (!fed.ok()) return Fail(fed.status());
  // An agent-connected member's cascade goes through the cluster proxy.
  auto config = FederationConfig(flags.fed);
  if (!config.ok()) return Fail(config.status());
  auto result = cluster::Unjoin(**fed, flags.name, flags.cascade, federation::MemberKinds(),
                                nullptr, &*config);
  if (!result.ok()) return Fail(result.status());
  for (const std::string& d : result->deleted) std::cout << d << " deleted from the member\n";
  std::cout << "cluster.federation/" << flags.name << " unjoined\n";
  return 0;
}

struct CordonFlags {
  FederationFlags fed;
  std::string name;
};

// As kubectl cordon/uncordon print for nodes.
int RunCordon(const CordonFlags& flags, bool cordon) {
  auto fed = FederationClient(flags.fed);
  if (!fed.ok()) return Fail(fed.status());
  StatusOr<bool> changed = cluster::SetUnschedulable(**fed, flags.name, cordon);
  if (!changed.ok()) return Fail(changed.status());
  std::cout << "cluster.federation/" << flags.name << (*changed ? " " : " already ")
            << (cordon ? "cordoned" : "uncordoned") << "\n";
  return 0;
}

struct MigrateFlags {
  FederationFlags fed;
  cluster::MigrateOptions opts;
};

int RunMigrate(MigrateFlags flags) {
  auto fed = FederationClient(flags.fed);
  if (!fed.ok()) return Fail(fed.status());
  flags.opts.report = [](const std::string& line) { std::cout << line << std::endl; };
  Status s = cluster::Migrate(**fed, flags.opts);
  if (!s.ok()) return Fail(s);
  return 0;
}

int RunDrain(cluster::DrainOptions opts, const FederationFlags& fed_flags) {
  auto fed = FederationClient(fed_flags);
  if (!fed.ok()) return Fail(fed.status());
  opts.report = [](const std::string& line) { std::cout << line << std::endl; };
  auto drained = cluster::Drain(**fed, opts);
  if (!drained.ok()) return Fail(drained.status());
  return 0;
}

// A symlink DIR/kubectl-flotilla to this binary, which kubectl finds on PATH.
int InstallPlugin(const std::string& dir) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return Fail(Status::Internal("finding this binary: " + ec.message()));
  std::filesystem::path target_dir = dir.empty() ? self.parent_path() : std::filesystem::path(dir);
  std::filesystem::create_directories(target_dir, ec);
  auto link = target_dir / "kubectl-flotilla";
  std::filesystem::remove(link, ec);
  std::filesystem::create_symlink(self, link, ec);
  if (ec) return Fail(Status::Internal("creating " + link.string() + ": " + ec.message()));
  std::cout << link.string() << " -> " << self.string() << "\n"
            << "With " << target_dir.string() << " on PATH: kubectl flotilla join --help\n";
  return 0;
}

}  // namespace

void AddJoinCommands(CLI::App& app) {
  auto join = std::make_shared<JoinFlags>();
  auto* cmd = app.add_subcommand("join", "Join a member cluster to the federation");
  cmd->add_option("NAME", join->name, "The member cluster's name in the federation")->required();
  AddFederationFlags(*cmd, join->fed);
  cmd->add_option("--cluster-kubeconfig", join->cluster_kubeconfig,
                  "Kubeconfig of the member cluster")
      ->required();
  cmd->add_option("--cluster-context", join->cluster_context,
                  "Context of the member's kubeconfig (default: its current context)");
  AddClusterPlaceFlags(*cmd, join->labels, join->provider, join->region, join->zones);
  cmd->add_option("--namespace", join->secret_namespace,
                  "Namespace of the federation for the Secret with the member's credentials")
      ->capture_default_str();
  cmd->add_flag("--rejoin", join->rejoin,
                "If the cluster is joined already, point it at this member anew (its credentials, "
                "address, labels and location) instead of failing");
  cmd->callback([join] { ExitProcess(RunJoin(*join)); });

  auto unjoin = std::make_shared<UnjoinFlags>();
  cmd = app.add_subcommand("unjoin", "Remove a member cluster from the federation");
  cmd->add_option("NAME", unjoin->name, "The member cluster's name")->required();
  AddFederationFlags(*cmd, unjoin->fed);
  cmd->add_flag("--cascade", unjoin->cascade,
                "Also delete what the federation created in the member (objects labelled " +
                    std::string(federation::kManagedByLabel) + "=" + federation::kManagedByValue +
                    ")");
  cmd->callback([unjoin] { ExitProcess(RunUnjoin(*unjoin)); });

  for (bool cordon : {true, false}) {
    auto flags = std::make_shared<CordonFlags>();
    cmd = app.add_subcommand(cordon ? "cordon" : "uncordon",
                             cordon ? "Mark a member cluster unschedulable: nothing new is placed "
                                      "there, nothing moves off it"
                                    : "Mark a member cluster schedulable again");
    cmd->add_option("NAME", flags->name, "The member cluster's name")->required();
    AddFederationFlags(*cmd, flags->fed);
    cmd->callback([flags, cordon] { ExitProcess(RunCordon(*flags, cordon)); });
  }

  auto drain = std::make_shared<std::pair<cluster::DrainOptions, FederationFlags>>();
  cmd = app.add_subcommand("drain",
                           "Cordon a member cluster and move what can move off it, "
                           "make-before-break; list what stays (StatefulSets)");
  cmd->add_option("NAME", drain->first.cluster, "The member cluster's name")->required();
  AddDurationOption(*cmd, "--timeout", &drain->first.timeout, "15m",
                    "How long to wait for everything movable to leave");
  AddFederationFlags(*cmd, drain->second);
  cmd->callback([drain] { ExitProcess(RunDrain(drain->first, drain->second)); });

  auto migrate = std::make_shared<MigrateFlags>();
  migrate->opts.ns = "default";
  cmd = app.add_subcommand("migrate",
                           "Move a coupled application whole to another cluster, "
                           "make-before-break, and report each step");
  cmd->add_option("APP", migrate->opts.app,
                  "The application (its workloads' label "
                  "federation.kubernetes.io/application)")
      ->required();
  cmd->add_option("--to", migrate->opts.to, "The cluster to move it to")->required();
  cmd->add_option("-n,--namespace", migrate->opts.ns, "The application's namespace")
      ->capture_default_str();
  cmd->add_flag("--dry-run", migrate->opts.dry_run, "Say what would be done, change nothing");
  AddDurationOption(*cmd, "--timeout", &migrate->opts.timeout, "15m",
                    "How long to wait for the move before withdrawing the request");
  AddFederationFlags(*cmd, migrate->fed);
  cmd->callback([migrate] { ExitProcess(RunMigrate(*migrate)); });

  auto dir = std::make_shared<std::string>();
  cmd = app.add_subcommand("install-kubectl-plugin",
                           "Link kubectl-flotilla to this binary so that `kubectl flotilla` works");
  cmd->add_option("--dir", *dir, "Directory for the link (default: this binary's directory)");
  cmd->callback([dir] { ExitProcess(InstallPlugin(*dir)); });
}

}  // namespace flotilla::cli
