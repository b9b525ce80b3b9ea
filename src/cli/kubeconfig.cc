// `flotilla kubeconfig NAME... | --all` (and `kubectl flotilla kubeconfig`):
// a kubectl context per member cluster, "flotilla-NAME", whose server is the
// federation's cluster proxy for NAME (federation/cluster/proxy.h) and whose
// user is the federation context's own. So `kubectl --context flotilla-NAME
// get pods` reads member NAME with only the federation's credentials, as
// the federation user impersonated there. The contexts go into the
// kubeconfig file `kubectl config set-context` would write; nothing else
// in it changes.
#include <iostream>

#include "base/io.h"
#include "cli/commands.h"
#include "cli/federation_flags.h"
#include "client/rest_client.h"
#include "federation/common/names.h"

namespace flotilla::cli {
namespace {

struct KubeconfigFlags {
  FederationFlags fed;
  std::vector<std::string> names;
  bool all = false;
  std::string prefix = "flotilla-";
};

// The members named, each checked to exist, or every member with --all.
StatusOr<std::vector<std::string>> MemberNames(const KubeconfigFlags& flags,
                                               const client::Kubeconfig& config,
                                               const std::string& context) {
  FLOTILLA_ASSIGN_OR_RETURN(client::RestConfig rest, client::ResolveRestConfig(config, context));
  FLOTILLA_ASSIGN_OR_RETURN(auto fed, client::NewRestClient(rest));
  std::vector<std::string> names;
  if (flags.all) {
    FLOTILLA_ASSIGN_OR_RETURN(client::ObjectList list,
                              fed->List(federation::kClusters, "", client::ListOptions{}));
    for (const json::object& c : list.items) names.push_back(StringAt(c, "metadata.name"));
    return names;
  }
  for (const std::string& name : flags.names) {
    FLOTILLA_RETURN_IF_ERROR(fed->Get(federation::kClusters, "", name).status());
    names.push_back(name);
  }
  return names;
}

int RunKubeconfig(const KubeconfigFlags& flags) {
  if (flags.all == !flags.names.empty()) {
    return Fail(Status::BadRequest("name the member clusters, or pass --all"));
  }
  auto load = client::KubeconfigLoadOptions::FromEnvironment();
  load.explicit_path = flags.fed.kubeconfig;
  auto config = client::LoadKubeconfig(load);
  if (!config.ok()) return Fail(config.status());
  std::string context_name =
      flags.fed.context.empty() ? config->current_context : flags.fed.context;
  auto context = config->contexts.find(context_name);
  if (context == config->contexts.end()) {
    return Fail(
        Status::BadRequest("the federation's kubeconfig has no context \"" + context_name + "\""));
  }
  auto cluster = config->clusters.find(context->second.cluster);
  if (cluster == config->clusters.end()) {
    return Fail(Status::BadRequest("the federation's kubeconfig has no cluster \"" +
                                   context->second.cluster + "\""));
  }
  auto names = MemberNames(flags, *config, context_name);
  if (!names.ok()) return Fail(names.status());
  std::string server = cluster->second.server;
  while (!server.empty() && server.back() == '/') server.pop_back();
  std::vector<client::KubeconfigContextEntry> entries;
  for (const std::string& name : *names) {
    client::KubeconfigContextEntry e{flags.prefix + name, cluster->second, context->second.user,
                                     context->second.ns};
    e.cluster.server = server + "/apis/federation/v1beta1/clusters/" + name + "/proxy";
    entries.push_back(std::move(e));
  }
  std::string path = client::KubeconfigFileToWrite(load);
  if (path.empty()) return Fail(Status::BadRequest("no kubeconfig file to write: set $HOME"));
  if (Status s = client::UpsertKubeconfigContexts(path, entries); !s.ok()) return Fail(s);
  for (const auto& e : entries) {
    std::cout << "Context \"" << e.name << "\" set in " << path << ": " << e.cluster.server << "\n";
  }
  if (!entries.empty()) {
    std::cout << "Try: kubectl --context " << entries.front().name << " get pods -A\n";
  }
  return 0;
}

}  // namespace

void AddKubeconfigCommand(CLI::App& app) {
  auto flags = std::make_shared<KubeconfigFlags>();
  CLI::App* cmd = app.add_subcommand(
      "kubeconfig",
      "Add a kubectl context per member cluster (flotilla-NAME) that reaches it through the "
      "federation's cluster proxy, as the federation's user");
  cmd->add_option("NAME", flags->names, "Member clusters (their Cluster names)");
  cmd->add_flag("--all", flags->all, "Every member cluster of the federation");
  cmd->add_option("--prefix", flags->prefix, "What the contexts' names start with")
      ->capture_default_str();
  AddFederationFlags(*cmd, flags->fed);
  cmd->callback([flags] { ExitProcess(RunKubeconfig(*flags)); });
}

}  // namespace flotilla::cli
