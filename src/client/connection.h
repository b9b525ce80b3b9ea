// One HTTPS/1.1 connection of the REST client: Beast over an OpenSSL stream,
// with every operation bounded by a deadline on the injected Clock. The
// operations block the calling thread: its socket is its own, registered
// with no event loop, and a read or write that would block waits in poll(2)
// until the deadline (the socket is then closed: a connection that timed
// out is never reused). It holds one file descriptor and no thread.
//
// Not thread-safe, except Abort(): one thread at a time uses a connection
// (the pool hands it out exclusively); Abort() may come from any thread.
#pragma once

#include <sys/uio.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/system/system_error.hpp>
#include <optional>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "client/endpoint.h"

namespace flotilla::client {

namespace http = boost::beast::http;

using Deadline = std::optional<TimePoint>;  // nullopt: no deadline

// Before a TLS handshake with `ep`: sets SNI and, when ep.verify, the name
// or address the server's certificate must carry.
void PrepareTls(SSL* ssl, const Endpoint& ep);
// The outcome of a handshake that returned `handshake`: a certificate that
// did not verify is named as such, and *verify_failed set.
Status HandshakeResult(SSL* ssl, const Endpoint& ep, Status handshake, bool* verify_failed);

// The TCP socket under a Connection's TLS: a plain descriptor whose reads
// and writes wait in poll(2) until the deadline set last, failing with
// net::error::timed_out past it. It is the SyncReadStream and
// SyncWriteStream ssl::stream and Beast's blocking operations need, and
// its own lowest layer; its executor (the shared loop's) only serves
// ssl::stream's construction.
class DeadlineSocket {
 public:
  using executor_type = boost::asio::io_context::executor_type;
  using lowest_layer_type = DeadlineSocket;

  explicit DeadlineSocket(Clock& clock) : clock_(clock) {}
  ~DeadlineSocket();
  DeadlineSocket(const DeadlineSocket&) = delete;
  DeadlineSocket& operator=(const DeadlineSocket&) = delete;

  executor_type get_executor() const;
  lowest_layer_type& lowest_layer() { return *this; }
  const lowest_layer_type& lowest_layer() const { return *this; }

  void set_deadline(Deadline deadline) { deadline_ = deadline; }
  // While unset, a read that would block fails at once with
  // net::error::would_block instead of waiting (writes still wait).
  void set_reads_wait(bool wait) { reads_wait_ = wait; }
  // Connects to the first of `addresses` that accepts, with TCP_NODELAY and
  // keep-alive.
  boost::system::error_code Connect(const boost::asio::ip::tcp::resolver::results_type& addresses);
  int fd() const { return fd_; }
  // Any thread: wakes a wait in progress, which then fails.
  void Shutdown();
  void Close();

  template <typename Buffers>
  size_t read_some(const Buffers& buffers, boost::system::error_code& ec) {
    IoVecs v(buffers);
    return Transfer(v, /*write=*/false, ec);
  }
  template <typename Buffers>
  size_t write_some(const Buffers& buffers, boost::system::error_code& ec) {
    IoVecs v(buffers);
    return Transfer(v, /*write=*/true, ec);
  }
  template <typename Buffers>
  size_t read_some(const Buffers& buffers) {
    return Throwing(read_some(buffers, last_));
  }
  template <typename Buffers>
  size_t write_some(const Buffers& buffers) {
    return Throwing(write_some(buffers, last_));
  }

 private:
  // Up to kMax non-empty buffers of a sequence, as iovecs.
  struct IoVecs {
    static constexpr size_t kMax = 16;
    template <typename Buffers>
    explicit IoVecs(const Buffers& buffers) {
      for (auto it = boost::asio::buffer_sequence_begin(buffers);
           it != boost::asio::buffer_sequence_end(buffers) && count < kMax; ++it) {
        auto b = *it;
        if (b.size() == 0) continue;
        iov[count++] = {const_cast<void*>(static_cast<const void*>(b.data())), b.size()};
      }
    }
    iovec iov[kMax];
    size_t count = 0;
  };
  size_t Transfer(IoVecs& v, bool write, boost::system::error_code& ec);
  // Waits until the socket is ready for `events` (POLLIN, POLLOUT).
  boost::system::error_code Wait(short events);
  size_t Throwing(size_t n) {
    if (last_) throw boost::system::system_error(last_);
    return n;
  }

  Clock& clock_;
  Deadline deadline_;
  bool reads_wait_ = true;
  int fd_ = -1;
  boost::system::error_code last_;  // of the throwing forms
};

class Connection {
 public:
  // `ctx` and `clock` are not owned and must outlive the connection.
  Connection(boost::asio::ssl::context& ctx, Clock& clock);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Resolves, connects and completes the TLS handshake, verifying the
  // server's certificate for ep.verify_name unless !ep.verify. Errors are
  // ServiceUnavailable (Timeout past the deadline); *verify_failed is set
  // when the certificate was rejected.
  Status Open(const Endpoint& ep, Deadline deadline, bool* verify_failed);
  Status Write(http::request<http::string_body>& req, Deadline deadline);
  // Reads one complete response.
  Status Read(http::response_parser<http::string_body>& parser, Deadline deadline);
  Status ReadHeader(http::response_parser<http::buffer_body>& parser, Deadline deadline);
  // Reads and parses what has arrived, filling the parser's body buffer.
  Status ReadSome(http::response_parser<http::buffer_body>& parser, Deadline deadline);

  // Any thread: fails the operation in progress and every later one.
  void Abort();
  // True when an idle connection cannot be reused: it failed or timed out,
  // holds unread bytes, or its peer closed it (checked without blocking).
  // TLS records that carry no data, such as the session tickets a TLS 1.3
  // server sends after the handshake, are read and do not count.
  bool Unusable();
  // True when the last failure was the peer closing the stream (EOF),
  // possibly in the middle of a message.
  bool ClosedByPeer() const;

  TimePoint idle_since() const { return idle_since_; }
  void set_idle_since(TimePoint t) { idle_since_ = t; }

 private:
  // Runs `op(error_code&)`, a blocking operation on stream_, bounded by
  // `deadline`. `what` names the step in errors.
  template <typename Op>
  Status Run(const Op& op, Deadline deadline, const char* what);
  void Close();

  Clock& clock_;
  boost::asio::ssl::stream<DeadlineSocket> stream_;
  boost::beast::flat_buffer buffer_;
  bool broken_ = false;
  boost::system::error_code last_error_;
  TimePoint idle_since_;
  Mutex fd_mu_;  // Abort() against Close()
  bool closed_ GUARDED_BY(fd_mu_) = false;
};

}  // namespace flotilla::client
