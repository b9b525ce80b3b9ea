// H2Pool and its connections (h2_connection.h).
#include "client/h2_connection.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <map>
#include <optional>

#include "base/http2.h"
#include "base/io.h"
#include "client/connection.h"

namespace flotilla::client {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;
using boost::system::error_code;

namespace {

constexpr auto kAwaitH2 = net::as_tuple(net::use_awaitable);
// The receive windows the client grants: 4 MiB per stream, 64 MiB for the
// connection, so that a large list is not held to a round trip per 64 KiB
// (HTTP/2's default window).
constexpr int32_t kStreamWindow = 4 << 20;
constexpr int32_t kConnectionWindow = 64 << 20;
// Streams assumed allowed until the server's SETTINGS say (HTTP/2 advises
// at least 100; kube-apiserver allows 100).
constexpr uint32_t kDefaultMaxStreams = 100;
// How long a write to the server may make no progress.
constexpr std::chrono::seconds kWriteTimeout{30};

}  // namespace

struct OpenWait;

class H2Connection : public std::enable_shared_from_this<H2Connection> {
 public:
  H2Connection(std::shared_ptr<ssl::context> tls, const Endpoint& endpoint)
      : tls_(std::move(tls)),
        endpoint_(endpoint),
        strand_(net::make_strand(SharedIoContext())),
        resolver_(strand_),
        own_stream_(std::in_place, strand_, *tls_),
        stream_(*own_stream_),
        timer_(strand_) {}
  // A connection that came to us (http2::Upgraded): this side sends the
  // requests. Its stream's executor is a strand.
  H2Connection(http2::Upgraded& up, const Endpoint& endpoint)
      : endpoint_(endpoint),
        strand_(up.stream->get_executor()),
        resolver_(strand_),
        stream_(*up.stream),
        stream_owner_(std::move(up.owner)),
        received_(std::move(up.received)),
        on_end_(std::move(up.done)),
        timer_(strand_) {
    keepalive_.emplace(strand_);
  }

  // For a connection that came to us: starts the session, on the strand.
  // It PINGs the peer every `keepalive`, and closes when a PING goes
  // unanswered until the next; `on_end` runs once it has ended.
  void StartAdopted(Duration keepalive, std::function<void()> on_end) {
    net::post(strand_,
              [self = shared_from_this(), keepalive, on_end = std::move(on_end)]() mutable {
                self->on_adopted_end_ = std::move(on_end);
                self->StartSession();
                if (keepalive > Duration::zero()) self->Keepalive(keepalive);
              });
  }
  // Any thread: ends the connection at once (the Cluster went away).
  void Close() {
    net::post(strand_, [self = shared_from_this()] {
      if (self->pump_) self->pump_->ShutDown();
    });
  }

  // Connects and completes the handshake, offering h2, within `timeout`;
  // *h2 says whether the server took it. Blocks the calling thread.
  // *retryable is false when the certificate did not verify or it timed out.
  Status Open(Duration timeout, bool* h2, bool* retryable);

  // Reserves a stream; false when the connection takes no more.
  bool TryReserve() {
    MutexLock lock(mu_);
    if (closing_ || active_ >= max_streams_) return false;
    ++active_;
    return true;
  }
  bool Dead() {
    MutexLock lock(mu_);
    return closing_;
  }
  // Any thread: takes no new stream, and closes (GOAWAY) once the streams
  // it carries have ended: its pool is gone.
  void Retire() {
    {
      MutexLock lock(mu_);
      closing_ = true;
    }
    net::post(strand_, [self = shared_from_this()] {
      self->retired_ = true;
      self->CloseIfRetired();
    });
  }

  // After TryReserve: starts the exchange.
  std::shared_ptr<StreamCall> Submit(H2Request req, std::shared_ptr<H2Exchange> exchange,
                                     Duration timeout, bool whole);

 private:
  struct Call : StreamCall {
    Call(std::shared_ptr<H2Connection> c, H2Request r, std::shared_ptr<H2Exchange> e, Duration t,
         bool w)
        : conn(std::move(c)),
          req(std::move(r)),
          exchange(std::move(e)),
          timeout(t),
          whole(w),
          timer(conn->strand_) {}
    void Cancel() override {
      auto c = conn;  // null once closed
      if (!c) return;
      net::post(c->strand_, [c, self = shared_from_this()] { c->CancelCall(self); });
    }
    std::shared_ptr<Call> shared_from_this() { return self.lock(); }

    std::weak_ptr<Call> self;
    // On the strand from here; conn is reset when the call ends.
    std::shared_ptr<H2Connection> conn;
    H2Request req;
    size_t body_sent = 0;
    std::shared_ptr<H2Exchange> exchange;
    const Duration timeout;
    const bool whole;
    net::steady_timer timer;
    int32_t id = -1;
    int code = 0;
    std::vector<std::pair<std::string, std::string>> headers;
    bool headed = false;
    bool cancelled = false;
    bool timed_out = false;
    bool finished = false;
  };

  net::awaitable<void> Connect(Duration timeout, std::shared_ptr<OpenWait> wait);
  net::awaitable<void> Run();
  void StartSession();
  // Ends Open's wait.
  static void Opened(OpenWait& wait, Status status, bool h2, bool verify_failed);
  // On the strand: the server's first SETTINGS came; Open is done.
  void SettingsSeen();
  void Flush() { pump_->Flush(shared_from_this()); }
  void CloseIfRetired() {
    if (!retired_ || !calls_.empty() || !session_ || ended_ || closing_sent_) return;
    closing_sent_ = true;
    nghttp2_session_terminate_session(session_.get(), NGHTTP2_NO_ERROR);
    pump_->CloseAfterFlush(shared_from_this());
  }
  void DoSubmit(const std::shared_ptr<Call>& call);
  void CancelCall(const std::shared_ptr<Call>& call);
  void Finish(Call& call, Status status, bool sent, bool retryable = true);
  Call* Find(int32_t id) {
    auto it = calls_.find(id);
    return it == calls_.end() ? nullptr : it->second.get();
  }
  static Status Failed(const std::string& what, const error_code& ec, bool timed_out) {
    if (timed_out) return Status::Timeout(what + ": timed out");
    return Status::Unavailable(what + ": " + ec.message());
  }
  void Abort() {
    error_code ec;
    resolver_.cancel();
    stream_.next_layer().shutdown(tcp::socket::shutdown_both, ec);
  }
  // On the strand: a PING every `period`; none answered since the last
  // one sent ends the connection.
  void Keepalive(Duration period) {
    if (ended_) return;
    if (ping_outstanding_) {
      pump_->ShutDown();
      return;
    }
    ping_outstanding_ = true;
    nghttp2_submit_ping(session_.get(), NGHTTP2_FLAG_NONE, nullptr);
    Flush();
    keepalive_->expires_after(period);
    keepalive_->async_wait([self = shared_from_this(), period](error_code ec) {
      if (!ec) self->Keepalive(period);
    });
  }

  static int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                      size_t namelen, const uint8_t* value, size_t valuelen, uint8_t, void* user);
  static int OnFrameRecv(nghttp2_session*, const nghttp2_frame* frame, void* user);
  static int OnDataChunk(nghttp2_session*, uint8_t, int32_t id, const uint8_t* data, size_t len,
                         void* user);
  static int OnStreamClose(nghttp2_session*, int32_t id, uint32_t error, void* user);
  static ssize_t ReadBody(nghttp2_session*, int32_t, uint8_t* buf, size_t length, uint32_t* flags,
                          nghttp2_data_source* source, void*);

  const std::shared_ptr<ssl::context> tls_;  // null for a connection that came to us
  const Endpoint endpoint_;
  net::any_io_executor strand_;
  tcp::resolver resolver_;
  std::optional<http2::TlsStream> own_stream_;  // a connection we dialled
  http2::TlsStream& stream_;
  // A connection that came to us: what keeps its stream alive, the HTTP/2
  // bytes already read, and what to call once done with it.
  std::shared_ptr<void> stream_owner_;
  std::string received_;
  std::function<void()> on_end_;
  std::function<void()> on_adopted_end_;
  net::steady_timer timer_;
  std::optional<net::steady_timer> keepalive_;
  bool ping_outstanding_ = false;  // on the strand
  http2::SessionPtr session_;
  std::optional<http2::Pump> pump_;
  std::map<int32_t, std::shared_ptr<Call>> calls_;  // on the strand
  bool ended_ = false;                              // on the strand
  // Open's wait, until the server's SETTINGS come (on the strand).
  std::shared_ptr<OpenWait> open_wait_;
  std::shared_ptr<bool> open_timed_out_;
  bool retired_ = false;       // on the strand
  bool closing_sent_ = false;  // on the strand
  Mutex mu_;
  bool closing_ GUARDED_BY(mu_) = false;  // takes no new stream (GOAWAY, failed)
  size_t active_ GUARDED_BY(mu_) = 0;     // reserved streams
  uint32_t max_streams_ GUARDED_BY(mu_) = kDefaultMaxStreams;
};

struct OpenWait {
  Mutex mu;
  CondVar cv;
  bool done GUARDED_BY(mu) = false;
  Status status GUARDED_BY(mu);
  bool h2 GUARDED_BY(mu) = false;
  bool verify_failed GUARDED_BY(mu) = false;
};

Status H2Connection::Open(Duration timeout, bool* h2, bool* retryable) {
  auto wait = std::make_shared<OpenWait>();
  net::co_spawn(strand_, Connect(timeout, wait), net::detached);
  MutexLock lock(wait->mu);
  ScopedBlocking blocking;
  wait->cv.Wait(lock, [&]() REQUIRES(wait->mu) { return wait->done; });
  *h2 = wait->h2;
  *retryable = !wait->verify_failed && !wait->status.Is(Reason::kTimeout);
  return wait->status;
}

net::awaitable<void> H2Connection::Connect(Duration timeout, std::shared_ptr<OpenWait> wait) {
  auto self = shared_from_this();
  auto timed_out = std::make_shared<bool>(false);
  if (timeout > Duration::zero()) {
    timer_.expires_after(timeout);
    timer_.async_wait([self, timed_out](error_code ec) {
      if (ec) return;
      *timed_out = true;
      self->Abort();
    });
  }
  Status status;
  bool h2 = false;
  bool verify_failed = false;
  auto [resolve_ec, addresses] =
      co_await resolver_.async_resolve(endpoint_.host, endpoint_.port, kAwaitH2);
  if (resolve_ec) {
    status = *timed_out ? Failed("dial tcp", resolve_ec, *timed_out)
                        : Status::Unavailable("dial tcp: lookup " + endpoint_.host + ": " +
                                              resolve_ec.message());
  } else {
    auto [connect_ec, peer] =
        co_await net::async_connect(stream_.next_layer(), addresses, kAwaitH2);
    if (connect_ec) {
      status = Failed("dial tcp " + endpoint_.host_header, connect_ec, *timed_out);
    } else {
      error_code ec;
      stream_.next_layer().set_option(tcp::no_delay(true), ec);
      stream_.next_layer().set_option(net::socket_base::keep_alive(true), ec);
      PrepareTls(stream_.native_handle(), endpoint_);
      http2::OfferAlpn(stream_.native_handle(), true);
      auto [tls_ec] = co_await stream_.async_handshake(ssl::stream_base::client, kAwaitH2);
      Status handshake = tls_ec ? Failed("TLS handshake", tls_ec, *timed_out) : Status::Ok();
      status =
          HandshakeResult(stream_.native_handle(), endpoint_, std::move(handshake), &verify_failed);
      h2 = status.ok() && http2::NegotiatedH2(stream_.native_handle());
    }
  }
  if (h2) {
    // Ready once the server's SETTINGS say how many streams it takes (the
    // timer still bounds that): a burst of watches started before would
    // be counted against HTTP/2's assumed 100 and open a second
    // connection the server's limit did not call for.
    open_wait_ = std::move(wait);
    open_timed_out_ = std::move(timed_out);
    StartSession();
    co_return;
  }
  timer_.cancel();
  {
    MutexLock lock(mu_);
    closing_ = true;
  }
  Abort();
  Opened(*wait, std::move(status), false, verify_failed);
}

void H2Connection::Opened(OpenWait& wait, Status status, bool h2, bool verify_failed) {
  MutexLock lock(wait.mu);
  wait.done = true;
  wait.status = std::move(status);
  wait.h2 = h2;
  wait.verify_failed = verify_failed;
  wait.cv.NotifyAll();
}

void H2Connection::SettingsSeen() {
  if (!open_wait_) return;
  timer_.cancel();
  Opened(*std::exchange(open_wait_, nullptr), Status::Ok(), true, false);
}

void H2Connection::StartSession() {
  session_ = http2::NewSession(http2::Side::kClient,
                               {.on_header = OnHeader,
                                .on_data_chunk = OnDataChunk,
                                .on_frame_recv = OnFrameRecv,
                                .on_stream_close = OnStreamClose},
                               this);
  nghttp2_session* raw = session_.get();
  nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kStreamWindow},
  };
  nghttp2_submit_settings(raw, NGHTTP2_FLAG_NONE, settings, std::size(settings));
  nghttp2_session_set_local_window_size(raw, NGHTTP2_FLAG_NONE, 0, kConnectionWindow);
  pump_.emplace(stream_, raw, kWriteTimeout);
  net::co_spawn(strand_, Run(), net::detached);
}

net::awaitable<void> H2Connection::Run() {
  auto self = shared_from_this();
  error_code ec = co_await pump_->Run(self, std::exchange(received_, {}));
  {
    MutexLock lock(mu_);
    closing_ = true;
  }
  ended_ = true;
  pump_->ShutDown();
  if (keepalive_) keepalive_->cancel();
  if (open_wait_) {  // no SETTINGS came
    timer_.cancel();
    Status failed = *open_timed_out_
                        ? Status::Timeout("awaiting the server's HTTP/2 SETTINGS: timed out")
                        : Status::Unavailable(
                              "the HTTP/2 connection ended before the server's "
                              "SETTINGS: " +
                              (ec ? ec.message() : std::string("closed")));
    Opened(*std::exchange(open_wait_, nullptr), std::move(failed), true, false);
  }
  std::string why = ec ? ec.message() : "closed";
  auto calls = std::move(calls_);
  calls_.clear();
  for (auto& [id, call] : calls) {
    Finish(*call, Status::Unavailable("the HTTP/2 connection ended: " + why), true, true);
  }
  // A connection that came to us: its owner may close the stream now.
  if (on_adopted_end_) std::exchange(on_adopted_end_, nullptr)();
  if (on_end_) std::exchange(on_end_, nullptr)();
}

std::shared_ptr<StreamCall> H2Connection::Submit(H2Request req,
                                                 std::shared_ptr<H2Exchange> exchange,
                                                 Duration timeout, bool whole) {
  auto call = std::make_shared<Call>(shared_from_this(), std::move(req), std::move(exchange),
                                     timeout, whole);
  call->self = call;
  net::post(strand_, [self = shared_from_this(), call] { self->DoSubmit(call); });
  return call;
}

void H2Connection::DoSubmit(const std::shared_ptr<Call>& call) {
  if (call->cancelled) return Finish(*call, Status::Ok(), false);
  if (ended_) return Finish(*call, Status::Unavailable("the HTTP/2 connection ended"), false);
  http2::HeaderBlock block;
  block.Add(":method", call->req.method);
  block.Add(":scheme", "https");
  block.Add(":authority", endpoint_.host_header);
  block.Add(":path", call->req.path);
  for (const auto& [name, value] : call->req.headers) block.Add(name, value);
  if (!call->req.body.empty()) block.Set("content-length", std::to_string(call->req.body.size()));
  nghttp2_data_provider provider{};
  provider.source.ptr = call.get();
  provider.read_callback = ReadBody;
  int32_t id = nghttp2_submit_request(session_.get(), nullptr, block.data(), block.size(),
                                      call->req.body.empty() ? nullptr : &provider, nullptr);
  if (id < 0) {
    return Finish(*call, Status::Unavailable(std::string("HTTP/2: ") + nghttp2_strerror(id)),
                  false);
  }
  call->id = id;
  // nghttp2 copied the head's fields; from here on only the body is read,
  // and a watch's call lives as long as the watch.
  std::string().swap(call->req.method);
  std::string().swap(call->req.path);
  decltype(call->req.headers)().swap(call->req.headers);
  calls_[id] = call;
  if (call->timeout > Duration::zero()) {
    call->timer.expires_after(call->timeout);
    call->timer.async_wait([self = shared_from_this(), call](error_code ec) {
      if (ec || call->finished) return;
      call->timed_out = true;
      nghttp2_submit_rst_stream(self->session_.get(), NGHTTP2_FLAG_NONE, call->id, NGHTTP2_CANCEL);
      self->Flush();
    });
  }
  Flush();
}

void H2Connection::CancelCall(const std::shared_ptr<Call>& call) {
  if (call->finished || call->cancelled) return;
  call->cancelled = true;
  if (call->id < 0) return;  // DoSubmit ends it
  nghttp2_submit_rst_stream(session_.get(), NGHTTP2_FLAG_NONE, call->id, NGHTTP2_CANCEL);
  Flush();
}

void H2Connection::Finish(Call& call, Status status, bool sent, bool retryable) {
  if (call.finished) return;
  call.finished = true;
  call.timer.cancel();
  {
    MutexLock lock(mu_);
    --active_;
  }
  auto exchange = std::move(call.exchange);
  call.conn.reset();
  call.req.body.clear();
  exchange->OnClose(std::move(status), sent, retryable);
  if (retired_) net::post(strand_, [self = shared_from_this()] { self->CloseIfRetired(); });
}

int H2Connection::OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                           size_t namelen, const uint8_t* value, size_t valuelen, uint8_t,
                           void* user) {
  auto* self = static_cast<H2Connection*>(user);
  Call* call = self->Find(frame->hd.stream_id);
  if (call == nullptr || call->headed) return 0;
  std::string_view n(reinterpret_cast<const char*>(name), namelen);
  std::string_view v(reinterpret_cast<const char*>(value), valuelen);
  if (n == ":status") {
    call->code = std::atoi(std::string(v).c_str());
  } else if (!n.starts_with(':')) {
    call->headers.emplace_back(n, v);
  }
  return 0;
}

int H2Connection::OnFrameRecv(nghttp2_session* session, const nghttp2_frame* frame, void* user) {
  auto* self = static_cast<H2Connection*>(user);
  switch (frame->hd.type) {
    case NGHTTP2_SETTINGS:
      if ((frame->hd.flags & NGHTTP2_FLAG_ACK) == 0) {
        {
          MutexLock lock(self->mu_);
          self->max_streams_ =
              nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
        }
        self->SettingsSeen();
      }
      return 0;
    case NGHTTP2_GOAWAY: {
      MutexLock lock(self->mu_);
      self->closing_ = true;
      return 0;
    }
    case NGHTTP2_PING:
      if ((frame->hd.flags & NGHTTP2_FLAG_ACK) != 0) self->ping_outstanding_ = false;
      return 0;
    case NGHTTP2_HEADERS:
      break;
    default:
      return 0;
  }
  Call* call = self->Find(frame->hd.stream_id);
  if (call == nullptr || call->headed) return 0;
  if (call->code < 200) {  // an interim response; the final one follows
    call->code = 0;
    call->headers.clear();
    return 0;
  }
  call->headed = true;
  if (!call->whole) call->timer.cancel();
  if (!call->cancelled) call->exchange->OnHeaders(call->code, std::move(call->headers));
  return 0;
}

int H2Connection::OnDataChunk(nghttp2_session* session, uint8_t, int32_t id, const uint8_t* data,
                              size_t len, void* user) {
  auto* self = static_cast<H2Connection*>(user);
  Call* call = self->Find(id);
  if (call == nullptr || call->cancelled || call->timed_out) return 0;
  if (!call->exchange->OnData(std::string_view(reinterpret_cast<const char*>(data), len))) {
    call->cancelled = true;
    nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
  }
  return 0;
}

int H2Connection::OnStreamClose(nghttp2_session*, int32_t id, uint32_t error, void* user) {
  auto* self = static_cast<H2Connection*>(user);
  auto it = self->calls_.find(id);
  if (it == self->calls_.end()) return 0;
  auto call = std::move(it->second);
  self->calls_.erase(it);
  Status status;
  bool sent = true;
  if (call->timed_out) {
    status = Status::Timeout("awaiting the response: timed out");
  } else if (call->cancelled) {
    status = Status::Ok();
  } else if (error == NGHTTP2_REFUSED_STREAM) {
    status = Status::Unavailable("the server refused the HTTP/2 stream");
    sent = false;
  } else if (error != NGHTTP2_NO_ERROR) {
    status = Status::Unavailable(std::string("the server reset the HTTP/2 stream: ") +
                                 nghttp2_http2_strerror(error));
  } else if (!call->headed) {
    status = Status::Unavailable("the HTTP/2 stream ended without a response");
  }
  self->Finish(*call, std::move(status), sent, !call->timed_out);
  return 0;
}

ssize_t H2Connection::ReadBody(nghttp2_session*, int32_t, uint8_t* buf, size_t length,
                               uint32_t* flags, nghttp2_data_source* source, void*) {
  auto& call = *static_cast<Call*>(source->ptr);
  const std::string& body = call.req.body;
  size_t n = std::min(length, body.size() - call.body_sent);
  std::memcpy(buf, body.data() + call.body_sent, n);
  call.body_sent += n;
  if (call.body_sent == body.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
  return static_cast<ssize_t>(n);
}

H2Tunnel::H2Tunnel(std::string name) : name_(std::move(name)) {}

H2Tunnel::~H2Tunnel() { Close(); }

Status H2Tunnel::Attach(http2::Upgraded up, Duration keepalive, std::function<void()> on_end,
                        bool replace) {
  MutexLock lock(mu_);
  if (replace && conn_ != nullptr) {
    // Its end finds another in its place and leaves that be.
    conn_->Close();
    conn_.reset();
  }
  if (conn_ != nullptr && !conn_->Dead()) {
    auto done = std::move(up.done);
    lock.Unlock();
    done();
    return Status::Conflict("cluster \"" + name_ + "\" already has a connected agent");
  }
  Endpoint endpoint;
  endpoint.origin = "tunnel:" + name_;
  endpoint.host = name_;
  endpoint.host_header = name_;
  auto conn = std::make_shared<H2Connection>(up, endpoint);
  conn_ = conn;
  std::weak_ptr<H2Connection> weak = conn;
  conn->StartAdopted(keepalive, [tunnel = weak_from_this(), weak, on_end = std::move(on_end)] {
    if (auto self = tunnel.lock()) {
      MutexLock lock(self->mu_);
      if (self->conn_ == weak.lock()) self->conn_.reset();
    }
    if (on_end) on_end();
  });
  return Status::Ok();
}

void H2Tunnel::Close() {
  MutexLock lock(mu_);
  if (conn_ != nullptr) conn_->Close();
}

bool H2Tunnel::Connected() {
  MutexLock lock(mu_);
  return conn_ != nullptr && !conn_->Dead();
}

std::shared_ptr<H2Connection> H2Tunnel::Current() {
  MutexLock lock(mu_);
  return conn_;
}

H2Pool::H2Pool(std::shared_ptr<ssl::context> tls, Endpoint endpoint)
    : tls_(std::move(tls)), endpoint_(std::move(endpoint)) {}

H2Pool::H2Pool(std::shared_ptr<H2Tunnel> tunnel) : tunnel_(std::move(tunnel)) {}

H2Pool::~H2Pool() {
  MutexLock lock(mu_);
  for (const auto& c : conns_) c->Retire();
}

StatusOr<std::shared_ptr<H2Connection>> H2Pool::Acquire(Duration timeout, bool* retryable) {
  if (tunnel_ != nullptr) {
    // The peer's own connection, which this pool never retires.
    *retryable = true;
    auto conn = tunnel_->Current();
    if (conn == nullptr || !conn->TryReserve()) {
      return Status::Unavailable("no agent is connected for cluster \"" + tunnel_->name() + "\"");
    }
    return conn;
  }
  MutexLock lock(mu_);
  for (;;) {
    if (declined_) return std::shared_ptr<H2Connection>();
    std::erase_if(conns_, [](const auto& c) { return c->Dead(); });
    for (const auto& c : conns_) {
      if (c->TryReserve()) return c;
    }
    if (!opening_) break;
    ScopedBlocking blocking;
    cv_.Wait(lock);
  }
  opening_ = true;
  lock.Unlock();
  auto conn = std::make_shared<H2Connection>(tls_, endpoint_);
  bool h2 = false;
  Status opened = conn->Open(timeout, &h2, retryable);
  lock.Lock();
  opening_ = false;
  cv_.NotifyAll();
  if (!opened.ok()) return opened;
  if (!h2) {
    declined_ = true;
    return std::shared_ptr<H2Connection>();
  }
  conns_.push_back(conn);
  if (!conn->TryReserve()) return Status::Unavailable("the HTTP/2 connection ended at once");
  return conn;
}

namespace {
// A call that never started: nothing to cancel.
struct NoCall : StreamCall {
  void Cancel() override {}
};
}  // namespace

std::shared_ptr<StreamCall> H2Pool::Start(H2Request req, std::shared_ptr<H2Exchange> exchange,
                                          Duration timeout, bool whole) {
  bool retryable = true;
  auto conn = Acquire(timeout, &retryable);
  if (!conn.ok()) {
    exchange->OnClose(conn.status(), false, retryable);
    return std::make_shared<NoCall>();
  }
  if (*conn == nullptr) return nullptr;
  return (*conn)->Submit(std::move(req), std::move(exchange), timeout, whole);
}

std::shared_ptr<H2Pool> SharedH2Pool(const std::string& identity, std::shared_ptr<ssl::context> tls,
                                     const Endpoint& endpoint) {
  struct Pools {
    Mutex mu;
    std::map<std::string, std::weak_ptr<H2Pool>> by_key GUARDED_BY(mu);
  };
  static auto* pools = new Pools();  // never destroyed: used until the process ends
  // What a connection is to: the address and the :authority it sends.
  std::string key = endpoint.host + '\n' + endpoint.port + '\n' + endpoint.host_header + '\n' +
                    endpoint.verify_name + '\n' + (endpoint.verify ? "1" : "0") + '\n' + identity;
  MutexLock lock(pools->mu);
  auto it = pools->by_key.find(key);
  if (it != pools->by_key.end()) {
    if (auto pool = it->second.lock()) return pool;
  }
  std::erase_if(pools->by_key, [](const auto& entry) { return entry.second.expired(); });
  auto pool = std::make_shared<H2Pool>(std::move(tls), endpoint);
  pools->by_key[key] = pool;
  return pool;
}

}  // namespace flotilla::client
