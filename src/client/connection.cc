// Connection (connection.h).
#include "client/connection.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/ssl/error.hpp>
#include <cerrno>
#include <climits>

#include "base/io.h"
#include "base/mutex.h"

namespace flotilla::client {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;

constexpr auto kMinWait = std::chrono::milliseconds(1);

boost::system::error_code Errno() { return {errno, boost::system::system_category()}; }

}  // namespace

DeadlineSocket::~DeadlineSocket() { Close(); }

DeadlineSocket::executor_type DeadlineSocket::get_executor() const {
  return SharedIoContext().get_executor();
}

void DeadlineSocket::Shutdown() {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

void DeadlineSocket::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

boost::system::error_code DeadlineSocket::Wait(short events) {
  for (;;) {
    int timeout_ms = -1;
    if (deadline_) {
      auto left = std::max<Duration>(*deadline_ - clock_.Now(), kMinWait);
      timeout_ms = static_cast<int>(
          std::min<int64_t>(std::chrono::ceil<std::chrono::milliseconds>(left).count(), INT_MAX));
    }
    pollfd pfd{fd_, events, 0};
    int rc = ::poll(&pfd, 1, timeout_ms);
    if (rc > 0) return {};  // ready, or failed: the next call says which
    if (rc == 0) return net::error::timed_out;
    if (errno != EINTR) return Errno();
  }
}

size_t DeadlineSocket::Transfer(IoVecs& v, bool write, boost::system::error_code& ec) {
  ec = {};
  if (v.count == 0) return 0;
  if (fd_ < 0) {
    ec = net::error::bad_descriptor;
    return 0;
  }
  msghdr msg{};
  msg.msg_iov = v.iov;
  msg.msg_iovlen = v.count;
  for (;;) {
    ssize_t n = write ? ::sendmsg(fd_, &msg, MSG_DONTWAIT | MSG_NOSIGNAL)
                      : ::recvmsg(fd_, &msg, MSG_DONTWAIT);
    if (n > 0) return static_cast<size_t>(n);
    if (n == 0 && !write) {
      ec = net::error::eof;
      return 0;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      ec = Errno();
      return 0;
    }
    if (!write && !reads_wait_) {
      ec = net::error::would_block;
      return 0;
    }
    ec = Wait(write ? POLLOUT : POLLIN);
    if (ec) return 0;
  }
}

boost::system::error_code DeadlineSocket::Connect(const tcp::resolver::results_type& addresses) {
  boost::system::error_code last = net::error::host_not_found;
  for (const auto& entry : addresses) {
    Close();
    const tcp::endpoint& ep = entry.endpoint();
    fd_ = ::socket(ep.protocol().family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return Errno();
    if (::connect(fd_, ep.data(), static_cast<socklen_t>(ep.size())) != 0) {
      if (errno != EINPROGRESS) {
        last = Errno();
        continue;
      }
      if (boost::system::error_code ec = Wait(POLLOUT)) {
        Close();
        return ec;
      }
      int err = 0;
      socklen_t len = sizeof(err);
      if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      if (err != 0) {
        last = {err, boost::system::system_category()};
        continue;
      }
    }
    int on = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    ::setsockopt(fd_, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
    return {};
  }
  Close();
  return last;
}

Connection::Connection(ssl::context& ctx, Clock& clock) : clock_(clock), stream_(clock, ctx) {}

Connection::~Connection() { Close(); }

template <typename Op>
Status Connection::Run(const Op& op, Deadline deadline, const char* what) {
  if (broken_) return Status::Unavailable(std::string(what) + ": the connection is closed");
  // Waiting for the peer; a write of a request rarely waits, but one of a
  // large body may.
  ScopedBlocking blocking;
  stream_.next_layer().set_deadline(deadline);
  last_error_ = {};
  op(last_error_);
  if (last_error_ == net::error::timed_out) {
    broken_ = true;
    Close();
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
  tcp::resolver resolver(SharedIoContext());
  boost::system::error_code ec;
  auto addresses = resolver.resolve(ep.host, ep.port, ec);
  if (ec) return Status::Unavailable("dial tcp: lookup " + ep.host + ": " + ec.message());
  std::string dial = "dial tcp " + ep.host_header;
  FLOTILLA_RETURN_IF_ERROR(Run(
      [&](boost::system::error_code& e) {
        e = stream_.next_layer().Connect(addresses);
        MutexLock lock(fd_mu_);
        closed_ = stream_.next_layer().fd() < 0;
      },
      deadline, dial.c_str()));
  PrepareTls(stream_.native_handle(), ep);
  Status s =
      Run([&](boost::system::error_code& e) { stream_.handshake(ssl::stream_base::client, e); },
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
  return Run([&](boost::system::error_code& ec) { http::write(stream_, req, ec); }, deadline,
             "writing the request");
}

Status Connection::Read(http::response_parser<http::string_body>& parser, Deadline deadline) {
  return Run([&](boost::system::error_code& ec) { http::read(stream_, buffer_, parser, ec); },
             deadline, "reading the response");
}

Status Connection::ReadHeader(http::response_parser<http::buffer_body>& parser, Deadline deadline) {
  return Run(
      [&](boost::system::error_code& ec) { http::read_header(stream_, buffer_, parser, ec); },
      deadline, "reading the response");
}

Status Connection::ReadSome(http::response_parser<http::buffer_body>& parser, Deadline deadline) {
  return Run([&](boost::system::error_code& ec) { http::read_some(stream_, buffer_, parser, ec); },
             deadline, "reading the response");
}

void Connection::Abort() {
  MutexLock lock(fd_mu_);
  if (!closed_) stream_.next_layer().Shutdown();
}

bool Connection::Unusable() {
  if (broken_ || buffer_.size() > 0 || SSL_pending(stream_.native_handle()) > 0) return true;
  {
    MutexLock lock(fd_mu_);
    if (closed_) return true;
    pollfd pfd{stream_.next_layer().fd(), POLLIN | POLLRDHUP, 0};
    int ready = ::poll(&pfd, 1, 0);
    if (ready == 0) return false;
    if (ready < 0 || (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0) return true;
  }
  // Readable while idle: a TLS 1.3 server's session tickets (they follow
  // the handshake, and a connection that carried no request has not read
  // them), a close_notify, or bytes nobody asked for. Reading without
  // waiting tells them apart: the engine absorbs records that carry no data
  // and then wants more input, which would block. The read leaves the TLS
  // state as a blocking read that went on later expects it.
  char byte;
  boost::system::error_code ec;
  stream_.next_layer().set_reads_wait(false);
  size_t n = stream_.read_some(net::buffer(&byte, 1), ec);
  stream_.next_layer().set_reads_wait(true);
  return n > 0 || ec != net::error::would_block;
}

bool Connection::ClosedByPeer() const {
  return last_error_ == http::error::end_of_stream || last_error_ == http::error::partial_message ||
         last_error_ == net::error::eof || last_error_ == ssl::error::stream_truncated;
}

void Connection::Close() {
  MutexLock lock(fd_mu_);
  if (closed_) return;
  closed_ = true;
  stream_.next_layer().Close();
}

}  // namespace flotilla::client
