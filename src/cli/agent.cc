// `flotilla agent`: beside a member the federation cannot dial, registers it
// and keeps a tunnel to the federation open (federation/cluster/agent.h,
// docs/federation.md "Members behind NAT: the agent").
#include "federation/cluster/agent.h"

#include <iostream>
#include <thread>

#include "base/log.h"
#include "cli/commands.h"
#include "cli/duration.h"
#include "cli/federation_flags.h"
#include "cli/signals.h"
#include "federation/cluster/join.h"

namespace flotilla::cli {
namespace {

namespace cluster = federation::cluster;

struct AgentFlags {
  FederationFlags fed;
  std::string cluster_kubeconfig, cluster_context, labels;
  cluster::AgentOptions opts;
};

int RunAgent(AgentFlags flags) {
  auto labels = cluster::ParseLabels(flags.labels);
  if (!labels.ok()) {
    return Fail(Status(labels.status().reason(), "--labels: " + labels.status().message()));
  }
  flags.opts.labels = *labels;
  auto fed = FederationConfig(flags.fed);
  if (!fed.ok()) return Fail(fed.status());
  flags.opts.federation = *fed;
  auto member_config = MemberConfig(flags.cluster_kubeconfig, flags.cluster_context);
  if (!member_config.ok()) return Fail(member_config.status());
  flags.opts.member = *member_config;
  BlockTerminationSignals();
  auto agent = cluster::Agent::Create(flags.opts);
  if (!agent.ok()) return Fail(agent.status());
  if (Status registered = (*agent)->Register(); !registered.ok()) return Fail(registered);
  spdlog::info("cluster {}: registered; connecting to {}", flags.opts.name, fed->server);
  Status ended;
  std::thread run([&] { ended = (*agent)->Run(); });
  std::thread signals([&] {
    WaitForTerminationSignal();
    (*agent)->Stop();
  });
  run.join();
  if (!ended.ok()) {
    // A refusal ends the agent: nothing waits for a signal any more.
    signals.detach();
    return Fail(ended);
  }
  signals.join();
  return 0;
}

}  // namespace

void AddAgentCommand(CLI::App& app) {
  auto flags = std::make_shared<AgentFlags>();
  auto* cmd = app.add_subcommand(
      "agent",
      "Connect a member cluster the federation cannot dial: run beside it, register it and keep "
      "a tunnel to the federation open");
  cmd->add_option("--name", flags->opts.name, "The member cluster's name in the federation")
      ->required();
  cmd->add_option("--federation-kubeconfig", flags->fed.kubeconfig,
                  "The federation's kubeconfig (default: $KUBECONFIG, else ~/.kube/config)");
  cmd->add_option("--federation-context", flags->fed.context,
                  "The context of the federation's kubeconfig to use");
  cmd->add_option("--cluster-kubeconfig", flags->cluster_kubeconfig,
                  "Kubeconfig of the member cluster; its credentials stay with the agent")
      ->required();
  cmd->add_option("--cluster-context", flags->cluster_context,
                  "Context of the member's kubeconfig (default: its current context)");
  AddClusterPlaceFlags(*cmd, flags->labels, flags->opts.provider, flags->opts.region,
                       flags->opts.zones);
  AddDurationOption(*cmd, "--silence-timeout", &flags->opts.silence_timeout, "30s",
                    "A tunnel that hears nothing from the federation (which PINGs it every "
                    "--tunnel-keepalive) for this long is closed and dialled again");
  AddDurationOption(*cmd, "--max-backoff", &flags->opts.max_backoff, "30s",
                    "The longest wait between attempts to dial the federation (from 1s, "
                    "doubling, jittered)");
  cmd->callback([flags] { std::exit(RunAgent(*flags)); });
}

}  // namespace flotilla::cli
