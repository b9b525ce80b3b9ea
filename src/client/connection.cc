// Connection (connection.h).
#include "client/connection.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/ssl/error.hpp>

#include "base/io.h"

namespace flotilla::client {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;

constexpr auto kMinWait = std::chrono::milliseconds(1);

}  // namespace

Connection::Connection(ssl::context& ctx, Clock& clock) : clock_(clock), stream_(ioc_, ctx) {}

Connection::~Connection() { Close(); }

template <typename Op>
Status Connection::Await(const Op& op, Deadline deadline, const char* what) {
  if (broken_) return Status::Unavailable(std::string(what) + ": the connection is closed");
  // Waiting for the peer; a write of a request rarely waits, but one of a
  // large body may.
  ScopedBlocking blocking;
  bool done = false;
  last_error_ = {};
  op([this, &done](boost::system::error_code ec, auto&&...) {
    last_error_ = ec;
    done = true;
  });
  ioc_.restart();
  if (deadline) {
    ioc_.run_for(std::max<Duration>(*deadline - clock_.Now(), kMinWait));
  } else {
    ioc_.run();
  }
  if (!done) {
    broken_ = true;
    Close();
    ioc_.restart();
    ioc_.run();  // completes the aborted operation
    return Status::Timeout(std::string(what) + ": timed out");
  }
  if (last_error_ && last_error_ != http::error::need_buffer) {
    broken_ = true;
    return Status::Unavailable(std::string(what) + ": " + last_error_.message());
  }
  return Status::Ok();
}

Status Connection::Open(const Endpoint& ep, Deadline deadline, bool* verify_failed) {
  *verify_failed = false;
  tcp::resolver resolver(ioc_);
  boost::system::error_code ec;
  auto addresses = resolver.resolve(ep.host, ep.port, ec);
  if (ec) return Status::Unavailable("dial tcp: lookup " + ep.host + ": " + ec.message());
  std::string dial = "dial tcp " + ep.host_header;
  FLOTILLA_RETURN_IF_ERROR(
      Await([&](auto handler) { net::async_connect(stream_.next_layer(), addresses, handler); },
            deadline, dial.c_str()));
  stream_.next_layer().set_option(tcp::no_delay(true), ec);
  stream_.next_layer().set_option(net::socket_base::keep_alive(true), ec);
  PrepareTls(stream_.native_handle(), ep);
  Status s =
      Await([&](auto handler) { stream_.async_handshake(ssl::stream_base::client, handler); },
            deadline, "TLS handshake");
  return HandshakeResult(stream_.native_handle(), ep, std::move(s), verify_failed);
}

void PrepareTls(SSL* ssl, const Endpoint& ep) {
  bool is_ip = IsIpAddress(ep.verify_name);
  if (!is_ip) SSL_set_tlsext_host_name(ssl, ep.verify_name.c_str());
  if (!ep.verify) return;
  if (is_ip) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), ep.verify_name.c_str());
  } else {
    SSL_set1_host(ssl, ep.verify_name.c_str());
  }
}

Status HandshakeResult(SSL* ssl, const Endpoint& ep, Status handshake, bool* verify_failed) {
  long verify = SSL_get_verify_result(ssl);
  if (!handshake.ok() && ep.verify && verify != X509_V_OK) {
    *verify_failed = true;
    return Status::Unavailable(std::string("tls: failed to verify certificate: x509: ") +
                               X509_verify_cert_error_string(verify));
  }
  return handshake;
}

Status Connection::Write(http::request<http::string_body>& req, Deadline deadline) {
  return Await([&](auto handler) { http::async_write(stream_, req, handler); }, deadline,
               "writing the request");
}

Status Connection::Read(http::response_parser<http::string_body>& parser, Deadline deadline) {
  return Await([&](auto handler) { http::async_read(stream_, buffer_, parser, handler); }, deadline,
               "reading the response");
}

Status Connection::ReadHeader(http::response_parser<http::buffer_body>& parser, Deadline deadline) {
  return Await([&](auto handler) { http::async_read_header(stream_, buffer_, parser, handler); },
               deadline, "reading the response");
}

Status Connection::ReadSome(http::response_parser<http::buffer_body>& parser, Deadline deadline) {
  return Await([&](auto handler) { http::async_read_some(stream_, buffer_, parser, handler); },
               deadline, "reading the response");
}

void Connection::Abort() {
  std::lock_guard lock(fd_mu_);
  if (!closed_) ::shutdown(stream_.next_layer().native_handle(), SHUT_RDWR);
}

bool Connection::Unusable() {
  if (broken_ || buffer_.size() > 0 || SSL_pending(stream_.native_handle()) > 0) return true;
  std::lock_guard lock(fd_mu_);
  if (closed_) return true;
  pollfd pfd{stream_.next_layer().native_handle(), POLLIN | POLLRDHUP, 0};
  return ::poll(&pfd, 1, 0) != 0;  // readable, hung up, or poll failed
}

bool Connection::ClosedByPeer() const {
  return last_error_ == http::error::end_of_stream || last_error_ == http::error::partial_message ||
         last_error_ == net::error::eof || last_error_ == ssl::error::stream_truncated;
}

void Connection::Close() {
  std::lock_guard lock(fd_mu_);
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ec;
  stream_.next_layer().close(ec);
}

}  // namespace flotilla::client
