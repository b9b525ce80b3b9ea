// Connection: one client connection of the HTTP server (see http_internal.h).
#pragma once

#include "apiserver/http_internal.h"

namespace flotilla::apiserver::http_internal {

// One connection: a coroutine on its own strand. Stream is TlsStream or
// tcp::socket.
template <typename Stream>
class Connection : public ConnectionBase, public std::enable_shared_from_this<Connection<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  Connection(ServerContext& server, tcp::socket socket)
      : server_(server),
        stream_(MakeStream(std::move(socket), server.ssl_ctx)),
        deadline_(stream_.get_executor()) {}
  // A TLS connection this process dialled, which switched to HTTP/2 with
  // this side serving (http2::Upgraded); `received`: its first bytes.
  // `on_end` runs once it has closed, before the server learns it (so
  // before the server's Stop returns).
  Connection(ServerContext& server, Stream dialled, std::string received,
             std::function<void()> on_end)
      : server_(server),
        stream_(std::move(dialled)),
        deadline_(stream_.get_executor()),
        dialled_(true),
        received_(std::move(received)),
        on_end_(std::move(on_end)) {}

  Stream& stream() { return stream_; }
  tcp::socket& socket() {
    if constexpr (kTls) {
      return stream_.next_layer();
    } else {
      return stream_;
    }
  }
  auto executor() { return stream_.get_executor(); }
  const HttpServerOptions& opts() const { return server_.opts; }

  void Abort() override {
    net::post(executor(), [self = this->shared_from_this()] {
      if (self->abort_hook_) return self->abort_hook_();
      self->ShutDown();
    });
  }
  // On the strand: what Abort does instead of shutting the socket down (an
  // HTTP/2 connection says GOAWAY first); null: the default.
  void set_abort_hook(std::function<void()> hook) { abort_hook_ = std::move(hook); }
  const Handler& handler() const { return server_.handler; }

  // On the strand: shuts the socket down `seconds` from now unless Disarm
  // or another Arm comes first, which ends any read or write waiting on it.
  // Arming and disarming only note the deadline; the timer is set only
  // when it would fire too late, and when it fires it sets itself again
  // for whatever deadline is due then. So a busy connection, armed and
  // disarmed for each request, sets its timer once per timeout, not twice
  // per request (each set cancels a wait and posts its completion).
  void Arm(int seconds) {
    deadline_ns_ = SteadyNanos() + int64_t{seconds} * 1'000'000'000;
    WakeBy(deadline_ns_);
  }
  // Not close: a handler may be polling the descriptor, whose number must
  // not be reused before the connection ends (Close).
  void ShutDown() {
    error_code ignored;
    socket().shutdown(tcp::socket::shutdown_both, ignored);
  }
  void Disarm() {
    deadline_ns_ = 0;
    watching_writes_ = false;
  }
  // A stream has taken the TLS session over from the connection's
  // TlsStream (and ends it itself): closing skips the stream's shutdown.
  void set_session_taken() { session_taken_ = true; }

  // Runs `write(ec)`, a blocking write, under the send deadline; for a
  // handler's thread, never the loop's. While a handler runs nothing else
  // uses the stream, and a blocking write is much cheaper for a large body
  // than the loop's writes. The write only notes when it started: the
  // loop's watch (WatchBlockingWrites, armed while the handler runs) shuts
  // the socket down if one takes longer than the send timeout, which ends
  // it (asio's blocking writes poll without a timeout). Nothing is posted
  // to the loop per write, so a write wakes no other thread.
  template <typename Write>
  error_code WriteBlocking(Write write) {
    blocking_write_since_.store(SteadyNanos(), std::memory_order_relaxed);
    error_code ec;
    {
      ScopedBlocking blocking;  // for a peer that reads slowly
      write(ec);
    }
    blocking_write_since_.store(0, std::memory_order_relaxed);
    return ec;
  }

  // Writes what the socket takes of an answer's bytes at once, as it does a
  // small answer: without waiting, without declaring a wait (which would
  // hand the work the thread deferred, a commit's watch deliveries, to
  // another thread), and without an asynchronous operation and its
  // completion's post. How many bytes (all, part, or none when the socket
  // is full); the caller writes the rest as its thread may wait. TLS only.
  size_t WriteNow(std::string_view wire, error_code& ec) {
    return stream_.try_write_some(net::buffer(wire.data(), wire.size()), ec);
  }

  // On the strand, while a handler runs on the pool: shuts the socket down
  // once a blocking write that has started passes the send timeout;
  // Disarm ends the watch.
  void WatchBlockingWrites() {
    watching_writes_ = true;
    WakeBy(SteadyNanos() + int64_t{opts().send_timeout_sec} * 1'000'000'000);
  }

  // Serves the connection until it closes; `self` keeps it alive.
  static net::awaitable<void> Run(std::shared_ptr<Connection> self) { co_await self->Serve(); }

 private:
  static Stream MakeStream(tcp::socket socket, ssl::context& ctx) {
    if constexpr (kTls) {
      return Stream(std::move(socket), ctx);
    } else {
      (void)ctx;
      return socket;
    }
  }

  X509* PeerCert() {
    if constexpr (kTls) {
      SSL* ssl = stream_.native_handle();
      if (SSL_get_verify_result(ssl) != X509_V_OK) return nullptr;
      return SSL_get0_peer_certificate(ssl);
    } else {
      return nullptr;
    }
  }

  net::awaitable<void> ServeRequests();
  // Sends the 101 `head` (none when empty: `take` answers) and lends the
  // stream to `take` until it is done.
  net::awaitable<void> SwitchProtocols(const std::string& head,
                                       std::function<void(http2::Upgraded)>& take);
  net::awaitable<void> DiscardUnreadBody();
  net::awaitable<void> Close();
  // Runs the handler on the blocking pool; resumes once it has returned.
  //
  // GCC 12 destroys twice a temporary with a destructor that is part of a
  // co_await expression (an argument passed by value, a lambda with
  // captures, an executor): such values are named locals here, passed by
  // reference.
  net::awaitable<void> Handle(Request& req, StreamResponder<Stream>& r);
  net::awaitable<void> Serve();

  // On the strand: has the timer fire at `at` (SteadyNanos) or earlier.
  void WakeBy(int64_t at) {
    if (timer_at_ns_ != 0 && timer_at_ns_ <= at) return;
    timer_at_ns_ = at;
    deadline_.expires_at(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(at)));
    deadline_.async_wait([self = this->shared_from_this(), at](error_code ec) {
      // Else set again for an earlier time, or the connection is ending.
      if (!ec && self->timer_at_ns_ == at) self->OnTimer();
    });
  }
  // On the strand, when the timer fires: shuts the socket down if a
  // deadline has passed, else sets the timer for the next one due.
  void OnTimer() {
    timer_at_ns_ = 0;
    const int64_t now = SteadyNanos();
    if (deadline_ns_ != 0 && now >= deadline_ns_) return ShutDown();
    if (watching_writes_) {
      const int64_t timeout = int64_t{opts().send_timeout_sec} * 1'000'000'000;
      const int64_t since = blocking_write_since_.load(std::memory_order_relaxed);
      if (since != 0 && now - since >= timeout) return ShutDown();
      WakeBy(since == 0 ? now + timeout : since + timeout);
    }
    if (deadline_ns_ != 0) WakeBy(deadline_ns_);
  }

  ServerContext& server_;
  Stream stream_;
  net::steady_timer deadline_;
  // On the strand (SteadyNanos; 0: none): the armed deadline, and when the
  // timer is set to fire.
  int64_t deadline_ns_ = 0;
  int64_t timer_at_ns_ = 0;
  bool watching_writes_ = false;  // a handler runs on the pool (WatchBlockingWrites)
  // When the handler's blocking write in progress started (SteadyNanos);
  // 0: none.
  std::atomic<int64_t> blocking_write_since_{0};
  bool session_taken_ = false;        // on the strand
  std::function<void()> abort_hook_;  // on the strand
  // On the strand: the peer closed its end without ending TLS (as a client
  // closing an idle pooled connection does), so there is nobody to send a
  // close_notify to.
  bool peer_dropped_ = false;
  const bool dialled_ = false;
  std::string received_;
  std::function<void()> on_end_;
  boost::beast::flat_buffer buffer_;
  std::string remote_;
};

template <typename Stream>
net::awaitable<void> Connection<Stream>::Serve() {
  // Whatever way this coroutine ends, the server learns it (after on_end),
  // and the timer lets the connection go.
  struct Finished {
    Connection* conn;
    ~Finished() {
      conn->Disarm();
      conn->timer_at_ns_ = 0;
      conn->deadline_.cancel();
      if (conn->on_end_) std::exchange(conn->on_end_, nullptr)();
      conn->server_.finished(conn);
    }
  } finished{this};
  error_code ec;
  auto ep = socket().remote_endpoint(ec);
  if (!ec) remote_ = ep.address().to_string() + ":" + std::to_string(ep.port());
  if constexpr (kTls) {
    if (dialled_) {
      co_await ServeHttp2(this->shared_from_this(), nullptr, remote_, std::move(received_));
      co_await Close();
      co_return;
    }
    // A peer that connects and does not finish the handshake in time is dropped.
    Arm(opts().handshake_timeout_sec);
    auto [hs] = co_await stream_.async_handshake(ssl::stream_base::server, kAwait);
    Disarm();
    if (!hs && SSL_is_init_finished(stream_.native_handle())) {
      if (http2::NegotiatedH2(stream_.native_handle())) {
        co_await ServeHttp2(this->shared_from_this(), PeerCert(), remote_);
      } else {
        co_await ServeRequests();
      }
    }
  } else {
    co_await ServeRequests();
  }
  co_await Close();
}

template <typename Stream>
net::awaitable<void> Connection<Stream>::Close() {
  error_code ec;
  if constexpr (kTls) {
    if (session_taken_ || peer_dropped_) {
      socket().shutdown(tcp::socket::shutdown_both, ec);
      socket().close(ec);
      co_return;
    }
    // The TLS shutdown waits for the peer's close_notify; not for long.
    Arm(kCloseTimeoutSec);
    co_await stream_.async_shutdown(kAwait);
    Disarm();
  } else {
    socket().shutdown(tcp::socket::shutdown_both, ec);
  }
  socket().close(ec);
}

template <typename Stream>
net::awaitable<void> Connection<Stream>::Handle(Request& req, StreamResponder<Stream>& responder) {
  auto work = [this, &req, r = &responder] {
    server_.handler(req, *r);
    if (!r->Responded()) {
      r->Respond(500, {{"Content-Type", "application/json"}},
                 StatusBody(500, "InternalError", "no response"));
    }
    r->Finish();
  };
  if (responder.on_loop()) {
    work();
    co_return;
  }
  auto initiate = [work, ex = executor()](auto handler) mutable {
    auto h = std::make_shared<decltype(handler)>(std::move(handler));
    SharedBlockingPool().Submit([work, h, ex] {
      work();
      net::post(ex, [h] { std::move (*h)(); });
    });
  };
  WatchBlockingWrites();
  co_await net::async_initiate<decltype(net::use_awaitable), void()>(initiate, net::use_awaitable);
  Disarm();
}

// A client still sending an oversized body would see a reset instead of
// the 413 if the connection closed at once: read and drop what it sends
// (bounded in bytes and time) so it gets to read the answer.
template <typename Stream>
net::awaitable<void> Connection<Stream>::DiscardUnreadBody() {
  constexpr size_t kMaxDiscard = 64 * 1024 * 1024;
  Arm(kDiscardTimeoutSec);
  char sink[16384];
  size_t total = 0;
  while (total < kMaxDiscard) {
    auto [ec, n] = co_await stream_.async_read_some(net::buffer(sink), kAwait);
    if (ec || n == 0) break;
    total += n;
  }
  Disarm();
}

template <typename Stream>
net::awaitable<void> Connection<Stream>::ServeRequests() {
  auto self = this->shared_from_this();
  X509* cert = PeerCert();
  while (!server_.stopping) {
    RequestReader parser(opts().max_body_bytes, 64 * 1024);
    // Covers both an idle keep-alive connection and a peer sending its
    // request too slowly.
    Arm(opts().idle_timeout_sec);
    auto [ec, n] = co_await http::async_read(stream_, buffer_, parser, kAwait);
    Disarm();
    if (ec == http::error::body_limit) {
      http::response<http::string_body> res;
      res.version(11);
      res.result(413);
      res.set("Content-Type", "application/json");
      res.keep_alive(false);
      res.body() =
          StatusBody(413, "RequestEntityTooLarge",
                     "Request entity too large: limit is " + std::to_string(opts().max_body_bytes));
      res.prepare_payload();
      Arm(opts().send_timeout_sec);
      co_await http::async_write(stream_, res, kAwait);
      Disarm();
      co_await DiscardUnreadBody();
      co_return;
    }
    if (ec) {
      peer_dropped_ = ec == ssl::error::stream_truncated || ec == net::error::connection_reset;
      co_return;
    }
    bool keep_alive = parser.keep_alive();
    Request req = parser.Take(cert, remote_);
    bool on_loop = opts().runs_on_loop && opts().runs_on_loop(req);
    auto responder = std::make_shared<StreamResponder<Stream>>(self, keep_alive, on_loop);
    co_await Handle(req, *responder);
    if (responder->take()) {
      co_await SwitchProtocols(responder->switch_head(), responder->take());
      co_return;
    }
    if (auto stream = responder->async_stream()) {
      co_await stream->Run();
      co_return;
    }
    if constexpr (kTls) {
      if (auto& wire = responder->wire()) {
        error_code wec;
        size_t done = WriteNow(*wire, wec);
        if (!wec && done < wire->size()) {
          Arm(opts().send_timeout_sec);
          auto [ec, n] = co_await net::async_write(
              stream_, net::buffer(wire->data() + done, wire->size() - done), kAwait);
          wec = ec;
          Disarm();
        }
        if (wec) responder->set_failed();
        wire.reset();
      }
    }
    if (auto& response = responder->response()) {
      Arm(opts().send_timeout_sec);
      auto [wec, written] = co_await http::async_write(stream_, *response, kAwait);
      Disarm();
      if (wec) responder->set_failed();
      response.reset();
    }
    if (!responder->keep_going()) co_return;
  }
}

template <typename Stream>
net::awaitable<void> Connection<Stream>::SwitchProtocols(
    const std::string& head, std::function<void(http2::Upgraded)>& take) {
  if constexpr (kTls) {
    if (!head.empty()) {
      Arm(opts().send_timeout_sec);
      auto [ec, n] = co_await net::async_write(stream_, net::buffer(head), kAwait);
      Disarm();
      if (ec) co_return;
    }
    struct Wait {
      explicit Wait(net::any_io_executor ex) : timer(std::move(ex)) {}
      net::steady_timer timer;
      bool done = false;
    };
    auto wait = std::make_shared<Wait>(executor());
    http2::Upgraded up;
    up.owner = this->shared_from_this();
    up.stream = &stream_;
    auto data = buffer_.data();
    up.received.assign(static_cast<const char*>(data.data()), data.size());
    buffer_.consume(buffer_.size());
    up.done = [wait, ex = executor()] {
      net::post(ex, [wait] {
        wait->done = true;
        wait->timer.cancel();
      });
    };
    std::exchange(take, nullptr)(std::move(up));
    while (!wait->done) {
      wait->timer.expires_at(net::steady_timer::time_point::max());
      co_await wait->timer.async_wait(kAwait);
    }
    // The TLS session was the taker's: no close_notify from here.
    session_taken_ = true;
  } else {
    (void)head;
    (void)take;
    co_return;
  }
}

}  // namespace flotilla::apiserver::http_internal
