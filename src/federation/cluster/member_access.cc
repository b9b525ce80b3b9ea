// Reading a member's credentials and probing it (member_access.h).
#include "federation/cluster/member_access.h"

#include <yaml-cpp/yaml.h>

#include "api/views.h"
#include "base/base64.h"
#include "client/rest_client.h"

namespace flotilla::federation::cluster {

SecretRef SecretRefOf(const json::object& cluster) {
  api::ClusterView v(cluster);
  return {.ns = v.secret_namespace().empty() ? std::string(kSystemNamespace)
                                             : std::string(v.secret_namespace()),
          .name = std::string(v.secret_name())};
}

StatusOr<runtime::ObjectPtr> SecretOf(const json::object& cluster,
                                      const runtime::Informer& system_secrets,
                                      client::Client& fed) {
  auto [ns, name] = SecretRefOf(cluster);
  runtime::ObjectPtr secret;
  if (ns == kSystemNamespace) {
    secret = system_secrets.lister().Get(ns, name);
  } else {
    FLOTILLA_ASSIGN_OR_RETURN(json::object got, fed.Get(kSecrets, ns, name));
    secret = std::make_shared<const json::object>(std::move(got));
  }
  if (!secret) return Status::NotFound("secrets \"" + name + "\" not found in namespace " + ns);
  return secret;
}

runtime::EventHandler EnqueueClustersOfSecret(const runtime::Informer& clusters,
                                              runtime::WorkQueue& queue) {
  auto enqueue = [&clusters, &queue](const runtime::ObjectPtr& secret) {
    api::ObjectView changed(*secret);
    for (const runtime::ObjectPtr& c : clusters.lister().List()) {
      SecretRef ref = SecretRefOf(*c);
      if (ref.name == changed.name() && ref.ns == changed.ns()) queue.Add(runtime::ObjectKey(*c));
    }
  };
  return {.on_add = enqueue,
          .on_update = [enqueue](const runtime::ObjectPtr&,
                                 const runtime::ObjectPtr& s) { enqueue(s); },
          .on_delete = enqueue};
}

StatusOr<client::RestConfig> RestConfigFromSecret(const json::object& secret) {
  const json::value* data = Find(secret, std::string("data.") + kKubeconfigKey);
  if (data == nullptr || !data->is_string()) {
    return Status::BadRequest(std::string("the Secret has no data key \"") + kKubeconfigKey + "\"");
  }
  std::optional<std::string> text = Base64Decode(data->get_string());
  if (!text) return Status::BadRequest("data.kubeconfig of the Secret is not valid base64");
  FLOTILLA_ASSIGN_OR_RETURN(client::Kubeconfig kc,
                            client::ParseKubeconfig(*text, "the Secret's kubeconfig", "/"));
  return client::ResolveRestConfig(kc);
}

std::string SecretVersion(const json::object& secret) {
  api::ObjectView view(secret);
  return std::string(view.uid()) + "/" + std::string(view.resource_version());
}

client::RestConfig AgentRestConfig(const json::object& cluster,
                                   std::shared_ptr<client::H2Tunnel> tunnel) {
  client::RestConfig config;
  std::string_view address = api::ClusterView(cluster).server_address();
  config.server = address.starts_with("https://") ? std::string(address)
                                                  : "https://" + tunnel->name() + ".agent";
  config.tunnel = std::move(tunnel);
  return config;
}

StatusOr<std::string> SelfContainedKubeconfig(const std::string& cluster_name,
                                              const client::RestConfig& config) {
  FLOTILLA_ASSIGN_OR_RETURN(
      std::string text,
      client::RenderKubeconfig(cluster_name, config.server, config.ca_pem, cluster_name,
                               {config.token, config.client_cert_pem, config.client_key_pem}));
  if (!config.insecure && config.tls_server_name.empty()) return text;
  // RenderKubeconfig writes neither field; yaml-cpp throws on bad input,
  // which a document we just rendered is not, but stay exception-free.
  try {
    YAML::Node doc = YAML::Load(text);
    YAML::Node cluster = doc["clusters"][0]["cluster"];
    if (config.insecure) cluster["insecure-skip-tls-verify"] = true;
    if (!config.tls_server_name.empty()) cluster["tls-server-name"] = config.tls_server_name;
    YAML::Emitter out;
    out << doc;
    return std::string(out.c_str());
  } catch (const YAML::Exception& e) {
    return Status::Internal(std::string("rendering the member's kubeconfig: ") + e.what());
  }
}

StatusOr<std::unique_ptr<MemberProber>> MemberProber::Create(const client::RestConfig& config,
                                                             Duration timeout, Clock& clock) {
  client::RestOptions opts{.timeout = timeout, .max_retries = 0};
  opts.clock = &clock;
  FLOTILLA_ASSIGN_OR_RETURN(auto transport, client::NewRestTransport(config, opts));
  return std::make_unique<MemberProber>(std::move(transport));
}

}  // namespace flotilla::federation::cluster
