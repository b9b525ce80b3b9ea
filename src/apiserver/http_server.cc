#include "apiserver/http_server.h"

#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "apiserver/url.h"
#include "base/io.h"
#include "base/json.h"
#include "base/log.h"

namespace flotilla::apiserver {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;
using TlsStream = ssl::stream<tcp::socket>;
using boost::system::error_code;

constexpr auto kAwait = net::as_tuple(net::use_awaitable);
constexpr int kDiscardTimeoutSec = 5;
constexpr int kCloseTimeoutSec = 5;
constexpr size_t kBlock = 64 * 1024;

std::string StatusBody(int code, std::string_view reason, std::string_view message) {
  json::object o{{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
                 {"status", "Failure"}, {"message", message}, {"reason", reason},
                 {"code", code}};
  return json::serialize(o);
}

// Appends `data` framed as one chunk of a chunked body.
void AppendChunk(std::string& out, std::string_view data) {
  char size[24];
  int n = std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  out.append(size, static_cast<size_t>(n));
  out += data;
  out += "\r\n";
}

Request MakeRequest(http::request<http::string_body>& req, X509* cert, std::string remote) {
  Request r;
  r.method = std::string(req.method_string());
  r.target = std::string(req.target());
  SplitTarget(r.target, &r.path, &r.query);
  for (const auto& field : req) {
    std::string name(field.name_string());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto [it, inserted] = r.headers.emplace(name, std::string(field.value()));
    if (!inserted) it->second += "," + std::string(field.value());
  }
  r.body = std::move(req.body());
  r.peer_cert = cert;
  r.remote = std::move(remote);
  return r;
}

// What a connection needs of its server, and what the server needs of a
// connection to stop it.
class ConnectionBase {
 public:
  virtual ~ConnectionBase() = default;
  // Shuts the socket down (on the connection's strand), ending whatever
  // waits on it, a handler polling for the peer's leaving included.
  virtual void Abort() = 0;
};

struct ServerContext {
  const HttpServerOptions& opts;
  const Handler& handler;
  ssl::context& ssl_ctx;
  const std::atomic<bool>& stopping;
  // Called once when a connection's coroutine ends, its last use of this.
  std::function<void(ConnectionBase*)> finished;
};

template <typename Stream>
class AsyncStream;
template <typename Stream>
class StreamResponder;

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
    net::post(executor(), [self = this->shared_from_this()] { self->ShutDown(); });
  }

  // On the strand: shuts the socket down unless Disarm or another Arm comes
  // first, which ends any read or write waiting on it.
  void Arm(int seconds) {
    uint64_t gen = ++deadline_gen_;
    deadline_.expires_after(std::chrono::seconds(seconds));
    deadline_.async_wait([self = this->shared_from_this(), gen](error_code ec) {
      if (ec || gen != self->deadline_gen_) return;
      self->ShutDown();
    });
  }
  // Not close: a handler may be polling the descriptor, whose number must
  // not be reused before the connection ends (Close).
  void ShutDown() {
    error_code ignored;
    socket().shutdown(tcp::socket::shutdown_both, ignored);
  }
  void Disarm() {
    ++deadline_gen_;
    deadline_.cancel();
  }
  // A stream has taken the TLS session over from asio's stream (and ends it
  // itself): closing skips asio's shutdown.
  void set_session_taken() { session_taken_ = true; }

  // Runs `write(ec)`, a blocking write, under the send deadline; for a
  // handler's thread, never the loop's. While a handler runs nothing else
  // uses the stream, and a blocking write is much cheaper for a large body
  // than the loop's writes; the deadline's shutdown ends it if the peer
  // stops reading (asio's blocking writes poll without a timeout).
  template <typename Write>
  error_code WriteBlocking(Write write) {
    auto self = this->shared_from_this();
    net::post(executor(), [self] { self->Arm(self->opts().send_timeout_sec); });
    error_code ec;
    {
      ScopedBlocking blocking;  // for a peer that reads slowly
      write(ec);
    }
    net::post(executor(), [self] { self->Disarm(); });
    return ec;
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

  ServerContext& server_;
  Stream stream_;
  net::steady_timer deadline_;
  uint64_t deadline_gen_ = 0;   // on the strand
  bool session_taken_ = false;  // on the strand
  // On the strand: the peer closed its end without ending TLS (as a client
  // closing an idle pooled connection does), so there is nobody to send a
  // close_notify to.
  bool peer_dropped_ = false;
  boost::beast::flat_buffer buffer_;
  std::string remote_;
};

// A stream that outlives its handler. Chunks are encrypted and sent by
// whichever thread writes them, with a non-blocking send(2), as long as the
// socket takes them; what it does not take waits for the socket to be
// writable, on the connection's strand, and later chunks queue behind it.
// Meanwhile the strand watches the socket for the peer's leaving.
//
// When the stream starts, the stream takes the TLS session over from asio's
// stream: the session's BIOs become two memory BIOs of its own, so that a
// chunk costs one SSL_write and one send(2) on the writer's thread, with no
// hand-off to the loop (docs/benchmarks.md: 10,000 watches). Nothing is
// pending in asio's stream then: its operations end with their output sent,
// and nothing the peer sends after the request is read (a stream ends its
// connection). Every use of the session from then on holds mu_.
template <typename Stream>
class AsyncStream : public ChunkStream, public std::enable_shared_from_this<AsyncStream<Stream>> {
 public:
  static constexpr bool kTls = Connection<Stream>::kTls;

  // `head`: the response's header, sent before the first chunk.
  AsyncStream(std::shared_ptr<Connection<Stream>> conn, std::string head)
      : conn_(std::move(conn)),
        done_wake_(conn_->executor()),
        send_watch_(conn_->executor()),
        head_(std::move(head)) {}

  bool Write(std::string chunk) override {
    std::lock_guard lock(mu_);
    if (ending_) return false;
    if (queued_bytes_ + chunk.size() > conn_->opts().max_stream_buffer_bytes) {
      spdlog::debug("cutting off a stream {} bytes behind", queued_bytes_);
      for (const std::string& c : queue_) queued_bytes_ -= c.size();
      queue_.clear();
      ending_ = true;
      FlushLocked();
      return false;
    }
    queued_bytes_ += chunk.size();
    queue_.push_back(std::move(chunk));
    FlushLocked();
    return true;
  }

  void End() override {
    std::lock_guard lock(mu_);
    ending_ = true;
    FlushLocked();
  }

  void OnEnd(std::function<void()> fn) override {
    {
      std::lock_guard lock(mu_);
      if (!ended_) {
        on_end_ = std::move(fn);
        return;
      }
    }
    fn();
  }

  // On the strand, after the handler returned: sends until the stream ends
  // and the peer's watch has finished.
  net::awaitable<void> Run();

 private:
  int fd() { return conn_->socket().native_handle(); }

  // Sends what is queued as far as the socket takes it, unless the strand
  // waits for the socket (then it sends once it can); ends the stream once
  // ending and all is sent, or once the peer is gone. REQUIRES: mu_ held.
  void FlushLocked();
  // Frames the header and queued chunks (about kBlock bytes of them, and
  // the last chunk once ending) and encrypts them into out_. REQUIRES: mu_
  // held.
  void EncodeLocked();
  // Moves what the session wrote into out_. REQUIRES: mu_ held.
  void DrainSessionLocked();
  // Starts the end on the strand, once. REQUIRES: mu_ held.
  void EndLocked(bool failed);
  // On the strand: waits until the socket is writable, then flushes.
  void WaitWritable();
  // On the strand: waits for the peer to send something or leave.
  void WatchPeer();
  // On the strand: reads what the peer sent; true while it stays.
  bool PeerStays();
  // On the strand: the stream has ended.
  void Ended();
  // On the strand: the stream has ended and the peer's watch is done.
  void MaybeDone() {
    if (!ended_on_strand_ || !reader_done_) return;
    done_ = true;
    done_wake_.cancel();
  }
  std::chrono::seconds SendTimeout() const {
    return std::chrono::seconds(conn_->opts().send_timeout_sec);
  }
  // The watchdog: a send waiting since before the deadline closes the
  // connection, which ends it; one that started waiting later re-arms it;
  // with none waiting it rests until the next.
  void ArmWatch(std::chrono::steady_clock::time_point at) {
    watch_armed_ = true;
    send_watch_.expires_at(at);
    send_watch_.async_wait([self = this->shared_from_this()](error_code ec) {
      self->watch_armed_ = false;
      if (ec || !self->waiting_) return;
      auto deadline = self->wait_started_ + self->SendTimeout();
      if (std::chrono::steady_clock::now() >= deadline) return self->conn_->ShutDown();
      self->ArmWatch(deadline);
    });
  }

  std::shared_ptr<Connection<Stream>> conn_;
  // On the strand from here to mu_.
  net::steady_timer done_wake_;
  net::steady_timer send_watch_;
  bool watch_armed_ = false;
  bool waiting_ = false;  // for the socket to be writable
  std::chrono::steady_clock::time_point wait_started_;
  bool ended_on_strand_ = false;
  bool reader_done_ = false;
  bool done_ = false;

  std::mutex mu_;
  std::string head_;               // GUARDED_BY(mu_): "" once encoded
  std::deque<std::string> queue_;  // GUARDED_BY(mu_): chunks not yet encoded
  size_t queued_bytes_ = 0;        // GUARDED_BY(mu_): chunks not yet sent
  std::string out_;                // GUARDED_BY(mu_): bytes for the socket
  size_t out_sent_ = 0;            // GUARDED_BY(mu_): of out_
  size_t out_plain_bytes_ = 0;     // GUARDED_BY(mu_): chunk bytes out_ carries
  BIO* rbio_ = nullptr;            // GUARDED_BY(mu_): the session's, once taken
  BIO* wbio_ = nullptr;            // GUARDED_BY(mu_)
  bool started_ = false;           // GUARDED_BY(mu_): Run has taken the session
  bool strand_sends_ = false;      // GUARDED_BY(mu_): waiting for the socket
  bool ending_ = false;            // GUARDED_BY(mu_)
  bool terminated_ = false;        // GUARDED_BY(mu_): the last chunk is encoded
  bool end_posted_ = false;        // GUARDED_BY(mu_)
  bool ended_ = false;             // GUARDED_BY(mu_)
  std::function<void()> on_end_;   // GUARDED_BY(mu_)
};

template <typename Stream>
net::awaitable<void> AsyncStream<Stream>::Run() {
  {
    std::lock_guard lock(mu_);
    if constexpr (kTls) {
      SSL* ssl = conn_->stream().native_handle();
      rbio_ = BIO_new(BIO_s_mem());
      wbio_ = BIO_new(BIO_s_mem());
      SSL_set_bio(ssl, rbio_, wbio_);  // the session owns them now
      conn_->set_session_taken();
    }
    started_ = true;
    FlushLocked();
  }
  WatchPeer();
  while (!done_) {
    done_wake_.expires_at(net::steady_timer::time_point::max());
    co_await done_wake_.async_wait(kAwait);
  }
}

template <typename Stream>
void AsyncStream<Stream>::EncodeLocked() {
  std::string plain;
  plain.swap(head_);
  size_t taken = 0;
  while (!queue_.empty() && plain.size() < kBlock) {
    AppendChunk(plain, queue_.front());
    taken += queue_.front().size();
    queue_.pop_front();
  }
  out_plain_bytes_ += taken;
  if (ending_ && queue_.empty() && !terminated_) {
    plain += "0\r\n\r\n";
    terminated_ = true;
  }
  if constexpr (kTls) {
    // asio's stream lets a write stop at a record; what is left is written
    // on until all is.
    SSL* ssl = conn_->stream().native_handle();
    for (size_t done = 0; done < plain.size();) {
      int n = SSL_write(ssl, plain.data() + done, static_cast<int>(plain.size() - done));
      if (n <= 0) {
        ERR_clear_error();
        return EndLocked(true);
      }
      done += static_cast<size_t>(n);
    }
    DrainSessionLocked();
  } else {
    out_ += plain;
  }
}

template <typename Stream>
void AsyncStream<Stream>::DrainSessionLocked() {
  if constexpr (kTls) {
    char* data = nullptr;
    long n = BIO_get_mem_data(wbio_, &data);
    if (n <= 0) return;
    out_.append(data, static_cast<size_t>(n));
    (void)BIO_reset(wbio_);
  }
}

template <typename Stream>
void AsyncStream<Stream>::FlushLocked() {
  if (!started_ || strand_sends_ || end_posted_) return;
  while (true) {
    if (out_sent_ == out_.size()) {
      out_.clear();
      out_sent_ = 0;
      queued_bytes_ -= std::min(queued_bytes_, out_plain_bytes_);
      out_plain_bytes_ = 0;
      if (head_.empty() && queue_.empty() && (!ending_ || terminated_)) {
        if (terminated_) EndLocked(false);
        return;
      }
      EncodeLocked();
      if (end_posted_) return;
      continue;
    }
    ssize_t n =
        ::send(fd(), out_.data() + out_sent_, out_.size() - out_sent_, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      out_sent_ += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      strand_sends_ = true;
      net::post(conn_->executor(), [self = this->shared_from_this()] { self->WaitWritable(); });
      return;
    }
    return EndLocked(true);
  }
}

template <typename Stream>
void AsyncStream<Stream>::WaitWritable() {
  if (ended_on_strand_) return;
  waiting_ = true;
  wait_started_ = std::chrono::steady_clock::now();
  if (!watch_armed_) ArmWatch(wait_started_ + SendTimeout());
  conn_->socket().async_wait(tcp::socket::wait_write,
                             [self = this->shared_from_this()](error_code) {
                               self->waiting_ = false;
                               std::lock_guard lock(self->mu_);
                               self->strand_sends_ = false;
                               self->FlushLocked();  // a failed wait fails the send
                             });
}

template <typename Stream>
void AsyncStream<Stream>::EndLocked(bool failed) {
  if (end_posted_) return;
  end_posted_ = true;
  ending_ = true;
  if (failed) {
    queue_.clear();
    queued_bytes_ = 0;
  }
  net::post(conn_->executor(), [self = this->shared_from_this()] { self->Ended(); });
}

template <typename Stream>
void AsyncStream<Stream>::WatchPeer() {
  conn_->socket().async_wait(tcp::socket::wait_read,
                             [self = this->shared_from_this()](error_code ec) {
                               if (!ec && !self->ended_on_strand_ && self->PeerStays()) {
                                 return self->WatchPeer();
                               }
                               self->reader_done_ = true;
                               {
                                 std::lock_guard lock(self->mu_);
                                 self->EndLocked(true);
                               }
                               self->MaybeDone();
                             });
}

template <typename Stream>
bool AsyncStream<Stream>::PeerStays() {
  char buf[4096];
  ssize_t n = ::recv(fd(), buf, sizeof(buf), MSG_DONTWAIT);
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  if (n == 0) return false;
  if constexpr (kTls) {
    // Whatever the peer sends is read and dropped; its close_notify, or
    // anything the session cannot read, means it has left.
    std::lock_guard lock(mu_);
    BIO_write(rbio_, buf, static_cast<int>(n));
    SSL* ssl = conn_->stream().native_handle();
    while (true) {
      int r = SSL_read(ssl, buf, sizeof(buf));
      if (r > 0) continue;
      int err = SSL_get_error(ssl, r);
      ERR_clear_error();
      if (err != SSL_ERROR_WANT_READ) return false;
      break;
    }
    // The session may have answered (a key update): it goes out in order.
    if (BIO_ctrl_pending(wbio_) > 0) {
      DrainSessionLocked();
      FlushLocked();
    }
  }
  return true;
}

template <typename Stream>
void AsyncStream<Stream>::Ended() {
  std::function<void()> on_end;
  {
    std::lock_guard lock(mu_);
    ended_ = true;
    queue_.clear();
    on_end = std::move(on_end_);
    if constexpr (kTls) {
      // The close_notify, if the socket takes it at once; the connection
      // closes after.
      if (started_ && out_sent_ == out_.size()) {
        SSL* ssl = conn_->stream().native_handle();
        SSL_shutdown(ssl);
        ERR_clear_error();
        char* data = nullptr;
        long n = BIO_get_mem_data(wbio_, &data);
        if (n > 0) (void)::send(fd(), data, static_cast<size_t>(n), MSG_DONTWAIT | MSG_NOSIGNAL);
        (void)BIO_reset(wbio_);
      }
    }
  }
  ended_on_strand_ = true;
  send_watch_.cancel();
  if (on_end) on_end();
  // The peer's watch (and a wait for the socket) must be done before the
  // connection closes.
  error_code ignored;
  conn_->socket().cancel(ignored);
  MaybeDone();
}

// Answers from a handler's thread through the connection's strand.
template <typename Stream>
class StreamResponder : public Responder {
 public:
  // `on_loop`: the handler runs on the connection's strand, where nothing
  // may wait for the connection's I/O.
  StreamResponder(std::shared_ptr<Connection<Stream>> conn, bool keep_alive, bool on_loop)
      : conn_(std::move(conn)), keep_alive_(keep_alive), on_loop_(on_loop) {}

  // On the loop the response is written once the handler has returned, by
  // the connection's coroutine; on the pool, at once.
  void Respond(int code, const Headers& headers, std::string body) override {
    response_.emplace();
    response_->version(11);
    response_->result(static_cast<unsigned>(code));
    for (const auto& [k, v] : headers) response_->set(k, v);
    response_->keep_alive(keep_alive_);
    response_->body() = std::move(body);
    response_->prepare_payload();
    responded_ = true;
    if (on_loop_) return;
    failed_ = static_cast<bool>(conn_->WriteBlocking(
        [&](error_code& ec) { http::write(conn_->stream(), *response_, ec); }));
    response_.reset();
  }

  // On the blocking pool: the header, then the parts copied into blocks of
  // kBlock bytes, one TLS write per block rather than per part, and no
  // buffer the size of the body. On the loop, which cannot wait for its own
  // writes, the parts are copied into one body.
  void RespondParts(int code, const Headers& headers,
                    const std::vector<std::string_view>& parts) override {
    if (on_loop_) return Responder::RespondParts(code, headers, parts);
    size_t size = 0;
    for (std::string_view p : parts) size += p.size();
    auto res = Head(code, headers, keep_alive_);
    res.content_length(size);
    error_code ec = WriteHeader(res);
    std::string block;
    block.reserve(kBlock);
    auto flush = [&] {
      if (!ec && !block.empty()) ec = WriteRaw(block);
      block.clear();
    };
    for (std::string_view p : parts) {
      while (!ec && !p.empty()) {
        size_t n = std::min(p.size(), kBlock - block.size());
        block.append(p.data(), n);
        p.remove_prefix(n);
        if (block.size() == kBlock) flush();
      }
    }
    flush();
    responded_ = true;
    failed_ = static_cast<bool>(ec);
  }

  bool StartStream(int code, const Headers& headers) override {
    if (on_loop_) {
      spdlog::error("a synchronous stream cannot be served on the event loop");
      failed_ = true;
      return false;
    }
    auto res = Head(code, headers, false);
    res.chunked(true);
    error_code ec = WriteHeader(res);
    responded_ = true;
    streaming_ = true;
    failed_ = static_cast<bool>(ec);
    return !failed_;
  }

  // The header goes out with the first chunks, written by the stream.
  std::shared_ptr<ChunkStream> StartAsyncStream(int code, const Headers& headers) override {
    auto res = Head(code, headers, false);
    res.chunked(true);
    std::ostringstream head;
    head << res.base();
    responded_ = true;
    streaming_ = true;
    async_ = std::make_shared<AsyncStream<Stream>>(conn_, head.str());
    return async_;
  }

  bool WriteChunk(std::string_view data) override {
    if (failed_) return false;
    std::string chunk;
    AppendChunk(chunk, data);
    failed_ = static_cast<bool>(WriteRaw(chunk));
    return !failed_;
  }

  bool ClientGone() override { return WaitClientGone(0); }

  bool WaitClientGone(int millis) override {
    if (failed_) return true;
    pollfd pfd{conn_->socket().native_handle(), POLLRDHUP, 0};
    int n = ::poll(&pfd, 1, millis);
    return n > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
  }

  bool Responded() const override { return responded_; }

  // Ends a synchronous stream; on the handler's thread.
  void Finish() {
    if (streaming_ && !async_ && !failed_) WriteRaw(std::string("0\r\n\r\n"));
  }
  bool keep_going() const { return responded_ && !streaming_ && !failed_ && keep_alive_; }
  std::shared_ptr<AsyncStream<Stream>> async_stream() const { return async_; }
  // The response Respond left for the connection to write, if any.
  std::optional<http::response<http::string_body>>& response() { return response_; }
  void set_failed() { failed_ = true; }
  bool on_loop() const { return on_loop_; }

 private:
  static http::response<http::empty_body> Head(int code, const Headers& headers, bool keep_alive) {
    http::response<http::empty_body> res;
    res.version(11);
    res.result(static_cast<unsigned>(code));
    for (const auto& [k, v] : headers) res.set(k, v);
    res.keep_alive(keep_alive);
    return res;
  }
  template <typename Response>
  error_code WriteHeader(Response& res) {
    http::response_serializer<http::empty_body> sr(res);
    return conn_->WriteBlocking(
        [&](error_code& ec) { http::write_header(conn_->stream(), sr, ec); });
  }
  error_code WriteRaw(const std::string& bytes) {
    return conn_->WriteBlocking(
        [&](error_code& ec) { net::write(conn_->stream(), net::buffer(bytes), ec); });
  }

  std::shared_ptr<Connection<Stream>> conn_;
  bool keep_alive_;
  bool responded_ = false;
  bool streaming_ = false;
  const bool on_loop_;
  // Read by WaitClientGone, which a handler may call from a second thread.
  std::atomic<bool> failed_{false};
  std::shared_ptr<AsyncStream<Stream>> async_;
  std::optional<http::response<http::string_body>> response_;
};

template <typename Stream>
net::awaitable<void> Connection<Stream>::Serve() {
  // Whatever way this coroutine ends, the server learns it.
  struct Finished {
    Connection* conn;
    ~Finished() { conn->server_.finished(conn); }
  } finished{this};
  error_code ec;
  auto ep = socket().remote_endpoint(ec);
  if (!ec) remote_ = ep.address().to_string() + ":" + std::to_string(ep.port());
  if constexpr (kTls) {
    // A peer that connects and does not finish the handshake in time is dropped.
    Arm(opts().handshake_timeout_sec);
    auto [hs] = co_await stream_.async_handshake(ssl::stream_base::server, kAwait);
    Disarm();
    if (!hs && SSL_is_init_finished(stream_.native_handle())) co_await ServeRequests();
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
  co_await net::async_initiate<decltype(net::use_awaitable), void()>(initiate, net::use_awaitable);
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
    http::request_parser<http::string_body> parser;
    parser.body_limit(opts().max_body_bytes);
    parser.header_limit(64 * 1024);
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
    auto msg = parser.release();
    Request req = MakeRequest(msg, cert, remote_);
    bool on_loop = opts().runs_on_loop && opts().runs_on_loop(req);
    auto responder = std::make_shared<StreamResponder<Stream>>(self, msg.keep_alive(), on_loop);
    co_await Handle(req, *responder);
    if (auto stream = responder->async_stream()) {
      co_await stream->Run();
      co_return;
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

class HttpServerImpl : public HttpServer {
 public:
  HttpServerImpl(const HttpServerOptions& opts, Handler handler)
      : opts_(opts),
        handler_(std::move(handler)),
        ssl_ctx_(ssl::context::tls_server),
        acceptor_(net::make_strand(SharedIoContext())),
        context_{opts_, handler_, ssl_ctx_, stopping_, [this](ConnectionBase* c) { Finished(c); }} {
  }

  ~HttpServerImpl() override { Stop(); }

  Status InitTls() {
    error_code ec;
    ssl_ctx_.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                         ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                         ssl::context::no_tlsv1_1);
    // Idle watches keep no TLS buffers; the chain is not rebuilt per handshake.
    SSL_CTX_set_mode(ssl_ctx_.native_handle(), SSL_MODE_RELEASE_BUFFERS | SSL_MODE_NO_AUTO_CHAIN);
    ssl_ctx_.use_certificate_chain_file(opts_.cert_path, ec);
    if (!ec) ssl_ctx_.use_private_key_file(opts_.key_path, ssl::context::pem, ec);
    if (ec) return Status::Internal("loading serving certificate: " + ec.message());
    if (!opts_.client_ca_path.empty()) {
      ssl_ctx_.load_verify_file(opts_.client_ca_path, ec);
      if (ec) return Status::Internal("loading client CA: " + ec.message());
      ssl_ctx_.set_verify_mode(ssl::verify_peer, ec);
    }
    return Status::Ok();
  }

  Status Init() {
    error_code ec;
    if (!plain()) FLOTILLA_RETURN_IF_ERROR(InitTls());
    auto addr = net::ip::make_address(opts_.bind_address, ec);
    if (ec) return Status::BadRequest("invalid bind address " + opts_.bind_address);
    tcp::endpoint ep(addr, static_cast<unsigned short>(opts_.port));
    acceptor_.open(ep.protocol(), ec);
    if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(ep, ec);
    if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (ec) {
      return Status::Unavailable("cannot listen on " + opts_.bind_address + ":" +
                                 std::to_string(opts_.port) + ": " + ec.message());
    }
    port_ = acceptor_.local_endpoint().port();
    accepting_ = true;
    net::co_spawn(acceptor_.get_executor(), Accept(), [this](std::exception_ptr e) {
      if (e) spdlog::error("HTTP server: the accept loop failed");
      std::lock_guard lock(mu_);
      accepting_ = false;
      cv_.notify_all();
    });
    return Status::Ok();
  }

  int port() const override { return port_; }

  void Stop() override {
    if (stopping_.exchange(true)) return;
    net::post(acceptor_.get_executor(), [this] {
      error_code ec;
      acceptor_.close(ec);
      std::lock_guard lock(mu_);
      acceptor_closed_ = true;
      cv_.notify_all();
    });
    std::unique_lock lock(mu_);
    for (ConnectionBase* c : conns_) c->Abort();
    cv_.wait(lock, [&] { return conns_.empty() && !accepting_ && acceptor_closed_; });
  }

 private:
  bool plain() const { return opts_.cert_path.empty(); }

  net::awaitable<void> Accept() {
    net::steady_timer backoff(acceptor_.get_executor());
    while (!stopping_) {
      auto strand = net::make_strand(SharedIoContext());
      auto [ec, sock] = co_await acceptor_.async_accept(strand, kAwait);
      if (ec) {
        if (stopping_ || ec == net::error::operation_aborted) break;
        // Out of descriptors, say: wait a little rather than spin.
        backoff.expires_after(std::chrono::milliseconds(50));
        co_await backoff.async_wait(kAwait);
        continue;
      }
      sock.set_option(tcp::no_delay(true), ec);
      if (plain()) {
        Launch(std::make_shared<Connection<tcp::socket>>(context_, std::move(sock)));
      } else {
        Launch(std::make_shared<Connection<TlsStream>>(context_, std::move(sock)));
      }
    }
  }

  template <typename Stream>
  void Launch(std::shared_ptr<Connection<Stream>> conn) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      conns_.insert(conn.get());
    }
    auto ex = conn->executor();
    net::co_spawn(ex, Connection<Stream>::Run(std::move(conn)), [](std::exception_ptr e) {
      if (!e) return;
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& x) {
        spdlog::error("HTTP connection failed: {}", x.what());
      }
    });
  }

  void Finished(ConnectionBase* conn) {
    std::lock_guard lock(mu_);
    conns_.erase(conn);
    cv_.notify_all();
  }

  HttpServerOptions opts_;
  Handler handler_;
  ssl::context ssl_ctx_;
  tcp::acceptor acceptor_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  ServerContext context_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::set<ConnectionBase*> conns_;  // GUARDED_BY(mu_): running connections
  bool accepting_ = false;           // GUARDED_BY(mu_): the accept loop runs
  bool acceptor_closed_ = false;     // GUARDED_BY(mu_)
};

}  // namespace

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpServerOptions& opts,
                                                        Handler handler) {
  auto server = std::make_unique<HttpServerImpl>(opts, std::move(handler));
  FLOTILLA_RETURN_IF_ERROR(server->Init());
  return std::unique_ptr<HttpServer>(std::move(server));
}

}  // namespace flotilla::apiserver
