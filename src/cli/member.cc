// `flotilla member`: one or many simulated member clusters in this process
// (docs/member.md, "Running members"). Each gets its own port, data dir and
// kubeconfig; the process runs until SIGINT or SIGTERM.

#include <iostream>
#include <sstream>
#include <thread>

#include "base/descriptors.h"
#include "base/io.h"
#include "base/log.h"
#include "cli/commands.h"
#include "cli/duration.h"
#include "cli/signals.h"
#include "member/cluster.h"
#include "member/services/load_balancer.h"

namespace flotilla::cli {
namespace {

struct MemberFlags {
  member::MemberOptions member;
  int clusters = 1;
  std::string zones;
  std::string pod_startup = "500ms";
  std::string hpa_downscale_stabilization = "5m";
  std::string hpa_sync_period = "15s";
  std::vector<std::string> stub_domains;  // DOMAIN=HOST:PORT
  std::string log_level = "info";
  std::string kube_version;  // "": today's
};

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// The options of member `i` (0-based) of `flags.clusters`.
member::MemberOptions OptionsFor(const MemberFlags& flags, int i) {
  member::MemberOptions opts = flags.member;
  if (flags.clusters == 1) return opts;
  opts.name = flags.member.name + "-" + std::to_string(i + 1);
  opts.data_dir = flags.member.data_dir + "/" + opts.name;
  if (flags.member.port != 0) opts.port = flags.member.port + i;
  if (!flags.member.dns.address.empty() && i > 0) {
    // DNS on the next ports too (port 0: each picks its own).
    auto hp = dns::SplitHostPort(flags.member.dns.address);
    if (hp.ok() && hp->second != 0) {
      opts.dns.address = hp->first + ":" + std::to_string(hp->second + i);
    }
  }
  // Load-balancer addresses unique across the members (DNS answers with them).
  if (auto range = member::AddressPool::Nth(flags.member.simulation.lb_cidr, i)) {
    opts.simulation.lb_cidr = *range;
  }
  return opts;
}

int RunMembers(MemberFlags& flags) {
  InitLogging(flags.log_level);
  RaiseDescriptorLimit();
  BlockTerminationSignals();
  auto startup = ParseGoDuration(flags.pod_startup);
  auto stabilization = ParseGoDuration(flags.hpa_downscale_stabilization);
  auto hpa_period = ParseGoDuration(flags.hpa_sync_period);
  if (!startup || !stabilization || !hpa_period || *hpa_period <= Duration::zero()) {
    std::cerr << "error: --pod-startup, --hpa-downscale-stabilization and --hpa-sync-period take "
                 "durations such as 500ms, 30s or 5m (the period more than 0)\n";
    return 2;
  }
  if (!flags.kube_version.empty()) {
    flags.member.kube_version = member::FindKubeVersion(flags.kube_version);
    if (flags.member.kube_version == nullptr) {
      std::cerr << "error: --kube-version takes one of";
      for (const std::string& v : member::KubeVersionNames()) std::cerr << " " << v;
      std::cerr << ", not " << flags.kube_version << "\n";
      return 2;
    }
  }
  auto& sim = flags.member.simulation;
  sim.pod_startup = *startup;
  sim.hpa_downscale_stabilization = *stabilization;
  sim.hpa_sync_period = *hpa_period;
  sim.zones = SplitList(flags.zones);
  for (const std::string& stub : flags.stub_domains) {
    size_t eq = stub.find('=');
    if (eq == std::string::npos || eq == 0 || !dns::SplitHostPort(stub.substr(eq + 1)).ok()) {
      std::cerr << "error: --stub-domain takes DOMAIN=HOST:PORT, not " << stub << "\n";
      return 2;
    }
    flags.member.dns.stub_domains.push_back({stub.substr(0, eq), stub.substr(eq + 1)});
  }
  std::vector<std::unique_ptr<member::MemberCluster>> members;
  for (int i = 0; i < flags.clusters; ++i) {
    auto m = member::MemberCluster::Start(OptionsFor(flags, i));
    if (!m.ok()) {
      spdlog::error("starting member {}: {}", OptionsFor(flags, i).name, m.status().ToString());
      for (auto& started : members) started->Stop();
      return 1;
    }
    if ((*m)->dns_port() != 0) {
      // Before the ready line: `flotilla up` reads it once it sees that.
      std::cout << "Flotilla member " << (*m)->name() << " serving DNS for "
                << flags.member.dns.cluster_domain << " (UDP and TCP port " << (*m)->dns_port()
                << ")\n";
    }
    std::cout << "Flotilla member " << (*m)->name() << " ready at " << (*m)->url()
              << " (kubeconfig " << (*m)->kubeconfig_path() << ")\n"
              << std::flush;
    members.push_back(std::move(*m));
  }
  int sig = WaitForTerminationSignal();
  spdlog::info("received signal {}, stopping {} member(s)", sig, members.size());
  // In parallel: each member takes about a second to leave its watches.
  std::vector<std::thread> stopping;
  for (auto& m : members) stopping.emplace_back([&m] { m->Stop(); });
  for (auto& t : stopping) t.join();
  members.clear();
  return 0;
}

void AddSimulationFlags(CLI::App* cmd, MemberFlags& f) {
  auto& sim = f.member.simulation;
  cmd->add_option("--nodes", sim.nodes, "Simulated nodes per member")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str()
      ->group("Nodes");
  cmd->add_option("--node-cpu", sim.node_cpu, "CPU capacity and allocatable of each node")
      ->capture_default_str()
      ->group("Nodes");
  cmd->add_option("--node-memory", sim.node_memory, "Memory of each node")
      ->capture_default_str()
      ->group("Nodes");
  cmd->add_option("--node-pods", sim.node_pods, "Pods each node may run")
      ->check(CLI::PositiveNumber)
      ->capture_default_str()
      ->group("Nodes");
  cmd->add_option("--node-lease-duration-seconds", sim.node_lease_duration_seconds,
                  "How long each node's Lease lasts; the node renews it every quarter of this "
                  "(the kubelet's nodeLeaseDurationSeconds)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str()
      ->group("Nodes");
  cmd->add_option("--zones", f.zones, "Comma-separated zones, given to nodes round-robin")
      ->group("Nodes");
  cmd->add_option("--region", sim.region, "Region label of every node")->group("Nodes");
  cmd->add_option("--pod-startup", f.pod_startup, "Time from binding to Running and Ready")
      ->capture_default_str()
      ->group("Simulation");
  cmd->add_option("--hpa-downscale-stabilization", f.hpa_downscale_stabilization,
                  "HPA scale-down stabilization window")
      ->capture_default_str()
      ->group("Simulation");
  cmd->add_option("--hpa-sync-period", f.hpa_sync_period,
                  "How often the HPA controller syncs every HPA (kube-controller-manager's "
                  "--horizontal-pod-autoscaler-sync-period)")
      ->capture_default_str()
      ->group("Simulation");
  cmd->add_option("--lb-cidr", sim.lb_cidr,
                  "Addresses for LoadBalancer services (with --clusters N: the next ranges of "
                  "the same size for the next members)")
      ->capture_default_str()
      ->group("Simulation");
  auto& dns = f.member.dns;
  cmd->add_option("--dns-address", dns.address,
                  "HOST:PORT of the cluster's DNS (kube-dns's names) over UDP and TCP; empty: "
                  "none (with --clusters N: PORT .. PORT+N-1)")
      ->group("DNS");
  cmd->add_option("--cluster-domain", dns.cluster_domain, "The cluster's DNS domain")
      ->capture_default_str()
      ->group("DNS");
  cmd->add_option("--stub-domain", f.stub_domains,
                  "DOMAIN=HOST:PORT: queries under DOMAIN go to that DNS server (repeatable)")
      ->group("DNS");
}

}  // namespace

void AddMemberCommand(CLI::App& app) {
  auto flags = std::make_shared<MemberFlags>();
  auto* cmd = app.add_subcommand("member", "Run simulated member clusters");
  auto& m = flags->member;
  cmd->add_option("--name", m.name, "Member name (with --clusters N: NAME-1 .. NAME-N)")
      ->capture_default_str()
      ->group("Members");
  cmd->add_option("--clusters", flags->clusters, "Simulated clusters in this process")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str()
      ->group("Members");
  cmd->add_option("--data-dir", m.data_dir,
                  "State, certificates and kubeconfig (with --clusters N: DIR/NAME-i/)")
      ->capture_default_str()
      ->group("Storage");
  cmd->add_option("--storage", m.storage, "Storage backend: memory or sqlite")
      ->check(CLI::IsMember({"sqlite", "memory"}))
      ->capture_default_str()
      ->group("Storage");
  cmd->add_option("--bind-address", m.bind_address, "Address to listen on")
      ->capture_default_str()
      ->group("Serving");
  m.port = 6443;
  cmd->add_option("--secure-port", m.port,
                  "HTTPS port (0 picks free ports; with --clusters N: PORT .. PORT+N-1)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str()
      ->group("Serving");
  AddDurationOption(*cmd, "--event-ttl", &m.event_ttl, "1h",
                    "How long an Event is kept after its last write (kube-apiserver's "
                    "--event-ttl; 0: for ever)",
                    /*allow_zero=*/true)
      ->group("Storage");
  std::string versions;
  for (const std::string& v : member::KubeVersionNames())
    versions += (versions.empty() ? "" : ", ") + v;
  cmd->add_option("--kube-version", flags->kube_version,
                  "Serve and write objects as a real kube-apiserver of this version does (" +
                      versions +
                      "; docs/member.md): its API versions only, the fields it does not know "
                      "dropped, templates with a null creationTimestamp")
      ->group("Serving");
  AddSimulationFlags(cmd, *flags);
  cmd->add_option("--log-level", flags->log_level, "trace, debug, info, warn or error")
      ->capture_default_str()
      ->group("Logging");
  AddMemberCtlCommand(*cmd);
  cmd->callback([flags] { ExitProcess(RunMembers(*flags)); });
}

}  // namespace flotilla::cli
