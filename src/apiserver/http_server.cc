#include "apiserver/http_server.h"

#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
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
constexpr int kIdleTimeoutSec = 300;
constexpr int kSendTimeoutSec = 30;

// Waits up to `millis` for bytes to read on the TLS stream (already
// decrypted ones count). Asio's blocking reads ignore SO_RCVTIMEO, so idle
// and slow peers are timed out here.
bool WaitReadable(TlsStream& stream, int millis) {
  // Bytes OpenSSL already read from the socket (decrypted or not) count.
  if (SSL_has_pending(stream.native_handle()) == 1) return true;
  pollfd pfd{stream.next_layer().native_handle(), POLLIN, 0};
  return ::poll(&pfd, 1, millis) > 0;
}

void SetSocketTimeouts(int fd, int recv_sec, int send_sec) {
  timeval rcv{recv_sec, 0};
  timeval snd{send_sec, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &rcv, sizeof(rcv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &snd, sizeof(snd));
}

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

class StreamResponder : public Responder {
 public:
  StreamResponder(TlsStream& stream, bool keep_alive) : stream_(stream), keep_alive_(keep_alive) {}

  void Respond(int code, const Headers& headers, std::string body) override {
    http::response<http::string_body> res;
    res.version(11);
    res.result(static_cast<unsigned>(code));
    for (const auto& [k, v] : headers) res.set(k, v);
    res.keep_alive(keep_alive_);
    res.body() = std::move(body);
    res.prepare_payload();
    boost::system::error_code ec;
    http::write(stream_, res, ec);
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
    http::write_header(stream_, sr, ec);
    responded_ = true;
    streaming_ = true;
    failed_ = static_cast<bool>(ec);
    return !failed_;
  }

  bool WriteChunk(std::string_view data) override {
    if (failed_) return false;
    boost::system::error_code ec;
    net::write(stream_, http::make_chunk(net::const_buffer(data.data(), data.size())), ec);
    failed_ = static_cast<bool>(ec);
    return !failed_;
  }

  bool ClientGone() override { return WaitClientGone(0); }

  bool WaitClientGone(int millis) override {
    if (failed_) return true;
    pollfd pfd{stream_.next_layer().native_handle(), POLLRDHUP, 0};
    int n = ::poll(&pfd, 1, millis);
    return n > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
  }

  bool Responded() const override { return responded_; }

  void Finish() {
    if (streaming_ && !failed_) {
      boost::system::error_code ec;
      net::write(stream_, http::make_chunk_last(), ec);
    }
  }
  bool keep_going() const { return responded_ && !streaming_ && !failed_ && keep_alive_; }

 private:
  TlsStream& stream_;
  bool keep_alive_;
  bool responded_ = false;
  bool streaming_ = false;
  bool failed_ = false;
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

  Status Init() {
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
    return Status::Ok();
  }

  int port() const override { return port_; }

  void Stop() override {
    if (stopping_.exchange(true)) return;
    ::shutdown(acceptor_.native_handle(), SHUT_RDWR);
    if (accept_thread_.joinable()) accept_thread_.join();
    boost::system::error_code ec;
    acceptor_.close(ec);
    std::unique_lock lock(mu_);
    for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
    cv_.wait(lock, [&] { return fds_.empty(); });
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
      auto conn = std::make_shared<tcp::socket>(std::move(sock));
      int fd = conn->native_handle();
      {
        std::lock_guard lock(mu_);
        if (stopping_) return;
        fds_.insert(fd);
      }
      if (!SpawnThread([this, conn] { Serve(std::move(*conn)); })) Forget(fd);
    }
  }

  void Forget(int fd) {
    std::lock_guard lock(mu_);
    fds_.erase(fd);
    cv_.notify_all();
  }

  void Serve(tcp::socket sock) {
    int fd = sock.native_handle();
    std::string remote;
    boost::system::error_code ec;
    auto ep = sock.remote_endpoint(ec);
    if (!ec) remote = ep.address().to_string() + ":" + std::to_string(ep.port());
    SetSocketTimeouts(fd, kIdleTimeoutSec, kSendTimeoutSec);
    {
      TlsStream stream(std::move(sock), ssl_ctx_);
      // A peer that connects and says nothing is dropped after 10 s.
      if (WaitReadable(stream, 10000)) stream.handshake(ssl::stream_base::server, ec);
      if (!ec && SSL_is_init_finished(stream.native_handle())) ServeRequests(stream, remote);
      stream.shutdown(ec);
      stream.next_layer().close(ec);
    }
    Forget(fd);
  }

  // A client still sending an oversized body would see a reset instead of
  // the 413 if the connection closed at once: read and drop what it sends
  // (bounded in bytes and time) so it gets to read the answer.
  static void DiscardUnreadBody(TlsStream& stream) {
    constexpr size_t kMaxDiscard = 64 * 1024 * 1024;
    SetSocketTimeouts(stream.next_layer().native_handle(), 5, kSendTimeoutSec);
    char sink[16384];
    size_t total = 0;
    boost::system::error_code ec;
    while (total < kMaxDiscard && WaitReadable(stream, 5000)) {
      size_t n = stream.read_some(net::buffer(sink), ec);
      if (ec || n == 0) break;
      total += n;
    }
  }

  X509* PeerCert(TlsStream& stream) {
    SSL* ssl = stream.native_handle();
    if (SSL_get_verify_result(ssl) != X509_V_OK) return nullptr;
    return SSL_get0_peer_certificate(ssl);
  }

  void ServeRequests(TlsStream& stream, const std::string& remote) {
    boost::beast::flat_buffer buffer;
    X509* cert = PeerCert(stream);
    while (!stopping_) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(opts_.max_body_bytes);
      parser.header_limit(64 * 1024);
      boost::system::error_code ec;
      if (buffer.size() == 0 && !WaitReadable(stream, kIdleTimeoutSec * 1000)) return;
      http::read(stream, buffer, parser, ec);
      if (ec == http::error::body_limit) {
        StreamResponder r(stream, false);
        r.Respond(413, {{"Content-Type", "application/json"}},
                  StatusBody(413, "RequestEntityTooLarge",
                             "Request entity too large: limit is " +
                                 std::to_string(opts_.max_body_bytes)));
        DiscardUnreadBody(stream);
        return;
      }
      if (ec) return;
      auto msg = parser.release();
      bool keep_alive = msg.keep_alive();
      Request req = MakeRequest(msg, cert, remote);
      StreamResponder responder(stream, keep_alive);
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
  std::set<int> fds_;  // GUARDED_BY(mu_): open connections
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
