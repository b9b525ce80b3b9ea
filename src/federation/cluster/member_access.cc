// Reading a member's credentials and probing it (member_access.h).
#include "federation/cluster/member_access.h"

#include <yaml-cpp/yaml.h>

#include "base/base64.h"
#include "client/connection.h"
#include "client/connection_pool.h"
#include "client/endpoint.h"

namespace flotilla::federation::cluster {
namespace {

namespace http = boost::beast::http;

// Probes reuse one kept-alive connection: a TLS handshake per probe was a
// fifth of the federation's CPU with 100 members (docs/benchmarks.md).
constexpr size_t kIdleConnections = 1;
// Longer than any probe period, shorter than the server's idle timeout.
constexpr Duration kIdleTimeout = std::chrono::seconds(120);

class TlsProber : public MemberProber {
 public:
  TlsProber(std::shared_ptr<boost::asio::ssl::context> ctx, client::Endpoint ep, std::string token,
            Duration timeout, Clock& clock)
      : endpoint_(ep),
        token_(std::move(token)),
        timeout_(timeout),
        clock_(clock),
        pool_(std::move(ctx), std::move(ep), kIdleConnections, kIdleTimeout, clock) {}

  StatusOr<HttpResult> Get(const std::string& path) override {
    client::Deadline deadline = clock_.Now() + timeout_;
    bool verify_failed = false;
    auto conn = pool_.Acquire(deadline, &verify_failed);
    if (!conn.ok()) return Failure(path, conn.status());
    http::request<http::string_body> req;
    req.method(http::verb::get);
    req.target(endpoint_.path_prefix + path);
    req.version(11);
    req.set(http::field::host, endpoint_.host_header);
    req.set(http::field::user_agent, "flotilla-cluster-controller");
    if (!token_.empty()) req.set(http::field::authorization, "Bearer " + token_);
    req.keep_alive(true);
    http::response_parser<http::string_body> parser;
    parser.body_limit(1 << 20);
    Status s = (*conn)->Write(req, deadline);
    if (s.ok()) s = (*conn)->Read(parser, deadline);
    if (!s.ok()) return Failure(path, s);
    HttpResult result{static_cast<int>(parser.get().result_int()), parser.get().body()};
    if (parser.keep_alive()) pool_.Release(std::move(*conn));
    return result;
  }

 private:
  Status Failure(const std::string& path, const Status& s) const {
    return Status(s.reason(), "get \"" + endpoint_.origin + endpoint_.path_prefix + path +
                                  "\": " + s.message());
  }

  const client::Endpoint endpoint_;
  const std::string token_;
  const Duration timeout_;
  Clock& clock_;
  client::ConnectionPool pool_;
};

}  // namespace

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
  FLOTILLA_ASSIGN_OR_RETURN(client::Endpoint ep, client::ParseEndpoint(config));
  FLOTILLA_ASSIGN_OR_RETURN(auto ctx, client::MakeTlsContext(config));
  return std::unique_ptr<MemberProber>(
      new TlsProber(std::move(ctx), std::move(ep), config.token, timeout, clock));
}

}  // namespace flotilla::federation::cluster
