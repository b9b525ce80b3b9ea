// One HTTPS/1.1 connection of the REST client: Beast over an OpenSSL stream,
// with every operation bounded by a deadline on the injected Clock. Each
// connection owns a small io_context and runs its asynchronous operations
// on the calling thread until they finish or the deadline passes (the
// socket is then closed: a connection that timed out is never reused).
//
// Not thread-safe, except Abort(): one thread at a time uses a connection
// (the pool hands it out exclusively); Abort() may come from any thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <mutex>
#include <optional>

#include "base/clock.h"
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
  bool Unusable();
  // True when the last failure was the peer closing the stream (EOF),
  // possibly in the middle of a message.
  bool ClosedByPeer() const;

  TimePoint idle_since() const { return idle_since_; }
  void set_idle_since(TimePoint t) { idle_since_ = t; }

 private:
  // Starts `op` with a completion handler and runs the io_context until it
  // completes or `deadline` passes. `what` names the step in errors.
  template <typename Op>
  Status Await(const Op& op, Deadline deadline, const char* what);
  void Close();

  Clock& clock_;
  boost::asio::io_context ioc_;
  boost::asio::ssl::stream<boost::asio::ip::tcp::socket> stream_;
  boost::beast::flat_buffer buffer_;
  bool broken_ = false;
  boost::system::error_code last_error_;
  TimePoint idle_since_;
  std::mutex fd_mu_;     // Abort() against Close()
  bool closed_ = false;  // GUARDED_BY(fd_mu_)
};

}  // namespace flotilla::client
