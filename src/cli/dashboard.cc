// `flotilla dashboard` (also `kubectl flotilla dashboard`): the federation's
// web page on loopback, read with the user's kubeconfig
// (dashboard/dashboard.h, docs/dashboard.md).
#include "dashboard/dashboard.h"

#include <iostream>

#include "base/io.h"
#include "cli/commands.h"
#include "cli/federation_flags.h"
#include "cli/signals.h"
#include "federation/controllers.h"

namespace flotilla::cli {
namespace {

struct DashboardFlags {
  FederationFlags fed;
  int port = 8080;
};

int RunDashboard(const DashboardFlags& flags) {
  auto config = FederationConfig(flags.fed);
  if (!config.ok()) return Fail(config.status());
  BlockTerminationSignals();
  std::vector<dashboard::DashboardWorkload> workloads;
  for (const federation::ListedWorkload& w : federation::ListedWorkloads()) {
    const client::ResourceRef& r = w.resource;
    workloads.push_back(
        {.kind = w.kind,
         .path = (r.group.empty() ? "/api/" : "/apis/") + r.ApiVersion() + "/" + r.resource,
         .breakdown_annotation = w.breakdown_annotation});
  }
  auto dashboard = dashboard::Dashboard::Start(
      {.port = flags.port, .federation = *config, .workloads = std::move(workloads)});
  if (!dashboard.ok()) return Fail(dashboard.status());
  std::cout << "Serving the federation's dashboard at http://127.0.0.1:" << (*dashboard)->port()
            << "/ (Ctrl-C to stop)" << std::endl;
  WaitForTerminationSignal();
  (*dashboard)->Stop();
  return 0;
}

}  // namespace

void AddDashboardCommand(CLI::App& app) {
  auto flags = std::make_shared<DashboardFlags>();
  auto* cmd = app.add_subcommand(
      "dashboard",
      "Serve a live web page over the federation on 127.0.0.1, read with your kubeconfig");
  cmd->add_option("--port", flags->port, "The local port (0 picks a free one)")
      ->capture_default_str();
  AddFederationFlags(*cmd, flags->fed);
  cmd->callback([flags] { ExitProcess(RunDashboard(*flags)); });
}

}  // namespace flotilla::cli
