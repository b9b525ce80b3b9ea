// `flotilla agent`: beside a member the federation cannot dial, registers it
// and keeps a tunnel to the federation open (federation/cluster/agent.h,
// docs/federation.md "Members behind NAT: the agent").
#include "federation/cluster/agent.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <thread>

#include "apiserver/meta.h"
#include "base/file.h"
#include "base/io.h"
#include "base/log.h"
#include "cli/commands.h"
#include "cli/duration.h"
#include "cli/federation_flags.h"
#include "cli/signals.h"
#include "federation/cluster/agent_claim.h"
#include "federation/cluster/join.h"
#include "federation/cluster/registration.h"

namespace flotilla::cli {
namespace {

namespace cluster = federation::cluster;

struct AgentFlags {
  FederationFlags fed;
  std::string cluster_kubeconfig, cluster_context, labels;
  std::string data_dir = "flotilla-agent";
  std::string log_level = "info";
  cluster::BootstrapOptions boot;
  cluster::AgentOptions opts;
};

// How the agent reaches the federation, and as whom.
struct FederationAccess {
  client::RestConfig config;
  std::string identity;    // the kubeconfig of the agent's own identity, if it has one
  bool registers = false;  // whether the agent creates its Cluster itself
};

// The identity the agent keeps in DATA_DIR/NAME/kubeconfig; else a new one
// registered with the bootstrap token (and kept there); else the
// federation kubeconfig's credentials, with which it registers its Cluster.
StatusOr<FederationAccess> ResolveFederationAccess(const AgentFlags& flags) {
  const std::string& name = flags.opts.name;
  FederationAccess access;
  access.identity = (std::filesystem::path(flags.data_dir) / name / "kubeconfig").string();
  if (std::filesystem::exists(access.identity)) {
    client::KubeconfigLoadOptions load;
    load.explicit_path = access.identity;
    FLOTILLA_ASSIGN_OR_RETURN(access.config, client::LoadRestConfig(load));
    spdlog::info("cluster {}: connecting as the identity kept in {}{}", name, access.identity,
                 flags.boot.token.empty() ? "" : " (--token is not needed again)");
    return access;
  }
  if (!flags.boot.token.empty()) {
    if (flags.boot.server.empty() || flags.boot.ca_cert_hash.empty()) {
      return Status::BadRequest(
          "--token needs --federation-server and --ca-cert-hash (kubectl flotilla "
          "register-token create prints the command)");
    }
    FLOTILLA_ASSIGN_OR_RETURN(access.config, cluster::RegisterWithToken(flags.opts, flags.boot));
    FLOTILLA_RETURN_IF_ERROR(client::WriteKubeconfig(
        access.identity, "flotilla", access.config.server, access.config.ca_pem,
        cluster::AgentServiceAccount(name), {.token = access.config.token}));
    ::chmod(std::filesystem::path(access.identity).parent_path().c_str(), 0700);
    spdlog::info(
        "cluster {}: registered with bootstrap token {}; the agent's identity is kept in {}", name,
        flags.boot.token.substr(0, flags.boot.token.find('.')), access.identity);
    return access;
  }
  access.identity.clear();
  FLOTILLA_ASSIGN_OR_RETURN(access.config, FederationConfig(flags.fed));
  access.registers = true;
  return access;
}

// This agent's instance id (AgentOptions::instance), kept in
// DATA_DIR/NAME/instance: made at the first start, the same after a
// restart, so that the federation lets the agent back in at once. The
// directory is locked (DATA_DIR/NAME/lock, flock) while the agent runs:
// two agents with one data directory would be one instance to the
// federation, and the second is refused here. The lock goes with the
// process, however it ends.
StatusOr<std::string> KeptInstance(const AgentFlags& flags) {
  const std::filesystem::path dir = std::filesystem::path(flags.data_dir) / flags.opts.name;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::Internal("creating " + dir.string() + ": " + ec.message());
  ::chmod(dir.c_str(), 0700);
  const std::string lock = (dir / "lock").string();
  int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Internal("opening " + lock + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return Status::Conflict("another agent of cluster " + flags.opts.name +
                            " runs with the data directory " + flags.data_dir +
                            " (each agent needs its own --data-dir: the federation would take "
                            "two with one for the same agent)");
  }
  // `fd` stays open, and locked, until the process ends.
  const std::string path = (dir / "instance").string();
  if (auto kept = ReadFile(path); kept.ok()) {
    std::string id = *kept;
    while (!id.empty() && std::isspace(static_cast<unsigned char>(id.back()))) id.pop_back();
    if (!id.empty() && federation::cluster::ValidAgentInstance(id)) return id;
    if (!id.empty()) {
      return Status::BadRequest(path + " holds \"" + id +
                                "\", which is no agent instance id (up to 128 letters, digits, "
                                "'-', '_' and '.'); remove it and the agent makes a new one");
    }
  }
  std::string made = apiserver::NewUid();
  FLOTILLA_RETURN_IF_ERROR(WriteFileAtomic(path, made + "\n", 0600));
  return made;
}

int RunAgent(AgentFlags flags) {
  // The log on stderr; stdout has the one line that says the agent is
  // connected (what `flotilla up` waits for), and nothing more to fill a
  // pipe nobody reads.
  InitLogging(flags.log_level);
  auto labels = cluster::ParseLabels(flags.labels);
  if (!labels.ok()) {
    return Fail(Status(labels.status().reason(), "--labels: " + labels.status().message()));
  }
  flags.opts.labels = *labels;
  auto member_config = MemberConfig(flags.cluster_kubeconfig, flags.cluster_context);
  if (!member_config.ok()) return Fail(member_config.status());
  flags.opts.member = *member_config;
  auto instance = KeptInstance(flags);
  if (!instance.ok()) return Fail(instance.status());
  flags.opts.instance = *instance;
  auto fed = ResolveFederationAccess(flags);
  if (!fed.ok()) return Fail(fed.status());
  flags.opts.federation = fed->config;
  if (!fed->identity.empty()) {
    // The agent's own identity: a renewed token is kept in its place.
    flags.opts.on_token_renewed = [identity = fed->identity, config = fed->config,
                                   name = flags.opts.name](const std::string& token) {
      Status kept = client::WriteKubeconfig(identity, "flotilla", config.server, config.ca_pem,
                                            cluster::AgentServiceAccount(name), {.token = token});
      if (!kept.ok())
        spdlog::error("cluster {}: keeping the renewed token: {}", name, kept.ToString());
    };
  }
  BlockTerminationSignals();
  auto said = std::make_shared<std::once_flag>();
  flags.opts.on_connected = [said, name = flags.opts.name](const std::string& server) {
    std::call_once(*said, [&] {
      std::cout << "Flotilla agent of cluster " << name << ": the tunnel to the federation is up ("
                << server << ")" << std::endl;
    });
  };
  auto agent = cluster::Agent::Create(flags.opts);
  if (!agent.ok()) return Fail(agent.status());
  if (fed->registers) {
    if (Status registered = (*agent)->Register(); !registered.ok()) return Fail(registered);
    spdlog::info("cluster {}: registered", flags.opts.name);
  }
  spdlog::info("cluster {}: connecting to {}", flags.opts.name, fed->config.server);
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
    if (ended.Is(Reason::kUnauthorized) && !fed->identity.empty()) {
      return Fail(Status(ended.reason(),
                         ended.message() + "; the agent's identity in " + fed->identity +
                             " is no longer valid (revoked, or its Cluster deleted): remove " +
                             std::filesystem::path(fed->identity).parent_path().string() +
                             " and register again with a new bootstrap token"));
    }
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
  cmd->add_option("--federation-server", flags->boot.server,
                  "The federation's URL, to register with --token");
  cmd->add_option("--token", flags->boot.token,
                  "A bootstrap token (kubectl flotilla register-token create) to register "
                  "with, once: the agent then keeps an identity of its own in --data-dir");
  cmd->add_option("--ca-cert-hash", flags->boot.ca_cert_hash,
                  "sha256:HEX, the pin of the federation CA's public key: the CA the "
                  "federation presents is trusted only if it matches");
  cmd->add_option("--data-dir", flags->data_dir,
                  "Where the agent keeps its instance id and the identity it registered with "
                  "(DIR/NAME/kubeconfig); restarted with it, it reconnects at once and without "
                  "a token. Each agent needs its own")
      ->capture_default_str();
  cmd->add_option("--federation-kubeconfig", flags->fed.kubeconfig,
                  "Without --token or a kept identity: the federation's kubeconfig, whose "
                  "credentials register the Cluster and open the tunnel (default: $KUBECONFIG, "
                  "else ~/.kube/config)");
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
  cmd->add_option("--log-level", flags->log_level, "trace, debug, info, warn or error")
      ->capture_default_str();
  cmd->callback([flags] { ExitProcess(RunAgent(*flags)); });
}

}  // namespace flotilla::cli
