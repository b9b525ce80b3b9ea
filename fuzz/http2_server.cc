// The HTTP server's HTTP/2 path: the input is what a client sends after the
// connection preface, inside TLS (frames, HPACK blocks, bodies), to a real
// HttpServer on loopback. Its handler answers, streams a watch and reads
// bodies, so that frames reach every state of a stream. The promise: the
// server ends a connection whose client has finished sending (close_notify)
// rather than keep it, and serves the next one.
#include <openssl/ssl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include "apiserver/http_server.h"
#include "apiserver/pki.h"
#include "base/http2.h"
#include "fuzz/targets.h"
#include "fuzz/tls_client.h"

namespace flotilla::fuzz {
namespace {

constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
constexpr int kEndMillis = 10000;

struct H2Server {
  H2Server() {
    apiserver::HttpServerOptions opts = ServingOptions("h2");
    opts.max_body_bytes = 64 * 1024;
    opts.max_stream_buffer_bytes = 64 * 1024;
    opts.http2_max_streams = 16;
    http = StartServing(opts, [](apiserver::Request& req, apiserver::Responder& resp) {
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
    ctx = InsecureClientContext();
  }

  std::unique_ptr<apiserver::HttpServer> http;
  SSL_CTX* ctx = nullptr;
};

}  // namespace

void Http2Server(std::span<const uint8_t> data) {
  static H2Server* server = new H2Server();  // for the process's life
  TlsClient client(server->ctx, server->http->port(), true);
  std::string out(kPreface);
  out.append(AsText(data));
  client.Write(out);
  client.Finish();
  std::string rest;
  bool ended = client.ReadUntil(
      rest, [](const std::string&) { return false; }, kEndMillis);
  if (!ended) Broken("a finished client's connection stayed open", AsText(data));
}

}  // namespace flotilla::fuzz
