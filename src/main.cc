// flotilla: one binary, subcommands (DESIGN §1). This file only dispatches.
#include <CLI/CLI.hpp>
#include <string_view>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Flotilla: Kubernetes cluster federation"};
  // Run as the kubectl plugin (a kubectl-flotilla link on PATH), kubectl
  // passes what follows `kubectl flotilla`.
  std::string_view self = argv[0];
  if (self.substr(self.rfind('/') + 1) == "kubectl-flotilla") app.name("kubectl flotilla");
  app.require_subcommand(1);
  flotilla::cli::AddVersionCommand(app);
  flotilla::cli::AddPlanCommand(app);
  flotilla::cli::AddInterpretCommand(app);
  flotilla::cli::AddServerCommand(app);
  flotilla::cli::AddMemberCommand(app);
  flotilla::cli::AddJoinCommands(app);
  flotilla::cli::AddAgentCommand(app);
  flotilla::cli::AddRegisterTokenCommand(app);
  flotilla::cli::AddStatusCommands(app);
  flotilla::cli::AddDashboardCommand(app);
  flotilla::cli::AddKubeconfigCommand(app);
  flotilla::cli::AddUpCommand(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
