// A TLS client of a fuzz target's own server on loopback (its certificate
// unverified), for the targets that speak to a real HttpServer.
#pragma once

#include <openssl/ssl.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "apiserver/http_server.h"

namespace flotilla::fuzz {

class TlsClient {
 public:
  // Connects to 127.0.0.1:`port` and completes the handshake, offering h2
  // (and HTTP/1.1) or HTTP/1.1 only; Broken when it cannot, or when `h2`
  // and the server did not take it.
  TlsClient(SSL_CTX* ctx, int port, bool h2);
  ~TlsClient();
  TlsClient(const TlsClient&) = delete;
  TlsClient& operator=(const TlsClient&) = delete;

  void Write(std::string_view data);
  // Sends close_notify and shuts the write side: nothing more comes.
  void Finish();
  // Appends what the server sends to `got` until `done(got)` holds or the
  // server closes (true), or `millis` pass (false).
  bool ReadUntil(std::string& got, const std::function<bool(const std::string&)>& done, int millis);

 private:
  int fd_ = -1;
  SSL* ssl_ = nullptr;
};

// HTTPS options for a target's server: a serving certificate made in a
// temporary directory named after `name`, removed when the process exits.
apiserver::HttpServerOptions ServingOptions(const std::string& name);

// Starts a target's server with `opts` (from ServingOptions) and `handler`;
// Broken when it cannot.
std::unique_ptr<apiserver::HttpServer> StartServing(const apiserver::HttpServerOptions& opts,
                                                    apiserver::Handler handler);

// An SSL_CTX for TlsClient: TLS, no verification. For the process's life.
SSL_CTX* InsecureClientContext();

}  // namespace flotilla::fuzz
