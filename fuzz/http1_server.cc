// The HTTP server's HTTP/1.1 path: the input is what a client sends inside
// TLS (request lines, headers, bodies with a length or chunked, pipelined
// requests), to a real HttpServer on loopback whose handler answers with
// what it read. The promises: every answer is a whole HTTP/1.1 response
// the handler or the server made (never a 5xx: nothing the client sends
// is the server's fault), and the server ends a connection whose client
// has finished sending (close_notify) rather than keep it.
#include <string>

#include "apiserver/http_server.h"
#include "fuzz/targets.h"
#include "fuzz/tls_client.h"

namespace flotilla::fuzz {
namespace {

constexpr int kEndMillis = 10000;

struct H1Server {
  H1Server() {
    apiserver::HttpServerOptions opts = ServingOptions("h1");
    opts.max_body_bytes = 64 * 1024;
    // GETs are served on the loop, the rest on the pool.
    opts.runs_on_loop = [](const apiserver::Request& req) { return req.method == "GET"; };
    http = StartServing(opts, [](apiserver::Request& req, apiserver::Responder& resp) {
      std::string seen = req.method + " " + req.path + " " + std::to_string(req.headers.size()) +
                         " " + std::to_string(req.body.size());
      resp.Respond(req.method == "POST" ? 201 : 200, {{"Content-Type", "text/plain"}}, seen);
    });
    ctx = InsecureClientContext();
  }

  std::unique_ptr<apiserver::HttpServer> http;
  SSL_CTX* ctx = nullptr;
};

// Whether `got` is a run of whole responses (the last may be cut short
// only by the server closing), none of them a 5xx.
void CheckAnswers(const std::string& got, std::string_view input) {
  size_t at = 0;
  while (at < got.size()) {
    if (got.compare(at, 9, "HTTP/1.1 ") != 0) Broken("an answer that is not HTTP/1.1", input);
    if (at + 12 <= got.size() && got[at + 9] == '5') {
      Broken("a 5xx for what a client sent", got.substr(at, 200));
    }
    size_t head_end = got.find("\r\n\r\n", at);
    if (head_end == std::string::npos) return;
    size_t length = got.find("Content-Length: ", at);
    if (length == std::string::npos || length > head_end) {
      Broken("an answer without its length", got.substr(at, 200));
    }
    at = head_end + 4 + std::stoul(got.substr(length + 16, 20));
  }
}

}  // namespace

void Http1Server(std::span<const uint8_t> data) {
  static H1Server* server = new H1Server();  // for the process's life
  TlsClient client(server->ctx, server->http->port(), false);
  client.Write(AsText(data));
  client.Finish();
  std::string got;
  bool ended = client.ReadUntil(
      got, [](const std::string&) { return false; }, kEndMillis);
  if (!ended) Broken("a finished client's connection stayed open", AsText(data));
  CheckAnswers(got, AsText(data));
}

}  // namespace flotilla::fuzz
