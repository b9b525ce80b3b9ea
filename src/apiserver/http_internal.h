// The HTTP server's internals (http_server.h), shared by its classes: one
// file each. Only http_server.cc and http2_server.cc include these headers;
// the templates are instantiated there for TLS and plain TCP streams.
//
// http_connection.h: Connection, one client connection (a coroutine on its
//   strand) reading requests and handing them to the handler;
// http_stream_responder.h: StreamResponder, how a handler answers (whole
//   responses, or chunked streams);
// http_async_stream.h: AsyncStream, a stream (a watch) that outlives its
//   handler, written by whichever thread has the next chunk;
// http2_server.h: H2Server, a connection that negotiated HTTP/2, each of
//   its streams a request.
#pragma once

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

#include "apiserver/http_server.h"
#include "apiserver/url.h"
#include "base/http2.h"
#include "base/io.h"
#include "base/json.h"
#include "base/log.h"

namespace flotilla::apiserver::http_internal {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;
using TlsStream = flotilla::TlsStream;
using boost::system::error_code;

inline constexpr auto kAwait = net::as_tuple(net::use_awaitable);
inline constexpr int kDiscardTimeoutSec = 5;
inline constexpr int kCloseTimeoutSec = 5;
inline constexpr size_t kBlock = 64 * 1024;

// The steady clock in nanoseconds (never 0 on a running system).
inline int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline std::string StatusBody(int code, std::string_view reason, std::string_view message) {
  json::object o{{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
                 {"status", "Failure"}, {"message", message}, {"reason", reason},
                 {"code", code}};
  return json::serialize(o);
}

// Appends `data` framed as one chunk of a chunked body.
inline void AppendChunk(std::string& out, std::string_view data) {
  char size[24];
  int n = std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  out.append(size, static_cast<size_t>(n));
  out += data;
  out += "\r\n";
}

// An HTTP/1.1 response as it goes on the wire, head and body in one
// buffer, as Beast's serializer writes the message a handler's answer made
// (each header in order, then Connection: close unless the connection is
// kept, then Content-Length, which Beast sends for every status), without
// the message and its fields.
inline std::string Wire(int code, const Headers& headers, bool keep_alive, std::string_view body) {
  std::string_view reason = http::obsolete_reason(static_cast<http::status>(code));
  std::string wire;
  wire.reserve(160 + body.size());
  wire.append("HTTP/1.1 ").append(std::to_string(code)).append(" ");
  wire.append(reason.data(), reason.size()).append("\r\n");
  for (const auto& [name, value] : headers)
    wire.append(name).append(": ").append(value).append("\r\n");
  if (!keep_alive) wire.append("Connection: close\r\n");
  wire.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n\r\n");
  wire.append(body);
  return wire;
}

// Reads one HTTP/1.1 request straight into a Request: Beast's parser (its
// limits, chunked bodies, keep-alive) without Beast's message, whose fields
// the request would otherwise copy again (an allocation or two per header
// each way). Header names are lower-cased; a repeated header's values are
// joined with commas into one (HTTP's list form). One reader per request,
// as Beast's parsers.
class RequestReader : public http::basic_parser<true> {
 public:
  RequestReader(uint64_t body_limit, uint32_t header_limit) {
    this->body_limit(body_limit);
    this->header_limit(header_limit);
  }
  // Once the read has succeeded: the request, moved out.
  Request Take(X509* cert, std::string remote) {
    request_.peer_cert = cert;
    request_.remote = std::move(remote);
    return std::move(request_);
  }

 private:
  using View = boost::beast::string_view;

  void on_request_impl(http::verb, View method, View target, int, error_code&) override {
    request_.method.assign(method.data(), method.size());
    request_.target.assign(target.data(), target.size());
    SplitTarget(request_.target, &request_.path, &request_.query);
  }
  void on_response_impl(int, View, int, error_code& ec) override {
    ec = http::error::bad_version;  // never called: this parser reads requests
  }
  void on_field_impl(http::field, View name, View value, error_code&) override {
    std::string lower(name.data(), name.size());
    for (char& c : lower) c = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    auto [it, inserted] =
        request_.headers.try_emplace(std::move(lower), value.data(), value.size());
    if (!inserted) it->second.append(",").append(value.data(), value.size());
  }
  void on_header_impl(error_code&) override {}
  void on_body_init_impl(const boost::optional<uint64_t>& length, error_code&) override {
    // The parser refuses a declared length over the limit before this.
    if (length) request_.body.reserve(static_cast<size_t>(*length));
  }
  size_t on_body_impl(View body, error_code&) override {
    request_.body.append(body.data(), body.size());
    return body.size();
  }
  void on_chunk_header_impl(uint64_t, View, error_code&) override {}
  size_t on_chunk_body_impl(uint64_t, View body, error_code&) override {
    request_.body.append(body.data(), body.size());
    return body.size();
  }
  void on_finish_impl(error_code&) override {}

  Request request_;
};

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
class Connection;
template <typename Stream>
class AsyncStream;
template <typename Stream>
class StreamResponder;

// Serves a connection that negotiated HTTP/2 until it ends (http2_server.cc);
// `received`: HTTP/2 bytes already read from it (http2::Upgraded).
net::awaitable<void> ServeHttp2(std::shared_ptr<Connection<TlsStream>> conn, X509* cert,
                                std::string remote, std::string received = {});

}  // namespace flotilla::apiserver::http_internal
