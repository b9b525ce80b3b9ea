// TlsClient (tls_client.h).
#include "fuzz/tls_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "apiserver/pki.h"
#include "base/http2.h"
#include "fuzz/targets.h"

namespace flotilla::fuzz {

namespace {

// Whether a TLS call that returned `rc` was only interrupted, and is to be
// made again: libFuzzer's -timeout sends this process SIGALRM every
// second, and a blocking recv or send it interrupts fails with EINTR.
bool Interrupted(SSL* ssl, int rc) {
  int error = SSL_get_error(ssl, rc);
  return (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE ||
          error == SSL_ERROR_SYSCALL) &&
         errno == EINTR;
}

}  // namespace

TlsClient::TlsClient(SSL_CTX* ctx, int port, bool h2) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int rc;
  do {
    rc = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0 && errno != EISCONN) Broken("connecting", "the server does not accept connections");
  ssl_ = SSL_new(ctx);
  SSL_set_fd(ssl_, fd_);
  http2::OfferAlpn(ssl_, h2);
  for (;;) {
    errno = 0;
    rc = SSL_connect(ssl_);
    if (rc == 1) break;
    if (Interrupted(ssl_, rc)) continue;
    int error = SSL_get_error(ssl_, rc);
    char why[256] = "no reason queued";
    if (unsigned long e = ERR_get_error(); e != 0) ERR_error_string_n(e, why, sizeof(why));
    Broken("handshake", "TLS failed: SSL error " + std::to_string(error) + ", errno " +
                            std::to_string(errno) + ", " + why);
  }
  if (h2 && !http2::NegotiatedH2(ssl_)) Broken("handshake", "the server did not take h2");
}

TlsClient::~TlsClient() {
  SSL_free(ssl_);
  ::close(fd_);
}

void TlsClient::Write(std::string_view data) {
  while (!data.empty()) {
    errno = 0;
    int n = SSL_write(ssl_, data.data(), static_cast<int>(data.size()));
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
    } else if (!Interrupted(ssl_, n)) {
      return;  // the server closed: what it says of it is read next
    }
  }
}

void TlsClient::Finish() {
  SSL_shutdown(ssl_);
  ::shutdown(fd_, SHUT_WR);
}

bool TlsClient::ReadUntil(std::string& got, const std::function<bool(const std::string&)>& done,
                          int millis) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(millis);
  char buf[16384];
  while (!done(got)) {
    if (SSL_pending(ssl_) == 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd pfd{fd_, POLLIN, 0};
      int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) return false;
    }
    errno = 0;
    int n = SSL_read(ssl_, buf, sizeof(buf));
    if (n <= 0) {
      if (Interrupted(ssl_, n)) continue;
      // Readable, but a whole record has not come yet.
      if (SSL_get_error(ssl_, n) == SSL_ERROR_WANT_READ) continue;
      return true;  // the connection ended
    }
    got.append(buf, static_cast<size_t>(n));
  }
  return true;
}

apiserver::HttpServerOptions ServingOptions(const std::string& name) {
  std::string tmpl = "/tmp/flotilla-fuzz-" + name + "-XXXXXX";
  std::string dir = ::mkdtemp(tmpl.data());
  RemoveAtExit(dir);
  auto pki = apiserver::EnsurePki({dir + "/pki"});
  if (!pki.ok()) Broken("PKI", pki.status().message());
  apiserver::HttpServerOptions opts;
  opts.cert_path = pki->serving_cert_path;
  opts.key_path = pki->serving_key_path;
  return opts;
}

std::unique_ptr<apiserver::HttpServer> StartServing(const apiserver::HttpServerOptions& opts,
                                                    apiserver::Handler handler) {
  auto server = apiserver::HttpServer::Start(opts, std::move(handler));
  if (!server.ok()) Broken("starting the server", server.status().message());
  return std::move(*server);
}

SSL_CTX* InsecureClientContext() {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  return ctx;
}

}  // namespace flotilla::fuzz
