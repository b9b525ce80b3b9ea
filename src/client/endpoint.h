// Where a REST client connects and how it trusts the server, from a
// RestConfig: the server URL split into host, port and path prefix, and the
// TLS client context (CA or system trust store, client certificate and key,
// verification on unless `insecure`).
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "client/kubeconfig.h"

namespace flotilla::client {

struct Endpoint {
  std::string origin;       // "https://host:port" as configured, for messages
  std::string host;         // a DNS name or an IP address (no brackets)
  std::string port;         // "443" when the URL names none
  std::string host_header;  // host[:port] as the URL spells it
  std::string path_prefix;  // "" or "/prefix", percent-encoded, no trailing '/'
  std::string verify_name;  // tls_server_name, else host: SNI and the name checked
  bool verify = true;       // false when the config says insecure
};

// Parses config.server: an "https" URL with a host, an optional port and an
// optional path prefix; no user info, query or fragment. BadRequest names
// what is wrong.
StatusOr<Endpoint> ParseEndpoint(const RestConfig& config);

// A TLS 1.2+ client context: peer verification against config.ca_pem (the
// system trust store when empty) unless config.insecure; the client
// certificate and key when given. BadRequest for PEM that does not load.
StatusOr<std::shared_ptr<boost::asio::ssl::context>> MakeTlsContext(const RestConfig& config);

// True when `host` is an IPv4 or IPv6 address.
bool IsIpAddress(std::string_view host);

}  // namespace flotilla::client
