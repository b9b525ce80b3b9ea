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

void AddClusterPlaceFlags(CLI::App& cmd, std::string& labels, std::string& provider,
                          std::string& region, std::vector<std::string>& zones) {
  cmd.add_option("--labels", labels, "Labels for the Cluster, as k=v,k2=v2");
  cmd.add_option("--provider", provider,
                 "The cluster's provider (spec.provider), matched by propagation policies");
  cmd.add_option("--region", region,
                 "The cluster's region (spec.region); default: its nodes' region label");
  cmd.add_option("--zones", zones,
                 "The cluster's zones (spec.zones), comma-separated; default: its nodes' zone "
                 "labels")
      ->delimiter(',');
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
