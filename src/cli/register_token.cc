// `flotilla register-token create|list|delete` (and `kubectl flotilla
// register-token ...`): the bootstrap tokens agents register with
// (apiserver/bootstrap_token.h, federation/cluster/registration.h), in the
// manner of `kubeadm token`. A token is a Secret kube-system/
// bootstrap-token-ID in the group system:bootstrappers:flotilla:agent,
// which may register clusters and nothing else; `create` prints it with the
// command to run beside the member.
#include <iomanip>
#include <iostream>

#include "apiserver/bootstrap_token.h"
#include "apiserver/certs.h"
#include "base/io.h"
#include "cli/commands.h"
#include "cli/duration.h"
#include "cli/federation_flags.h"
#include "federation/common/names.h"

namespace flotilla::cli {
namespace {

namespace api = apiserver;

constexpr char kAgentGroup[] = "system:bootstrappers:flotilla:agent";

struct RegisterTokenFlags {
  FederationFlags fed;
  Duration ttl = std::chrono::hours(24);
  std::string description;
  std::string name, server;      // for the printed command
  std::vector<std::string> ids;  // delete
};

// The pin of the federation's CA, from the kubeconfig's; "" without one.
std::string CaPin(const client::RestConfig& config) {
  if (config.ca_pem.empty()) return "";
  auto ca = api::certs::CertFromPem(config.ca_pem);
  return ca.ok() ? api::certs::PublicKeyPin(ca->get()) : "";
}

int RunCreate(const RegisterTokenFlags& flags) {
  auto config = FederationConfig(flags.fed);
  if (!config.ok()) return Fail(config.status());
  auto fed = FederationClient(flags.fed);
  if (!fed.ok()) return Fail(fed.status());
  api::BootstrapTokenSpec spec{.token = api::NewBootstrapToken(),
                               .description = flags.description,
                               .extra_groups = {kAgentGroup}};
  if (flags.ttl > Duration::zero()) spec.expiration = RealClock().Now() + flags.ttl;
  if (spec.description.empty()) spec.description = "registers a flotilla agent";
  auto created = (*fed)->Create(federation::kSecrets, std::string(api::kBootstrapTokenNamespace),
                                api::BootstrapTokenSecret(spec));
  if (!created.ok()) return Fail(created.status());
  std::string pin = CaPin(*config);
  std::string server = flags.server.empty() ? config->server : flags.server;
  std::cout << "Bootstrap token " << spec.token.String() << " ("
            << (spec.expiration ? "expires " + FormatRfc3339(*spec.expiration) : "never expires")
            << "). Beside the member cluster, run:\n\n"
            << "  flotilla agent --name " << (flags.name.empty() ? "NAME" : flags.name)
            << " --cluster-kubeconfig MEMBER-KUBECONFIG \\\n"
            << "    --federation-server " << server << " \\\n"
            << "    --token " << spec.token.String() << " \\\n"
            << "    --ca-cert-hash " << (pin.empty() ? "sha256:<the federation CA's pin>" : pin)
            << "\n\n"
            << "The agent keeps an identity of its own in ./flotilla-agent (--data-dir); "
               "the token is needed once.\n";
  if (pin.empty()) {
    std::cerr << "warning: the kubeconfig names no CA of the federation; give the agent the pin "
                 "of its CA certificate's public key\n";
  }
  return 0;
}

int RunList(const RegisterTokenFlags& flags) {
  auto fed = FederationClient(flags.fed);
  if (!fed.ok()) return Fail(fed.status());
  auto list = (*fed)->List(federation::kSecrets, std::string(api::kBootstrapTokenNamespace), {});
  if (!list.ok()) return Fail(list.status());
  TimePoint now = RealClock().Now();
  std::cout << std::left << std::setw(10) << "TOKEN-ID" << std::setw(30) << "EXPIRES"
            << "DESCRIPTION\n";
  for (const json::object& secret : list->items) {
    if (StringAt(secret, "type") != api::kBootstrapTokenSecretType) continue;
    std::string expires = api::BootstrapTokenData(secret, "expiration");
    std::optional<TimePoint> at = api::BootstrapTokenExpiration(secret);
    if (!at) {
      expires = "<never>";
    } else if (*at <= now) {
      expires += " (expired)";
    }
    std::cout << std::setw(10) << api::BootstrapTokenData(secret, "token-id") << std::setw(30)
              << expires << api::BootstrapTokenData(secret, "description") << "\n";
  }
  return 0;
}

int RunDelete(const RegisterTokenFlags& flags) {
  auto fed = FederationClient(flags.fed);
  if (!fed.ok()) return Fail(fed.status());
  int code = 0;
  for (const std::string& given : flags.ids) {
    // The id, or the whole token.
    std::string id = given.substr(0, given.find('.'));
    Status deleted =
        (*fed)->Delete(federation::kSecrets, std::string(api::kBootstrapTokenNamespace),
                       std::string(api::kBootstrapTokenSecretPrefix) + id, {});
    if (deleted.Is(Reason::kNotFound)) {
      code = Fail(Status::NotFound("bootstrap token \"" + id + "\" not found"));
    } else if (!deleted.ok()) {
      code = Fail(deleted);
    } else {
      std::cout << "bootstrap token \"" << id << "\" deleted\n";
    }
  }
  return code;
}

}  // namespace

void AddRegisterTokenCommand(CLI::App& app) {
  auto flags = std::make_shared<RegisterTokenFlags>();
  CLI::App* cmd = app.add_subcommand("register-token",
                                     "Bootstrap tokens that agents register member clusters with");
  cmd->require_subcommand(1);
  CLI::App* create = cmd->add_subcommand(
      "create", "Create a bootstrap token and print the agent command that registers with it");
  AddDurationOption(*create, "--ttl", &flags->ttl, "24h",
                    "How long the token registers agents (0: until deleted)", true);
  create->add_option("--description", flags->description, "Shown by register-token list");
  create->add_option("--name", flags->name, "The member's name, for the printed command");
  create->add_option("--federation-server", flags->server,
                     "The federation's URL as the agent reaches it, for the printed command "
                     "(default: the kubeconfig's)");
  AddFederationFlags(*create, flags->fed);
  create->callback([flags] { ExitProcess(RunCreate(*flags)); });
  CLI::App* list = cmd->add_subcommand("list", "List the bootstrap tokens");
  AddFederationFlags(*list, flags->fed);
  list->callback([flags] { ExitProcess(RunList(*flags)); });
  CLI::App* del = cmd->add_subcommand(
      "delete", "Delete bootstrap tokens: no agent registers with them any more");
  del->add_option("TOKEN", flags->ids, "Token ids (or whole tokens)")->required();
  AddFederationFlags(*del, flags->fed);
  del->callback([flags] { ExitProcess(RunDelete(*flags)); });
}

}  // namespace flotilla::cli
