// DialUpgrade (upgrade.h).
#include "client/upgrade.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <future>
#include <optional>

#include "base/io.h"
#include "client/connection.h"
#include "client/endpoint.h"
#include "client/response_decoder.h"

namespace flotilla::client {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;

constexpr auto kAwaitUpgrade = net::as_tuple(net::use_awaitable);

Status DialFailed(const std::string& what, const error_code& ec, bool timed_out) {
  if (timed_out) return Status::Timeout(what + ": timed out");
  return Status::Unavailable(what + ": " + ec.message());
}

// One dial, on its strand; `tls` and `endpoint` outlive it.
struct Dial {
  Dial(std::shared_ptr<ssl::context> c, Endpoint ep)
      : tls(std::move(c)),
        endpoint(std::move(ep)),
        strand(net::make_strand(SharedIoContext())),
        resolver(strand),
        stream(std::in_place, strand, *tls),
        timer(strand) {}

  std::shared_ptr<ssl::context> tls;
  Endpoint endpoint;
  net::strand<net::io_context::executor_type> strand;
  tcp::resolver resolver;
  std::optional<http2::TlsStream> stream;
  net::steady_timer timer;
  bool timed_out = false;
};

net::awaitable<StatusOr<Switched>> Run(std::shared_ptr<Dial> d, http::request<http::empty_body> req,
                                       Duration timeout) {
  d->timer.expires_after(timeout);
  d->timer.async_wait([d](error_code ec) {
    if (ec) return;
    d->timed_out = true;
    error_code ignored;
    d->resolver.cancel();
    d->stream->next_layer().close(ignored);
  });
  struct CancelTimer {
    Dial& d;
    ~CancelTimer() { d.timer.cancel(); }
  } cancel{*d};
  const Endpoint& ep = d->endpoint;
  auto [resolve_ec, addresses] =
      co_await d->resolver.async_resolve(ep.host, ep.port, kAwaitUpgrade);
  if (resolve_ec) co_return DialFailed("dial tcp: lookup " + ep.host, resolve_ec, d->timed_out);
  auto [connect_ec, peer] =
      co_await net::async_connect(d->stream->next_layer(), addresses, kAwaitUpgrade);
  if (connect_ec) co_return DialFailed("dial tcp " + ep.host_header, connect_ec, d->timed_out);
  error_code ec;
  d->stream->next_layer().set_option(tcp::no_delay(true), ec);
  d->stream->next_layer().set_option(net::socket_base::keep_alive(true), ec);
  PrepareTls(d->stream->native_handle(), ep);
  // Upgrade is HTTP/1.1's: h2 is not offered.
  http2::OfferAlpn(d->stream->native_handle(), false);
  auto [tls_ec] = co_await d->stream->async_handshake(ssl::stream_base::client, kAwaitUpgrade);
  bool verify_failed = false;
  Status handshake = HandshakeResult(
      d->stream->native_handle(), ep,
      tls_ec ? DialFailed("TLS handshake", tls_ec, d->timed_out) : Status::Ok(), &verify_failed);
  if (!handshake.ok()) co_return handshake;
  auto [write_ec, written] = co_await http::async_write(*d->stream, req, kAwaitUpgrade);
  if (write_ec) co_return DialFailed("sending the upgrade request", write_ec, d->timed_out);
  boost::beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(1 << 20);
  auto [read_ec, read] =
      co_await http::async_read_header(*d->stream, buffer, parser, kAwaitUpgrade);
  if (read_ec) co_return DialFailed("reading the upgrade response", read_ec, d->timed_out);
  int code = static_cast<int>(parser.get().result_int());
  if (code != 101) {
    if (!parser.is_done()) {
      auto [body_ec, n] = co_await http::async_read(*d->stream, buffer, parser, kAwaitUpgrade);
      (void)body_ec;
    }
    co_return ErrorFromResponse(code, parser.get().body());
  }
  Switched out{std::move(*d->stream), {}, d->tls};
  auto data = buffer.data();
  out.received.assign(static_cast<const char*>(data.data()), data.size());
  co_return out;
}

net::awaitable<void> RunInto(std::shared_ptr<Dial> d, http::request<http::empty_body> req,
                             Duration timeout,
                             std::shared_ptr<std::promise<StatusOr<Switched>>> result) {
  StatusOr<Switched> out = co_await Run(d, std::move(req), timeout);
  result->set_value(std::move(out));
}

}  // namespace

StatusOr<Switched> DialUpgrade(const RestConfig& config, const std::string& method,
                               const std::string& path, const std::string& protocol,
                               Duration timeout) {
  FLOTILLA_ASSIGN_OR_RETURN(Endpoint ep, ParseEndpoint(config));
  FLOTILLA_ASSIGN_OR_RETURN(auto tls, MakeTlsContext(config));
  http::request<http::empty_body> req;
  req.method_string(method);
  req.target(ep.path_prefix + path);
  req.version(11);
  req.set(http::field::host, ep.host_header);
  req.set(http::field::user_agent, "flotilla-agent");
  req.set(http::field::connection, "Upgrade");
  req.set(http::field::upgrade, protocol);
  if (!config.token.empty()) req.set(http::field::authorization, "Bearer " + config.token);
  req.content_length(0);
  auto dial = std::make_shared<Dial>(std::move(tls), std::move(ep));
  auto result = std::make_shared<std::promise<StatusOr<Switched>>>();
  auto future = result->get_future();
  net::co_spawn(dial->strand, RunInto(dial, std::move(req), timeout, result),
                [result](std::exception_ptr e) {
                  if (e) result->set_value(Status::Internal("dialling the upgrade failed"));
                });
  ScopedBlocking blocking;
  return future.get();
}

}  // namespace flotilla::client
