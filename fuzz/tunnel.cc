// An agent's tunnel, from the federation's end: the input is what an agent
// sends once the federation has answered its Upgrade with 101 (HTTP/2 as
// the server: SETTINGS, responses, any frames), inside TLS, to a real
// HttpServer whose handler takes the connection as a cluster's tunnel
// (client::H2Tunnel, as federation/cluster/tunnel.h does), while a request
// of the federation waits on it. The promises: the request ends, whatever
// the agent sent (an answer, an error, a reset); the federation closes a
// tunnel whose agent has finished sending; and the tunnel is free for the
// next agent.
#include <openssl/ssl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "apiserver/http_server.h"
#include "apiserver/pki.h"
#include "base/http2.h"
#include "client/h2_connection.h"
#include "client/rest_client.h"
#include "fuzz/targets.h"
#include "fuzz/tls_client.h"

namespace flotilla::fuzz {
namespace {

constexpr int kEndMillis = 10000;

struct Federation {
  Federation() {
    apiserver::HttpServerOptions opts = ServingOptions("tunnel");
    http = StartServing(opts, [this](apiserver::Request&, apiserver::Responder& resp) {
      bool switched = resp.SwitchProtocols(
          {{"Upgrade", "flotilla-tunnel"}, {"Connection", "Upgrade"}}, [this](http2::Upgraded up) {
            (void)tunnel->Attach(std::move(up), Duration::zero(), nullptr);
          });
      if (!switched) resp.Respond(400, {}, "");
    });
    client::RestConfig config;
    config.server = "https://edge.agent";
    config.tunnel = tunnel;
    auto t = client::NewRestTransport(
        config, {.qps = 0, .timeout = std::chrono::seconds(5), .max_retries = 0});
    if (!t.ok()) Broken("the tunnel's transport", t.status().message());
    transport = std::move(*t);
    ctx = InsecureClientContext();
  }
  std::shared_ptr<client::H2Tunnel> tunnel = std::make_shared<client::H2Tunnel>("edge");
  std::unique_ptr<apiserver::HttpServer> http;
  std::shared_ptr<client::Transport> transport;
  SSL_CTX* ctx = nullptr;
};

// Whether the client's bytes `got` (its preface, then frames) hold a
// HEADERS frame.
bool HasHeaders(const std::string& got) {
  size_t at = 24;  // the connection preface
  while (at + 9 <= got.size()) {
    auto byte = [&](size_t i) { return static_cast<uint8_t>(got[at + i]); };
    size_t length = (size_t{byte(0)} << 16) | (size_t{byte(1)} << 8) | byte(2);
    if (byte(3) == 0x1) return true;
    at += 9 + length;
  }
  return false;
}

bool WaitFor(const std::function<bool()>& condition) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kEndMillis);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace

void Tunnel(std::span<const uint8_t> data) {
  static Federation* fed = new Federation();  // for the process's life
  TlsClient client(fed->ctx, fed->http->port(), false);
  std::string upgrade =
      "POST /apis/federation/v1beta1/clusters/edge/tunnel HTTP/1.1\r\nHost: fed\r\n"
      "Connection: Upgrade\r\nUpgrade: flotilla-tunnel\r\nContent-Length: 0\r\n\r\n";
  client.Write(upgrade);
  std::string head;
  client.ReadUntil(
      head, [](const std::string& got) { return got.find("\r\n\r\n") != got.npos; }, kEndMillis);
  if (!head.starts_with("HTTP/1.1 101")) Broken("the upgrade", head);
  if (!WaitFor([] { return fed->tunnel->Connected(); })) Broken("the tunnel", "never attached");
  // A request of the federation waits on the tunnel while the agent's
  // bytes come.
  auto answered = std::async(std::launch::async, [] {
    return fed->transport->Do({.method = "GET", .path = "/api/v1/namespaces"});
  });
  // The agent's bytes go once the request's HEADERS have come (after the
  // client preface, SETTINGS and WINDOW_UPDATE).
  std::string sent;
  bool headed = client.ReadUntil(
      sent, [](const std::string& got) { return HasHeaders(got); }, kEndMillis);
  if (!headed || !HasHeaders(sent)) {
    std::string why = "never sent (the head read " + std::to_string(head.size()) + " bytes, then " +
                      std::to_string(sent.size()) + " came";
    for (size_t i = 0; i < sent.size() && i < 96; ++i) {
      why += (i == 0 ? ": " : " ") + std::to_string(static_cast<uint8_t>(sent[i]));
    }
    why += ")";
    if (answered.wait_for(std::chrono::milliseconds(kEndMillis)) == std::future_status::ready) {
      auto r = answered.get();
      why += r.ok() ? ", yet answered " + std::to_string(r->code) : ": " + r.status().ToString();
    }
    Broken("the federation's request", why);
  }
  client.Write(AsText(data));
  client.Finish();  // nothing more comes
  std::string rest;
  bool ended = client.ReadUntil(
      rest, [](const std::string&) { return false; }, kEndMillis);
  if (!ended) Broken("a finished agent's tunnel stayed open", AsText(data));
  if (answered.wait_for(std::chrono::milliseconds(kEndMillis)) != std::future_status::ready) {
    Broken("the federation's request through the tunnel never ended", AsText(data));
  }
  (void)answered.get();
  if (!WaitFor([] { return !fed->tunnel->Connected(); })) {
    Broken("the tunnel stayed attached after its connection ended", AsText(data));
  }
}

}  // namespace flotilla::fuzz
