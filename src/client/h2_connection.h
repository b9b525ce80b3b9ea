// The REST client's HTTP/2 connections: one TLS connection to a server
// carries every request and watch of the client as streams, as client-go's
// does (docs/client.md). A connection is an nghttp2 client session on a
// strand of the shared loop (base/http2.h); it holds no thread. H2Pool
// keeps a client's connections to one server: one, and another only when
// every open one has as many streams as the server allows.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/http2.h"
#include "base/mutex.h"
#include "base/status.h"
#include "client/endpoint.h"
#include "client/transport.h"

namespace boost::asio::ssl {
class context;
}

namespace flotilla::client {

// One request as HTTP/2 sends it.
struct H2Request {
  std::string method;
  std::string path;  // the :path, query included
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

// Receives one stream's response, on the connection's strand, one call at
// a time; none may block for long.
class H2Exchange {
 public:
  virtual ~H2Exchange() = default;
  // The response's head (after any 1xx).
  virtual void OnHeaders(int code, std::vector<std::pair<std::string, std::string>> headers) = 0;
  // A piece of the body; false resets the stream (OnClose follows).
  virtual bool OnData(std::string_view data) = 0;
  // Once, last. OK when the server ended the stream normally. `sent` is
  // false when the server cannot have acted on the request: it refused the
  // stream, or the connection failed before the request went out.
  // `retryable` is false for a failure another attempt cannot mend (a
  // certificate that did not verify, a timeout).
  virtual void OnClose(Status status, bool sent, bool retryable) = 0;
};

class H2Connection;

// The connection of a peer that dials us rather than the other way round
// (an agent's tunnel, federation/cluster/tunnel.h): this side sends the
// requests over whichever connection the peer has open. Thread-safe.
class H2Tunnel : public std::enable_shared_from_this<H2Tunnel> {
 public:
  // `name` is the :authority of the requests, and names the tunnel in
  // messages. Held by shared_ptr (Attach's connection outlives a call).
  explicit H2Tunnel(std::string name);
  ~H2Tunnel();

  // Takes `up` as the peer's connection, PINGed every `keepalive` (closed
  // when a PING goes unanswered until the next); `on_end` runs when it has
  // ended. When a connection is live already: with `replace` it is closed
  // and `up` takes its place; else Conflict, and `up` handed back done.
  Status Attach(http2::Upgraded up, Duration keepalive, std::function<void()> on_end,
                bool replace = false);
  // Ends the live connection, if any.
  void Close();
  bool Connected();
  // The live connection; null when there is none.
  std::shared_ptr<H2Connection> Current();
  const std::string& name() const { return name_; }

 private:
  const std::string name_;
  Mutex mu_;
  std::shared_ptr<H2Connection> conn_ GUARDED_BY(mu_);
};

// Thread-safe.
class H2Pool {
 public:
  H2Pool(std::shared_ptr<boost::asio::ssl::context> tls, Endpoint endpoint);
  // Requests go over `tunnel`'s connection; none open is a failure to
  // connect (retryable).
  explicit H2Pool(std::shared_ptr<H2Tunnel> tunnel);
  ~H2Pool();

  // Starts `req` on a connection with room for it, opening one when there
  // is none (connecting and the TLS handshake bounded by `timeout`).
  // `timeout` (zero: none) bounds the whole exchange when `whole`, else
  // only until its head. Null when the server does not
  // speak HTTP/2 (found on the first connection; from then on always
  // null): the caller falls back to HTTP/1.1. A failure to connect ends
  // the exchange with OnClose(error, sent=false).
  std::shared_ptr<StreamCall> Start(H2Request req, std::shared_ptr<H2Exchange> exchange,
                                    Duration timeout, bool whole);

 private:
  // A connection with room, opened if needed; null when the server
  // declined h2; an error when it cannot be reached (*retryable false when
  // its certificate did not verify or the attempt timed out).
  StatusOr<std::shared_ptr<H2Connection>> Acquire(Duration timeout, bool* retryable);

  const std::shared_ptr<boost::asio::ssl::context> tls_;
  const Endpoint endpoint_;
  const std::shared_ptr<H2Tunnel> tunnel_;
  Mutex mu_;
  CondVar cv_;
  std::vector<std::shared_ptr<H2Connection>> conns_ GUARDED_BY(mu_);
  bool opening_ GUARDED_BY(mu_) = false;
  bool declined_ GUARDED_BY(mu_) = false;
};

// The pool of the process for `endpoint` and the TLS client identity
// `identity` (a digest of what the handshake presents and trusts: the CA,
// the client certificate and key, whether and which name is verified):
// every transport that reaches the same server as the same TLS client
// shares its connections, as client-go's transports of one TLS
// configuration do. A bearer token is a request's header, not part of the
// identity. The pool goes with the last transport that holds it; made
// with `tls` the first time.
std::shared_ptr<H2Pool> SharedH2Pool(const std::string& identity,
                                     std::shared_ptr<boost::asio::ssl::context> tls,
                                     const Endpoint& endpoint);

}  // namespace flotilla::client
