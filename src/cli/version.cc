#include "cli/version.h"

#include <iostream>

#include "cli/commands.h"

namespace flotilla::cli {

void AddVersionCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("version", "Print the Flotilla version");
  cmd->callback(
      [] { std::cout << "flotilla " << kVersion << " (Kubernetes API " << kKubeVersion << ")\n"; });
}

}  // namespace flotilla::cli
