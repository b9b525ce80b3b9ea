// Subcommands of the flotilla binary, one file each. Each Add*Command
// registers its subcommand, flags and callback on `app`.
#pragma once

#include <CLI/CLI.hpp>

namespace flotilla::cli {

void AddVersionCommand(CLI::App& app);
void AddPlanCommand(CLI::App& app);
// interpret: a ResourceInterpreterCustomization's scripts, offline.
void AddInterpretCommand(CLI::App& app);
void AddServerCommand(CLI::App& app);
// member and its ctl subcommand (member.cc, member_ctl.cc).
void AddMemberCommand(CLI::App& app);
void AddMemberCtlCommand(CLI::App& member);
// join, unjoin, cordon, uncordon and install-kubectl-plugin (join.cc).
void AddJoinCommands(CLI::App& app);
// agent: a member the federation cannot dial, connected through a tunnel
// it opens (agent.cc).
void AddAgentCommand(CLI::App& app);
// register-token create|list|delete: the bootstrap tokens agents register
// with (register_token.cc).
void AddRegisterTokenCommand(CLI::App& app);
// status and clusters: the federation at a glance; explain: why an object
// is where it is (status.cc).
void AddStatusCommands(CLI::App& app);
// dashboard: the federation's web page on loopback (dashboard.cc).
void AddDashboardCommand(CLI::App& app);
// kubeconfig: kubectl contexts that reach members through the federation's
// cluster proxy (kubeconfig.cc).
void AddKubeconfigCommand(CLI::App& app);
// up: a federation with simulated members, joined (up.cc).
void AddUpCommand(CLI::App& app);

}  // namespace flotilla::cli
