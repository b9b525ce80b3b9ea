// DialUpgrade (upgrade.h).
#include "client/upgrade.h"

#include <openssl/pem.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
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

// Bounds the dial by `timeout` from now: past it, the socket is closed.
void Arm(const std::shared_ptr<Dial>& d, Duration timeout) {
  d->timer.expires_after(timeout);
  d->timer.async_wait([d](error_code ec) {
    if (ec) return;
    d->timed_out = true;
    error_code ignored;
    d->resolver.cancel();
    d->stream->next_layer().close(ignored);
  });
}

struct CancelTimer {
  Dial& d;
  ~CancelTimer() { d.timer.cancel(); }
};

// Resolves, connects and shakes hands as HTTP/1.1 (h2 is not offered: an
// Upgrade is HTTP/1.1's).
net::awaitable<Status> Connect(std::shared_ptr<Dial> d) {
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
  http2::OfferAlpn(d->stream->native_handle(), false);
  auto [tls_ec] = co_await d->stream->async_handshake(ssl::stream_base::client, kAwaitUpgrade);
  bool verify_failed = false;
  co_return HandshakeResult(
      d->stream->native_handle(), ep,
      tls_ec ? DialFailed("TLS handshake", tls_ec, d->timed_out) : Status::Ok(), &verify_failed);
}

net::awaitable<StatusOr<UpgradeAnswer>> Run(std::shared_ptr<Dial> d,
                                            http::request<http::empty_body> req, Duration timeout) {
  Arm(d, timeout);
  CancelTimer cancel{*d};
  if (Status connected = co_await Connect(d); !connected.ok()) co_return connected;
  auto [write_ec, written] = co_await http::async_write(*d->stream, req, kAwaitUpgrade);
  if (write_ec) co_return DialFailed("sending the upgrade request", write_ec, d->timed_out);
  boost::beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(1 << 20);
  auto [read_ec, read] =
      co_await http::async_read_header(*d->stream, buffer, parser, kAwaitUpgrade);
  if (read_ec) co_return DialFailed("reading the upgrade response", read_ec, d->timed_out);
  UpgradeAnswer out;
  out.code = static_cast<int>(parser.get().result_int());
  for (const auto& field : parser.get()) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  if (out.code != 101) {
    if (!parser.is_done()) {
      auto [body_ec, n] = co_await http::async_read(*d->stream, buffer, parser, kAwaitUpgrade);
      (void)body_ec;
    }
    out.body = std::move(parser.get().body());
    error_code ignored;
    d->stream->next_layer().close(ignored);
    co_return out;
  }
  out.switched.emplace(Switched{std::move(*d->stream), {}, d->tls, out.headers});
  auto data = buffer.data();
  out.switched->received.assign(static_cast<const char*>(data.data()), data.size());
  co_return out;
}

// The certificates the server presented, PEM, leaf first.
net::awaitable<StatusOr<std::vector<std::string>>> Chain(std::shared_ptr<Dial> d,
                                                         Duration timeout) {
  Arm(d, timeout);
  CancelTimer cancel{*d};
  if (Status connected = co_await Connect(d); !connected.ok()) co_return connected;
  std::vector<std::string> pems;
  STACK_OF(X509)* chain = SSL_get_peer_cert_chain(d->stream->native_handle());
  for (int i = 0; chain != nullptr && i < sk_X509_num(chain); ++i) {
    BIO* bio = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(bio, sk_X509_value(chain, i));
    char* data = nullptr;
    long n = BIO_get_mem_data(bio, &data);
    pems.emplace_back(data, static_cast<size_t>(n));
    BIO_free(bio);
  }
  error_code ignored;
  d->stream->next_layer().close(ignored);
  co_return pems;
}

// Runs `task` on the dial's strand and waits for its result.
template <typename T>
StatusOr<T> RunDial(const std::shared_ptr<Dial>& dial, net::awaitable<StatusOr<T>> task) {
  auto result = std::make_shared<std::promise<StatusOr<T>>>();
  auto future = result->get_future();
  net::co_spawn(
      dial->strand,
      [](net::awaitable<StatusOr<T>> t, std::shared_ptr<std::promise<StatusOr<T>>> r)
          -> net::awaitable<void> { r->set_value(co_await std::move(t)); }(std::move(task), result),
      [result](std::exception_ptr e) {
        if (e) result->set_value(Status::Internal("dialling failed"));
      });
  ScopedBlocking blocking;
  return future.get();
}

}  // namespace

StatusOr<UpgradeAnswer> OpenUpgrade(const RestConfig& config, const std::string& method,
                                    const std::string& path,
                                    const std::vector<std::pair<std::string, std::string>>& headers,
                                    Duration timeout) {
  FLOTILLA_ASSIGN_OR_RETURN(Endpoint ep, ParseEndpoint(config));
  FLOTILLA_ASSIGN_OR_RETURN(auto tls, MakeTlsContext(config));
  http::request<http::empty_body> req;
  req.method_string(method);
  req.target(ep.path_prefix + path);
  req.version(11);
  req.set(http::field::host, ep.host_header);
  for (const auto& [name, value] : headers) req.insert(name, value);
  if (!config.token.empty()) req.set(http::field::authorization, "Bearer " + config.token);
  auto dial = std::make_shared<Dial>(std::move(tls), std::move(ep));
  return RunDial(dial, Run(dial, std::move(req), timeout));
}

StatusOr<Switched> DialUpgrade(const RestConfig& config, const std::string& method,
                               const std::string& path, const std::string& protocol,
                               Duration timeout) {
  FLOTILLA_ASSIGN_OR_RETURN(UpgradeAnswer answer, OpenUpgrade(config, method, path,
                                                              {{"User-Agent", "flotilla-agent"},
                                                               {"Connection", "Upgrade"},
                                                               {"Upgrade", protocol},
                                                               {"Content-Length", "0"}},
                                                              timeout));
  if (!answer.switched) return ErrorFromResponse(answer.code, answer.body);
  return std::move(*answer.switched);
}

StatusOr<std::vector<std::string>> PeerCertificates(const RestConfig& config, Duration timeout) {
  RestConfig unverified = config;
  unverified.insecure = true;
  unverified.ca_pem.clear();
  FLOTILLA_ASSIGN_OR_RETURN(Endpoint ep, ParseEndpoint(unverified));
  FLOTILLA_ASSIGN_OR_RETURN(auto tls, MakeTlsContext(unverified));
  auto dial = std::make_shared<Dial>(std::move(tls), std::move(ep));
  return RunDial(dial, Chain(dial, timeout));
}

}  // namespace flotilla::client
