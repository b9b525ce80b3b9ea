// flotilla: one binary, subcommands (DESIGN §1). This file only dispatches.
#include <CLI/CLI.hpp>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Flotilla: Kubernetes cluster federation"};
  app.require_subcommand(1);
  flotilla::cli::AddVersionCommand(app);
  flotilla::cli::AddPlanCommand(app);
  flotilla::cli::AddServerCommand(app);
  flotilla::cli::AddMemberCommand(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
