#include "cli/federation_flags.h"

#include <iostream>

#include "client/rest_client.h"

namespace flotilla::cli {

void AddFederationFlags(CLI::App& cmd, FederationFlags& flags) {
  cmd.add_option("--kubeconfig", flags.kubeconfig,
                 "The federation's kubeconfig (default: $KUBECONFIG, else ~/.kube/config)");
  cmd.add_option("--context", flags.context, "The context of that kubeconfig to use");
}

StatusOr<client::RestConfig> FederationConfig(const FederationFlags& flags) {
  auto load = client::KubeconfigLoadOptions::FromEnvironment();
  load.explicit_path = flags.kubeconfig;
  load.context = flags.context;
  auto config = client::LoadRestConfig(load);
  if (!config.ok()) {
    return Status(config.status().reason(),
                  "the federation's kubeconfig: " + config.status().message());
  }
  return config;
}

StatusOr<std::unique_ptr<client::Client>> FederationClient(const FederationFlags& flags) {
  FLOTILLA_ASSIGN_OR_RETURN(client::RestConfig config, FederationConfig(flags));
  return client::NewRestClient(config);
}

StatusOr<client::RestConfig> MemberConfig(const std::string& kubeconfig,
                                          const std::string& context) {
  client::KubeconfigLoadOptions load;
  load.explicit_path = kubeconfig;
  load.context = context;
  auto config = client::LoadRestConfig(load);
  if (!config.ok()) {
    return Status(config.status().reason(),
                  "--cluster-kubeconfig " + kubeconfig + ": " + config.status().message());
  }
  return config;
}

int Fail(const Status& s) {
  std::cerr << "error: " << s.message() << "\n";
  return 1;
}

}  // namespace flotilla::cli
