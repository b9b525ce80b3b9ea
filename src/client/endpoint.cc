// Endpoint and TLS context for the REST client (endpoint.h).
#include "client/endpoint.h"

#include <boost/asio/ip/address.hpp>
#include <boost/url/parse.hpp>

namespace flotilla::client {
namespace {

namespace ssl = boost::asio::ssl;

Status BadServer(const std::string& server, const std::string& why) {
  return Status::BadRequest("invalid server URL \"" + server + "\": " + why);
}

}  // namespace

bool IsIpAddress(std::string_view host) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(std::string(host), ec);
  return !ec;
}

StatusOr<Endpoint> ParseEndpoint(const RestConfig& config) {
  const std::string& server = config.server;
  auto parsed = boost::urls::parse_uri(server);
  if (!parsed) return BadServer(server, parsed.error().message());
  const boost::urls::url_view& url = *parsed;
  if (url.scheme() != "https") return BadServer(server, "the scheme must be https");
  if (url.has_userinfo() || url.has_query() || url.has_fragment()) {
    return BadServer(server, "user info, query and fragment are not allowed");
  }
  Endpoint ep;
  ep.host = url.host_address();
  if (ep.host.empty()) return BadServer(server, "no host");
  ep.port = url.has_port() ? std::string(url.port()) : "443";
  if (ep.port.empty()) ep.port = "443";
  ep.host_header = std::string(url.encoded_host_and_port());
  ep.origin = "https://" + ep.host_header;
  ep.path_prefix = std::string(url.encoded_path());
  while (!ep.path_prefix.empty() && ep.path_prefix.back() == '/') ep.path_prefix.pop_back();
  ep.verify_name = config.tls_server_name.empty() ? ep.host : config.tls_server_name;
  ep.verify = !config.insecure;
  return ep;
}

StatusOr<std::shared_ptr<ssl::context>> MakeTlsContext(const RestConfig& config) {
  std::shared_ptr<ssl::context> ctx;
  try {
    ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  } catch (const boost::system::system_error& e) {
    return Status::Internal(std::string("creating a TLS context: ") + e.what());
  }
  boost::system::error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                   ec);
  if (config.insecure) {
    ctx->set_verify_mode(ssl::verify_none, ec);
  } else {
    ctx->set_verify_mode(ssl::verify_peer, ec);
    if (config.ca_pem.empty()) {
      ctx->set_default_verify_paths(ec);
    } else {
      ctx->add_certificate_authority(boost::asio::buffer(config.ca_pem), ec);
      if (ec) return Status::BadRequest("loading the CA certificate: " + ec.message());
    }
  }
  if (config.client_cert_pem.empty() != config.client_key_pem.empty()) {
    return Status::BadRequest("a client certificate needs its key, and a key its certificate");
  }
  if (!config.client_cert_pem.empty()) {
    ctx->use_certificate_chain(boost::asio::buffer(config.client_cert_pem), ec);
    if (ec) return Status::BadRequest("loading the client certificate: " + ec.message());
    ctx->use_private_key(boost::asio::buffer(config.client_key_pem), ssl::context::pem, ec);
    if (ec) return Status::BadRequest("loading the client key: " + ec.message());
  }
  return ctx;
}

}  // namespace flotilla::client
