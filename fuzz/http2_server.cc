// The HTTP server's HTTP/2 path: the input is what a client sends after the
// connection preface, inside TLS (frames, HPACK blocks, bodies), to a real
// HttpServer on loopback. Its handler answers, streams a watch and reads
// bodies, so that frames reach every state of a stream. The promise: the
// server ends a connection whose client has finished sending (close_notify)
// rather than keep it, and serves the next one.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include "apiserver/http_server.h"
#include "apiserver/pki.h"
#include "base/http2.h"
#include "fuzz/targets.h"

namespace flotilla::fuzz {
namespace {

constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
constexpr int kEndMillis = 10000;

struct H2Server {
  H2Server() {
    char tmpl[] = "/tmp/flotilla-fuzz-h2-XXXXXX";
    std::string dir = ::mkdtemp(tmpl);
    RemoveAtExit(dir);
    auto pki = apiserver::EnsurePki({dir + "/pki"});
    if (!pki.ok()) Broken("PKI", pki.status().message());
    apiserver::HttpServerOptions opts;
    opts.cert_path = pki->serving_cert_path;
    opts.key_path = pki->serving_key_path;
    opts.max_body_bytes = 64 * 1024;
    opts.max_stream_buffer_bytes = 64 * 1024;
    opts.http2_max_streams = 16;
    auto server =
        apiserver::HttpServer::Start(opts, [](apiserver::Request& req, apiserver::Responder& resp) {
          if (req.path.starts_with("/watch")) {
            auto stream = resp.StartAsyncStream(200, {{"Content-Type", "application/json"}});
            if (stream == nullptr) return;
            for (int i = 0; i < 3; ++i) stream->Write(std::string(2000, 'e') + "\n");
            if (req.HasQuery("end")) stream->End();
            return;
          }
          if (req.path.starts_with("/sync")) {
            if (resp.StartStream(200, {})) resp.WriteChunk("chunk");
            return;
          }
          resp.Respond(req.method == "POST" ? 201 : 200, {{"Content-Type", "text/plain"}},
                       std::to_string(req.body.size()));
        });
    if (!server.ok()) Broken("starting the server", server.status().message());
    http = std::move(*server);
    ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  }

  std::unique_ptr<apiserver::HttpServer> http;
  SSL_CTX* ctx = nullptr;
};

// Reads until the server closes, or the bound; false on the bound.
bool ReadToEnd(int fd, SSL* ssl) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kEndMillis);
  char buf[16384];
  for (;;) {
    if (SSL_pending(ssl) == 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd pfd{fd, POLLIN, 0};
      if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) return false;
    }
    if (SSL_read(ssl, buf, sizeof(buf)) <= 0) return true;
  }
}

}  // namespace

void Http2Server(std::span<const uint8_t> data) {
  static H2Server* server = new H2Server();  // for the process's life
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server->http->port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    Broken("connecting", "the server does not accept connections");
  }
  SSL* ssl = SSL_new(server->ctx);
  SSL_set_fd(ssl, fd);
  http2::OfferAlpn(ssl, true);
  if (SSL_connect(ssl) != 1 || !http2::NegotiatedH2(ssl)) {
    Broken("handshake", "the server did not take h2");
  }
  std::string out(kPreface);
  out.append(AsText(data));
  SSL_write(ssl, out.data(), static_cast<int>(out.size()));
  SSL_shutdown(ssl);  // close_notify: nothing more comes
  ::shutdown(fd, SHUT_WR);
  bool ended = ReadToEnd(fd, ssl);
  SSL_free(ssl);
  ::close(fd);
  if (!ended) Broken("a finished client's connection stayed open", AsText(data));
}

}  // namespace flotilla::fuzz
