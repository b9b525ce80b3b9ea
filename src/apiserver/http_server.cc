#include "apiserver/http_server.h"

#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "apiserver/url.h"
#include "base/json.h"
#include "base/log.h"

namespace flotilla::apiserver {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;
using TlsStream = ssl::stream<tcp::socket>;

constexpr size_t kThreadStack = 512 * 1024;
constexpr int kSendTimeoutSec = 30;
constexpr int kDiscardTimeoutSec = 5;
constexpr int kCloseTimeoutSec = 5;

// One open connection. Asio's blocking reads and writes ignore SO_RCVTIMEO
// and SO_SNDTIMEO (they poll without a timeout after EAGAIN), and TLS keeps
// bytes in buffers poll(2) cannot see, so timeouts are deadlines: the
// server's reaper shuts down the socket of a connection whose deadline
// passed, which ends any blocked read or write on it.
struct Connection {
  using Clock = std::chrono::steady_clock;
  static constexpr int64_t kNone = INT64_MAX;

  explicit Connection(int f) : fd(f) {}

  // Arms the deadline `seconds` from now, replacing any earlier one.
  void Arm(int seconds) {
    auto at = Clock::now() + std::chrono::seconds(seconds);
    deadline.store(at.time_since_epoch().count(), std::memory_order_relaxed);
  }
  void Disarm() { deadline.store(kNone, std::memory_order_relaxed); }
  bool Expired(Clock::time_point now) const {
    return deadline.load(std::memory_order_relaxed) <= now.time_since_epoch().count();
  }

  const int fd;
  std::atomic<int64_t> deadline{kNone};
};

// Starts `fn` on a detached thread with a small stack.
bool SpawnThread(std::function<void()> fn) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kThreadStack);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  auto* heap_fn = new std::function<void()>(std::move(fn));
  pthread_t tid;
  int rc = pthread_create(
      &tid, &attr,
      [](void* arg) -> void* {
        std::unique_ptr<std::function<void()>> f(static_cast<std::function<void()>*>(arg));
        (*f)();
        return nullptr;
      },
      heap_fn);
  pthread_attr_destroy(&attr);
  if (rc != 0) delete heap_fn;
  return rc == 0;
}

int NativeFd(TlsStream& stream) { return stream.next_layer().native_handle(); }
int NativeFd(tcp::socket& socket) { return socket.native_handle(); }

// Over TLS (Stream = TlsStream) or plain TCP (tcp::socket).
template <typename Stream>
class StreamResponder : public Responder {
 public:
  StreamResponder(Stream& stream, Connection& conn, bool keep_alive)
      : stream_(stream), conn_(conn), keep_alive_(keep_alive) {}

  void Respond(int code, const Headers& headers, std::string body) override {
    http::response<http::string_body> res;
    res.version(11);
    res.result(static_cast<unsigned>(code));
    for (const auto& [k, v] : headers) res.set(k, v);
    res.keep_alive(keep_alive_);
    res.body() = std::move(body);
    res.prepare_payload();
    boost::system::error_code ec;
    conn_.Arm(kSendTimeoutSec);
    http::write(stream_, res, ec);
    conn_.Disarm();
    responded_ = true;
    failed_ = static_cast<bool>(ec);
  }

  // The header, then the parts copied into blocks of kBlock bytes: one TLS
  // write per block rather than per part, and no buffer the size of the body.
  void RespondParts(int code, const Headers& headers,
                    const std::vector<std::string_view>& parts) override {
    constexpr size_t kBlock = 64 * 1024;
    size_t size = 0;
    for (std::string_view p : parts) size += p.size();
    http::response<http::empty_body> res;
    res.version(11);
    res.result(static_cast<unsigned>(code));
    for (const auto& [k, v] : headers) res.set(k, v);
    res.keep_alive(keep_alive_);
    res.content_length(size);
    http::response_serializer<http::empty_body> sr(res);
    boost::system::error_code ec;
    conn_.Arm(kSendTimeoutSec);
    http::write_header(stream_, sr, ec);
    std::string block;
    block.reserve(kBlock);
    auto flush = [&] {
      if (!ec && !block.empty()) net::write(stream_, net::buffer(block), ec);
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
    conn_.Disarm();
    responded_ = true;
    failed_ = static_cast<bool>(ec);
  }

  bool StartStream(int code, const Headers& headers) override {
    http::response<http::empty_body> res;
    res.version(11);
    res.result(static_cast<unsigned>(code));
    for (const auto& [k, v] : headers) res.set(k, v);
    res.chunked(true);
    res.keep_alive(false);
    http::response_serializer<http::empty_body> sr(res);
    boost::system::error_code ec;
    conn_.Arm(kSendTimeoutSec);
    http::write_header(stream_, sr, ec);
    conn_.Disarm();
    responded_ = true;
    streaming_ = true;
    failed_ = static_cast<bool>(ec);
    return !failed_;
  }

  bool WriteChunk(std::string_view data) override {
    if (failed_) return false;
    boost::system::error_code ec;
    conn_.Arm(kSendTimeoutSec);
    net::write(stream_, http::make_chunk(net::const_buffer(data.data(), data.size())), ec);
    conn_.Disarm();
    failed_ = static_cast<bool>(ec);
    return !failed_;
  }

  bool ClientGone() override { return WaitClientGone(0); }

  bool WaitClientGone(int millis) override {
    if (failed_) return true;
    pollfd pfd{NativeFd(stream_), POLLRDHUP, 0};
    int n = ::poll(&pfd, 1, millis);
    return n > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
  }

  bool Responded() const override { return responded_; }

  void Finish() {
    if (streaming_ && !failed_) {
      boost::system::error_code ec;
      conn_.Arm(kSendTimeoutSec);
      net::write(stream_, http::make_chunk_last(), ec);
      conn_.Disarm();
    }
  }
  bool keep_going() const { return responded_ && !streaming_ && !failed_ && keep_alive_; }

 private:
  Stream& stream_;
  Connection& conn_;
  bool keep_alive_;
  bool responded_ = false;
  bool streaming_ = false;
  // Read by WaitClientGone, which a proxy may call from a second thread.
  std::atomic<bool> failed_{false};
};

std::string StatusBody(int code, std::string_view reason, std::string_view message) {
  json::object o{{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
                 {"status", "Failure"}, {"message", message}, {"reason", reason},
                 {"code", code}};
  return json::serialize(o);
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

class HttpServerImpl : public HttpServer {
 public:
  HttpServerImpl(const HttpServerOptions& opts, Handler handler)
      : opts_(opts),
        handler_(std::move(handler)),
        ssl_ctx_(ssl::context::tls_server),
        acceptor_(io_) {}

  ~HttpServerImpl() override { Stop(); }

  Status InitTls() {
    boost::system::error_code ec;
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
    boost::system::error_code ec;
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
    accept_thread_ = std::thread([this] { AcceptLoop(); });
    reaper_thread_ = std::thread([this] { ReapLoop(); });
    return Status::Ok();
  }

  int port() const override { return port_; }

  void Stop() override {
    if (stopping_.exchange(true)) return;
    { std::lock_guard lock(mu_); }  // the reaper is waiting or will see stopping_
    cv_.notify_all();
    ::shutdown(acceptor_.native_handle(), SHUT_RDWR);
    if (accept_thread_.joinable()) accept_thread_.join();
    boost::system::error_code ec;
    acceptor_.close(ec);
    std::unique_lock lock(mu_);
    for (Connection* c : conns_) ::shutdown(c->fd, SHUT_RDWR);
    // Not only forgotten but finished: a serving thread still closes its
    // socket after Forget, and that needs io_.
    cv_.wait(lock, [&] { return conns_.empty() && serving_ == 0; });
    lock.unlock();
    if (reaper_thread_.joinable()) reaper_thread_.join();
  }

 private:
  void AcceptLoop() {
    while (!stopping_) {
      boost::system::error_code ec;
      tcp::socket sock(io_);
      acceptor_.accept(sock, ec);
      if (ec) {
        if (stopping_) return;
        continue;
      }
      sock.set_option(tcp::no_delay(true), ec);
      auto sock_ptr = std::make_shared<tcp::socket>(std::move(sock));
      auto conn = std::make_shared<Connection>(sock_ptr->native_handle());
      {
        std::lock_guard lock(mu_);
        if (stopping_) return;
        conns_.insert(conn.get());
        ++serving_;
      }
      conn->Arm(opts_.handshake_timeout_sec);
      bool spawned = SpawnThread([this, sock_ptr, conn]() mutable {
        auto sock = std::move(sock_ptr);
        Serve(std::move(*sock), *conn);
        sock.reset();  // the moved-from socket still refers to io_
        Finished();
      });
      if (!spawned) {
        Forget(*conn);
        Finished();
      }
    }
  }

  // Once a second, shuts down the sockets of connections past their deadline.
  void ReapLoop() {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      cv_.wait_for(lock, std::chrono::seconds(1));
      auto now = Connection::Clock::now();
      for (Connection* c : conns_) {
        if (!c->Expired(now)) continue;
        c->Disarm();
        ::shutdown(c->fd, SHUT_RDWR);
      }
    }
  }

  // Removes the connection while its socket is still open, so neither the
  // reaper nor Stop can shut down a descriptor number reused by a new one.
  void Forget(Connection& conn) {
    std::lock_guard lock(mu_);
    conns_.erase(&conn);
    cv_.notify_all();
  }

  // The last thing a serving thread does with this server: Stop may return
  // (and the server be destroyed) as soon as mu_ is released.
  void Finished() {
    std::lock_guard lock(mu_);
    --serving_;
    cv_.notify_all();
  }

  void Serve(tcp::socket sock, Connection& conn) {
    std::string remote;
    boost::system::error_code ec;
    auto ep = sock.remote_endpoint(ec);
    if (!ec) remote = ep.address().to_string() + ":" + std::to_string(ep.port());
    if (plain()) {
      conn.Disarm();
      ServeRequests(sock, conn, remote);
      sock.shutdown(tcp::socket::shutdown_both, ec);
      Forget(conn);
      sock.close(ec);
      return;
    }
    {
      TlsStream stream(std::move(sock), ssl_ctx_);
      // A peer that connects and does not finish the handshake in time is
      // dropped (the deadline was armed at accept).
      stream.handshake(ssl::stream_base::server, ec);
      conn.Disarm();
      if (!ec && SSL_is_init_finished(stream.native_handle())) ServeRequests(stream, conn, remote);
      // The TLS shutdown waits for the peer's close_notify; not for long.
      conn.Arm(kCloseTimeoutSec);
      stream.shutdown(ec);
      Forget(conn);
      stream.next_layer().close(ec);
    }
  }

  // A client still sending an oversized body would see a reset instead of
  // the 413 if the connection closed at once: read and drop what it sends
  // (bounded in bytes and time) so it gets to read the answer.
  template <typename Stream>
  static void DiscardUnreadBody(Stream& stream, Connection& conn) {
    constexpr size_t kMaxDiscard = 64 * 1024 * 1024;
    conn.Arm(kDiscardTimeoutSec);
    char sink[16384];
    size_t total = 0;
    boost::system::error_code ec;
    while (total < kMaxDiscard) {
      size_t n = stream.read_some(net::buffer(sink), ec);
      if (ec || n == 0) break;
      total += n;
    }
  }

  static X509* PeerCert(TlsStream& stream) {
    SSL* ssl = stream.native_handle();
    if (SSL_get_verify_result(ssl) != X509_V_OK) return nullptr;
    return SSL_get0_peer_certificate(ssl);
  }
  static X509* PeerCert(tcp::socket&) { return nullptr; }

  bool plain() const { return opts_.cert_path.empty(); }

  template <typename Stream>
  void ServeRequests(Stream& stream, Connection& conn, const std::string& remote) {
    boost::beast::flat_buffer buffer;
    X509* cert = PeerCert(stream);
    while (!stopping_) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(opts_.max_body_bytes);
      parser.header_limit(64 * 1024);
      boost::system::error_code ec;
      // Covers both an idle keep-alive connection and a peer sending its
      // request too slowly.
      conn.Arm(opts_.idle_timeout_sec);
      http::read(stream, buffer, parser, ec);
      conn.Disarm();
      if (ec == http::error::body_limit) {
        StreamResponder<Stream> r(stream, conn, false);
        r.Respond(413, {{"Content-Type", "application/json"}},
                  StatusBody(413, "RequestEntityTooLarge",
                             "Request entity too large: limit is " +
                                 std::to_string(opts_.max_body_bytes)));
        DiscardUnreadBody(stream, conn);
        return;
      }
      if (ec) return;
      auto msg = parser.release();
      bool keep_alive = msg.keep_alive();
      Request req = MakeRequest(msg, cert, remote);
      StreamResponder<Stream> responder(stream, conn, keep_alive);
      handler_(req, responder);
      if (!responder.Responded()) {
        responder.Respond(500, {{"Content-Type", "application/json"}},
                          StatusBody(500, "InternalError", "no response"));
      }
      responder.Finish();
      if (!responder.keep_going()) return;
    }
  }

  HttpServerOptions opts_;
  Handler handler_;
  net::io_context io_;
  ssl::context ssl_ctx_;
  tcp::acceptor acceptor_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::set<Connection*> conns_;  // GUARDED_BY(mu_): open connections
  int serving_ = 0;              // GUARDED_BY(mu_): threads in Serve or about to be
  std::thread reaper_thread_;
};

}  // namespace

std::string Request::Query(std::string_view name) const {
  auto it = query.find(std::string(name));
  return it == query.end() ? "" : it->second;
}

bool Request::HasQuery(std::string_view name) const { return query.count(std::string(name)) > 0; }

bool Request::QueryBool(std::string_view name) const {
  std::string v = Query(name);
  return v == "1" || v == "t" || v == "T" || v == "true" || v == "TRUE" || v == "True";
}

std::string Request::Header(std::string_view name) const {
  auto it = headers.find(std::string(name));
  return it == headers.end() ? "" : it->second;
}

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpServerOptions& opts,
                                                        Handler handler) {
  auto server = std::make_unique<HttpServerImpl>(opts, std::move(handler));
  FLOTILLA_RETURN_IF_ERROR(server->Init());
  return std::unique_ptr<HttpServer>(std::move(server));
}

}  // namespace flotilla::apiserver
