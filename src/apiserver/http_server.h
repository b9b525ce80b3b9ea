// An HTTPS server on the process's shared event loop (base/io.h), HTTP/1.1
// and HTTP/2 (by ALPN):
// keep-alive, a request body limit, and optional client certificates. Without
// a serving certificate it speaks plain HTTP/1.1 (the dashboard's page on
// loopback; never the API).
//
// Connections are coroutines on the shared io_context: reading requests,
// TLS and writing cost no thread while they wait. A request's handler runs
// on the shared blocking pool and may block (a write waits for its group
// commit); its responder's writes are the loop's, awaited by the handler. A
// stream started with StartAsyncStream (a watch) outlives the handler and
// holds no thread at all.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "apiserver/http.h"
#include "base/http2.h"
#include "base/status.h"

namespace flotilla::apiserver {

struct HttpServerOptions {
  std::string bind_address = "127.0.0.1";
  int port = 0;                     // 0 picks a free port
  std::string cert_path, key_path;  // "" cert_path: plain HTTP
  std::string client_ca_path;       // "" = no client certificates requested
  // Presented after the serving certificate in the handshake (the CA that
  // issued it, so that a client holding only a pin of the CA's key can
  // check the chain: `flotilla agent --ca-cert-hash`); "" = none.
  std::string chain_path;
  size_t max_body_bytes = 3 * 1024 * 1024;
  // A connection is closed when its TLS handshake takes longer than
  // handshake_timeout_sec, or when no complete request arrives within
  // idle_timeout_sec (idle keep-alive or a peer sending too slowly).
  int handshake_timeout_sec = 10;
  int idle_timeout_sec = 300;
  // A stream (StartAsyncStream) whose peer falls this many bytes behind is
  // cut off: its queue dropped, the chunked body ended, the connection
  // closed. A write that makes no progress for send_timeout_sec closes the
  // connection too.
  size_t max_stream_buffer_bytes = 16 * 1024 * 1024;
  int send_timeout_sec = 30;
  // Requests for which this says true are handled on the event loop itself
  // rather than handed to the blocking pool: a handler that never waits (a
  // read served from memory) saves two thread hand-offs. Such a handler
  // must not block, nor start a synchronous stream. Null: every request
  // goes to the pool.
  std::function<bool(const Request&)> runs_on_loop;
  // HTTP/2 is offered by ALPN beside HTTP/1.1 (TLS only), as kube-apiserver
  // offers it, with at most http2_max_streams streams open per connection
  // (kube-apiserver's --http2-max-streams-per-connection, 100 by default).
  bool http2 = true;
  uint32_t http2_max_streams = 100;
  // An HTTP/2 connection that receives nothing at all (no frame, not even
  // a PING) for this long is closed; 0: never. For an agent, whose
  // federation PINGs its tunnel: a tunnel gone silent is redialled.
  int http2_silence_timeout_sec = 0;
  // False: no listening socket; the server serves only connections handed
  // to ServeDialled (an agent, which dials out and listens nowhere).
  bool listen = true;
};

using Handler = std::function<void(Request& request, Responder& responder)>;

class HttpServer {
 public:
  // Binds and starts accepting. Thread-safe to Stop from any thread.
  static StatusOr<std::unique_ptr<HttpServer>> Start(const HttpServerOptions& opts,
                                                     Handler handler);
  virtual ~HttpServer() = default;
  virtual int port() const = 0;
  // The connections being served now (accepted and dialled).
  virtual size_t open_connections() const = 0;
  // Serves HTTP/2 on `stream`, a TLS connection this process dialled whose
  // HTTP/1.1 exchange switched protocols (http2::Upgraded; an agent's
  // tunnel): the peer sends the requests. `received`: the HTTP/2 bytes
  // already read. `on_end` runs once the connection has closed, before
  // Stop returns (at once when the server is stopping); the stream's
  // executor must be a strand.
  virtual void ServeDialled(http2::TlsStream stream, std::string received,
                            std::function<void()> on_end) = 0;
  // Stops accepting, closes connections and waits until no handler or
  // stream of this server runs.
  virtual void Stop() = 0;
};

}  // namespace flotilla::apiserver
