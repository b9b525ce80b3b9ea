// leader_candidate: one leader-election candidate as a process, for the
// end-to-end test of leader election between processes. It campaigns for a
// Lease through a kubeconfig and prints one line per transition:
//   "leader <identity>"   the observed holder changed
//   "leading <identity>"  this process acquired the lease
//   "stopped <identity>"  this process stopped leading
// SIGTERM or SIGINT stops it (releasing the lease if it leads).
//
// Usage: leader_candidate --kubeconfig PATH --identity ID [--namespace NS]
//          [--name NAME] [--lease-duration-ms N] [--renew-deadline-ms N]
//          [--retry-period-ms N]
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "base/io.h"
#include "base/log.h"
#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "runtime/leader_election.h"

namespace {

void Print(const std::string& what, const std::string& who) {
  std::printf("%s %s\n", what.c_str(), who.c_str());
  std::fflush(stdout);
}

// --flag value pairs.
std::map<std::string, std::string> ParseFlags(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  for (int i = 1; i + 1 < argc; i += 2) flags[argv[i]] = argv[i + 1];
  return flags;
}

std::chrono::milliseconds Millis(const std::map<std::string, std::string>& flags,
                                 const std::string& name, int fallback) {
  auto it = flags.find(name);
  return std::chrono::milliseconds(it == flags.end() ? fallback : std::atoi(it->second.c_str()));
}

}  // namespace

int main(int argc, char** argv) {
  using namespace flotilla;
  // Blocked before any thread starts, so that only sigwait() sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  InitLogging("warn");
  auto flags = ParseFlags(argc, argv);
  client::KubeconfigLoadOptions load;
  load.explicit_path = flags["--kubeconfig"];
  auto config = client::LoadRestConfig(load);
  if (!config.ok()) {
    std::fprintf(stderr, "kubeconfig: %s\n", config.status().ToString().c_str());
    return 1;
  }
  auto rest = client::NewRestClient(*config);
  if (!rest.ok()) {
    std::fprintf(stderr, "client: %s\n", rest.status().ToString().c_str());
    return 1;
  }
  runtime::LeaderElectionConfig election;
  election.identity = flags["--identity"];
  election.lease_namespace = flags.count("--namespace") ? flags["--namespace"] : "default";
  election.lease_name = flags.count("--name") ? flags["--name"] : "leader-candidate";
  election.lease_duration = Millis(flags, "--lease-duration-ms", 15000);
  election.renew_deadline = Millis(flags, "--renew-deadline-ms", 10000);
  election.retry_period = Millis(flags, "--retry-period-ms", 2000);
  const std::string me = election.identity;
  runtime::LeaderCallbacks callbacks{[me] { Print("leading", me); }, [me] { Print("stopped", me); },
                                     [](const std::string& id) { Print("leader", id); }};
  auto elector = runtime::LeaderElector::Create(**rest, RealClock(), election, callbacks);
  if (!elector.ok()) {
    std::fprintf(stderr, "leader election: %s\n", elector.status().ToString().c_str());
    return 1;
  }
  (*elector)->Start();
  int sig = 0;
  sigwait(&stop_signals, &sig);
  (*elector)->Stop();
  ExitProcess(0);
}
