// HTTP/2 over TLS on the shared loop (base/io.h): what the API server's h2
// connections (apiserver/http2_server.h) and the REST client's
// (client/h2_connection.h) share. The protocol itself, frames, HPACK, flow
// control and stream states, is nghttp2's (libnghttp2, docs/client.md says
// why); this moves its bytes through a TlsStream (base/tls_stream.h) and
// negotiates it with ALPN, as kube-apiserver and client-go do.
#pragma once

#include <nghttp2/nghttp2.h>
#include <openssl/ssl.h>

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/tls_stream.h"

namespace flotilla::http2 {

namespace net = boost::asio;
using TlsStream = flotilla::TlsStream;
using boost::system::error_code;

// Server: makes `ctx` select "h2" when the client offers it and `h2` is
// set, else "http/1.1" (a client offering neither gets no ALPN answer, as
// from a server without ALPN).
void SelectAlpn(SSL_CTX* ctx, bool h2);
// Client: offers "h2" and "http/1.1", or only "http/1.1".
void OfferAlpn(SSL* ssl, bool h2);
// After the handshake: whether the peers agreed on h2.
bool NegotiatedH2(SSL* ssl);

struct SessionDeleter {
  void operator()(nghttp2_session* s) const { nghttp2_session_del(s); }
};
using SessionPtr = std::unique_ptr<nghttp2_session, SessionDeleter>;

// The callbacks a session is made with; null ones are not set.
struct Callbacks {
  nghttp2_on_begin_headers_callback on_begin_headers = nullptr;
  nghttp2_on_header_callback on_header = nullptr;
  nghttp2_on_data_chunk_recv_callback on_data_chunk = nullptr;
  nghttp2_on_frame_recv_callback on_frame_recv = nullptr;
  nghttp2_on_stream_close_callback on_stream_close = nullptr;
};
enum class Side { kClient, kServer };
// A session of `side` whose callbacks get `user`; `option` may be null.
SessionPtr NewSession(Side side, const Callbacks& callbacks, void* user,
                      const nghttp2_option* option = nullptr);

// Header fields for nghttp2_submit_*: keeps the names and values alive
// until the submission has copied them. Names are lower-cased, and the
// fields HTTP/2 forbids (Connection and its kin) dropped.
class HeaderBlock {
 public:
  void Add(std::string_view name, std::string_view value);
  // Replaces every field named `name` (lower-case) with one.
  void Set(std::string_view name, std::string_view value);
  bool Has(std::string_view name) const;
  const nghttp2_nv* data();
  size_t size() const { return fields_.size(); }

 private:
  std::deque<std::pair<std::string, std::string>> fields_;
  std::vector<nghttp2_nv> nv_;
};

// A TLS connection whose HTTP/1.1 exchange ended in 101 Switching Protocols
// to HTTP/2 (an agent's tunnel, docs/federation.md): the side that accepted
// it sends the requests, the side that dialled serves them.
struct Upgraded {
  // Keeps `stream` alive; `stream`'s executor is a strand.
  std::shared_ptr<void> owner;
  TlsStream* stream = nullptr;
  // Bytes read past the HTTP/1.1 exchange: the start of HTTP/2.
  std::string received;
  // Called once, when whoever took the stream is done with it (it has shut
  // the socket down or the peer has gone); the stream closes then.
  std::function<void()> done;
};

// The connection's bytes, on the stream's strand: Run reads and feeds the
// session; Flush sends what the session has to send, one write at a time,
// while a read may be under way (a TlsStream takes one of each).
// Every member is for the strand only.
class Pump {
 public:
  Pump(TlsStream& stream, nghttp2_session* session, std::chrono::seconds write_timeout);
  Pump(const Pump&) = delete;
  Pump& operator=(const Pump&) = delete;

  // Reads until the peer closes, a read fails, the session fails or wants
  // to neither read nor write; returns why. `owner` keeps whatever holds
  // the stream and session alive meanwhile. `received`: bytes already read
  // from the stream (past an HTTP/1.1 exchange that switched protocols),
  // fed to the session first.
  net::awaitable<error_code> Run(std::shared_ptr<void> owner, std::string received = {});
  // Sends what the session wants to send, now or once the write under way
  // ends. A write that makes no progress for the write timeout shuts the
  // socket down, which ends Run.
  void Flush(std::shared_ptr<void> owner);
  // Shuts the socket down once the session has nothing more to send (the
  // GOAWAY that says why): ends Run.
  void CloseAfterFlush(std::shared_ptr<void> owner);
  // Shuts the socket down now; Run and any write end, and the session is
  // never asked for bytes again (its streams' data sources may be gone).
  void ShutDown();

 private:
  net::awaitable<void> Write(std::shared_ptr<void> owner);

  TlsStream& stream_;
  nghttp2_session* session_;
  const std::chrono::seconds write_timeout_;
  net::steady_timer write_timer_;
  bool writing_ = false;
  bool close_after_flush_ = false;
  bool shut_ = false;
  std::string out_;
  std::array<char, 16 * 1024> in_;
};

}  // namespace flotilla::http2
