// StartHttpsStream (https_stream.h): a coroutine on a strand of the shared
// loop per stream.
#include "client/https_stream.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <vector>

#include "base/io.h"
#include "base/tls_stream.h"

namespace flotilla::client {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;
using boost::system::error_code;

constexpr auto kAwait = net::as_tuple(net::use_awaitable);
// The body buffer a stream holds while it is open: one TLS record's
// plaintext (16 KiB), the most one read through TLS returns. A federation
// of 1,000 members holds 15,000 of them.
constexpr size_t kReadBuffer = 16 * 1024;

// The peer closing the stream, possibly in the middle of a message.
bool ClosedByPeer(const error_code& ec) {
  return ec == http::error::end_of_stream || ec == http::error::partial_message ||
         ec == net::error::eof || ec == ssl::error::stream_truncated;
}

class HttpsStream : public StreamCall, public std::enable_shared_from_this<HttpsStream> {
 public:
  HttpsStream(HttpsStreamParams params, std::shared_ptr<AsyncStreamSink> sink)
      : params_(std::move(params)),
        sink_(std::move(sink)),
        strand_(net::make_strand(SharedIoContext())),
        resolver_(strand_),
        stream_(strand_, *params_.tls),
        timer_(strand_) {}

  static void Start(std::shared_ptr<HttpsStream> self) {
    auto ex = self->strand_;
    net::co_spawn(ex, Run(std::move(self)), net::detached);
  }

  void Cancel() override {
    net::post(strand_, [self = shared_from_this()] {
      self->cancelled_ = true;
      self->Abort();
    });
  }

 private:
  static net::awaitable<void> Run(std::shared_ptr<HttpsStream> self) {
    Status status = co_await self->Exchange();
    self->timer_.cancel();
    if (self->cancelled_) status = Status::Ok();
    if (!status.ok()) status = self->params_.describe(status);
    self->sink_->OnEnd(std::move(status));
  }

  // Ends whatever waits on the connection (on the strand).
  void Abort() {
    error_code ec;
    resolver_.cancel();
    stream_.next_layer().cancel(ec);
    stream_.next_layer().shutdown(tcp::socket::shutdown_both, ec);
  }

  // The failure of step `what`, as the blocking connection names it.
  Status Failed(const char* what, const error_code& ec) const {
    if (timed_out_) return Status::Timeout(std::string(what) + ": timed out");
    return Status::Unavailable(std::string(what) + ": " + ec.message());
  }

  net::awaitable<Status> Exchange();
  net::awaitable<Status> Connect();
  net::awaitable<Status> ReadBody(http::response_parser<http::buffer_body>& parser, bool is_error);

  HttpsStreamParams params_;
  const std::shared_ptr<AsyncStreamSink> sink_;
  net::strand<net::io_context::executor_type> strand_;
  tcp::resolver resolver_;
  TlsStream stream_;
  net::steady_timer timer_;
  boost::beast::flat_buffer buffer_;
  std::string error_body_;
  // On the strand only.
  bool cancelled_ = false;
  bool timed_out_ = false;
};

net::awaitable<Status> HttpsStream::Exchange() {
  if (params_.head_timeout > Duration::zero()) {
    timer_.expires_after(params_.head_timeout);
    timer_.async_wait([self = shared_from_this()](error_code ec) {
      if (ec) return;
      self->timed_out_ = true;
      self->Abort();
    });
  }
  Status connected = co_await Connect();
  if (!connected.ok()) co_return connected;
  if (cancelled_) co_return Status::Ok();
  auto [write_ec, written] = co_await http::async_write(stream_, params_.request, kAwait);
  if (write_ec) co_return Failed("writing the request", write_ec);
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);
  auto [head_ec, head_bytes] = co_await http::async_read_header(stream_, buffer_, parser, kAwait);
  if (head_ec) co_return cancelled_ ? Status::Ok() : Failed("reading the response", head_ec);
  timer_.cancel();
  int code = static_cast<int>(parser.get().result_int());
  std::vector<std::pair<std::string, std::string>> headers;
  for (const auto& field : parser.get()) {
    headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  sink_->OnHeaders(std::move(headers));
  if (Is2xx(code)) sink_->OnHead(code, "");
  Status s = co_await ReadBody(parser, !Is2xx(code));
  if (!Is2xx(code)) {
    if (!s.ok()) co_return s;
    sink_->OnHead(code, std::move(error_body_));
  }
  co_return s;
}

net::awaitable<Status> HttpsStream::Connect() {
  const Endpoint& ep = params_.endpoint;
  auto [resolve_ec, addresses] = co_await resolver_.async_resolve(ep.host, ep.port, kAwait);
  if (resolve_ec) {
    co_return timed_out_
        ? Failed("dial tcp", resolve_ec)
        : Status::Unavailable("dial tcp: lookup " + ep.host + ": " + resolve_ec.message());
  }
  std::string dial = "dial tcp " + ep.host_header;
  auto [connect_ec, peer] = co_await net::async_connect(stream_.next_layer(), addresses, kAwait);
  if (connect_ec) co_return Failed(dial.c_str(), connect_ec);
  error_code ec;
  stream_.next_layer().set_option(tcp::no_delay(true), ec);
  stream_.next_layer().set_option(net::socket_base::keep_alive(true), ec);
  PrepareTls(stream_.native_handle(), ep);
  auto [tls_ec] = co_await stream_.async_handshake(ssl::stream_base::client, kAwait);
  Status handshake = tls_ec ? Failed("TLS handshake", tls_ec) : Status::Ok();
  bool verify_failed = false;
  co_return HandshakeResult(stream_.native_handle(), ep, std::move(handshake), &verify_failed);
}

// Feeds the body to the sink; an error's body (`is_error`) is kept, up to
// kMaxErrorBody, for OnHead.
net::awaitable<Status> HttpsStream::ReadBody(http::response_parser<http::buffer_body>& parser,
                                             bool is_error) {
  std::vector<char> buf(kReadBuffer);
  while (!parser.is_done()) {
    parser.get().body().data = buf.data();
    parser.get().body().size = buf.size();
    auto [ec, bytes] = co_await http::async_read_some(stream_, buffer_, parser, kAwait);
    if (ec && ec != http::error::need_buffer) {
      if (cancelled_ || (!is_error && ClosedByPeer(ec))) co_return Status::Ok();
      co_return Failed("reading the response", ec);
    }
    std::string_view data(buf.data(), buf.size() - parser.get().body().size);
    if (data.empty()) continue;
    if (is_error) {
      error_body_.append(data.substr(0, kMaxErrorBody - error_body_.size()));
      if (error_body_.size() >= kMaxErrorBody) break;
    } else if (!sink_->OnData(data)) {
      break;
    }
  }
  co_return Status::Ok();
}

}  // namespace

std::shared_ptr<StreamCall> StartHttpsStream(HttpsStreamParams params,
                                             std::shared_ptr<AsyncStreamSink> sink) {
  auto stream = std::make_shared<HttpsStream>(std::move(params), std::move(sink));
  HttpsStream::Start(stream);
  return stream;
}

}  // namespace flotilla::client
