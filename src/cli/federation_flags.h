// How the commands that talk to a running federation (join, cordon,
// status, dashboard, ...) find it: kubectl's --kubeconfig and --context,
// else $KUBECONFIG, else ~/.kube/config.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "client/client.h"
#include "client/kubeconfig.h"

namespace flotilla::cli {

struct FederationFlags {
  std::string kubeconfig;
  std::string context;
};

void AddFederationFlags(CLI::App& cmd, FederationFlags& flags);

// The federation's REST config, errors naming the kubeconfig.
StatusOr<client::RestConfig> FederationConfig(const FederationFlags& flags);
StatusOr<std::unique_ptr<client::Client>> FederationClient(const FederationFlags& flags);

// --labels, --provider, --region and --zones: what the Cluster of a member
// (join, agent) carries, which propagation policies match.
void AddClusterPlaceFlags(CLI::App& cmd, std::string& labels, std::string& provider,
                          std::string& region, std::vector<std::string>& zones);

// A member's REST config from --cluster-kubeconfig FILE (and
// --cluster-context), errors naming the flag.
StatusOr<client::RestConfig> MemberConfig(const std::string& kubeconfig,
                                          const std::string& context);

// Prints "error: MESSAGE" to stderr; returns the exit code 1.
int Fail(const Status& s);

}  // namespace flotilla::cli
