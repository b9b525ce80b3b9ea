// The HTTP server: accepts connections and runs each as a Connection
// (http_connection.h) on the shared loop.
#include "apiserver/http_server.h"

#include <openssl/pem.h>

#include "apiserver/http_async_stream.h"
#include "apiserver/http_connection.h"
#include "apiserver/http_internal.h"
#include "apiserver/http_stream_responder.h"
#include "base/accept.h"
#include "base/mutex.h"

namespace flotilla::apiserver {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using http_internal::Connection;
using http_internal::ConnectionBase;
using http_internal::error_code;
using http_internal::kAwait;
using http_internal::ServerContext;
using http_internal::tcp;
using http_internal::TlsStream;

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
    http2::SelectAlpn(ssl_ctx_.native_handle(), opts_.http2);
    ssl_ctx_.use_certificate_chain_file(opts_.cert_path, ec);
    if (!ec) ssl_ctx_.use_private_key_file(opts_.key_path, ssl::context::pem, ec);
    if (ec) return Status::Internal("loading serving certificate: " + ec.message());
    if (!opts_.chain_path.empty()) {
      BIO* bio = BIO_new_file(opts_.chain_path.c_str(), "r");
      X509* ca = bio != nullptr ? PEM_read_bio_X509(bio, nullptr, nullptr, nullptr) : nullptr;
      if (bio != nullptr) BIO_free(bio);
      bool added = ca != nullptr && SSL_CTX_add0_chain_cert(ssl_ctx_.native_handle(), ca) == 1;
      if (!added) {
        X509_free(ca);
        return Status::Internal("loading the certificate chain " + opts_.chain_path);
      }
    }
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
    // Stop still closes the acceptor, never opened, and waits for that.
    if (!opts_.listen) return Status::Ok();
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
    {
      MutexLock lock(mu_);
      accepting_ = true;
    }
    net::co_spawn(acceptor_.get_executor(), Accept(), [this](std::exception_ptr e) {
      if (e) spdlog::error("HTTP server: the accept loop failed");
      MutexLock lock(mu_);
      accepting_ = false;
      cv_.NotifyAll();
    });
    return Status::Ok();
  }

  int port() const override { return port_; }

  size_t open_connections() const override {
    MutexLock lock(mu_);
    return conns_.size();
  }

  void ServeDialled(TlsStream stream, std::string received, std::function<void()> on_end) override {
    auto conn = std::make_shared<Connection<TlsStream>>(context_, std::move(stream),
                                                        std::move(received), on_end);
    if (!Launch(std::move(conn)) && on_end) on_end();
  }

  void Stop() override {
    if (stopping_.exchange(true)) return;
    net::post(acceptor_.get_executor(), [this] {
      error_code ec;
      acceptor_.close(ec);
      MutexLock lock(mu_);
      acceptor_closed_ = true;
      cv_.NotifyAll();
    });
    MutexLock lock(mu_);
    for (ConnectionBase* c : conns_) c->Abort();
    cv_.Wait(lock,
             [&]() REQUIRES(mu_) { return conns_.empty() && !accepting_ && acceptor_closed_; });
  }

 private:
  bool plain() const { return opts_.cert_path.empty(); }

  net::awaitable<void> Accept() {
    co_await AcceptConnections(acceptor_, stopping_, [this](tcp::socket sock) {
      error_code ec;
      sock.set_option(tcp::no_delay(true), ec);
      if (plain()) {
        Launch(std::make_shared<Connection<tcp::socket>>(context_, std::move(sock)));
      } else {
        Launch(std::make_shared<Connection<TlsStream>>(context_, std::move(sock)));
      }
    });
  }

  // Runs `conn` unless the server is stopping (false).
  template <typename Stream>
  bool Launch(std::shared_ptr<Connection<Stream>> conn) {
    {
      MutexLock lock(mu_);
      if (stopping_) return false;
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
    return true;
  }

  void Finished(ConnectionBase* conn) {
    MutexLock lock(mu_);
    conns_.erase(conn);
    cv_.NotifyAll();
  }

  HttpServerOptions opts_;
  Handler handler_;
  ssl::context ssl_ctx_;
  tcp::acceptor acceptor_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  ServerContext context_;
  mutable Mutex mu_;
  CondVar cv_;
  std::set<ConnectionBase*> conns_ GUARDED_BY(mu_);  // running connections
  bool accepting_ GUARDED_BY(mu_) = false;           // the accept loop runs
  bool acceptor_closed_ GUARDED_BY(mu_) = false;
};

}  // namespace

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpServerOptions& opts,
                                                        Handler handler) {
  auto server = std::make_unique<HttpServerImpl>(opts, std::move(handler));
  FLOTILLA_RETURN_IF_ERROR(server->Init());
  return std::unique_ptr<HttpServer>(std::move(server));
}

}  // namespace flotilla::apiserver
