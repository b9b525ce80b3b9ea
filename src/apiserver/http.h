// The HTTP surface the API server's handlers see: a parsed request and a
// responder that either answers once or streams chunks (watch).
#pragma once

#include <openssl/x509.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "apiserver/url.h"
#include "base/json.h"

namespace flotilla::http2 {
struct Upgraded;
}

namespace flotilla::apiserver {

using Headers = std::vector<std::pair<std::string, std::string>>;

// A request's headers (names in lower case), looked up by a view without
// building a string.
using HeaderMap = std::map<std::string, std::string, std::less<>>;

struct Request {
  std::string method;  // "GET", "POST", ...
  std::string target;  // as received, e.g. "/api/v1/namespaces?limit=5"
  std::string path;    // percent-decoded path without the query
  QueryParams query;
  HeaderMap headers;
  std::string body;
  X509* peer_cert = nullptr;          // verified TLS client certificate, not owned
  std::string remote;                 // "ip:port"
  std::string protocol = "HTTP/1.1";  // or "HTTP/2.0", as Go's Request.Proto

  // First value of a query parameter ("" when absent).
  std::string Query(std::string_view name) const;
  bool HasQuery(std::string_view name) const;
  // A boolean parameter as Go's strconv.ParseBool reads it ("true", "True",
  // "1", "t", ...); false when absent or unparsable.
  bool QueryBool(std::string_view name) const;
  // Header value ("" when absent); `name` lower-case.
  std::string Header(std::string_view name) const;
  // The same, as a view into the request.
  std::string_view HeaderView(std::string_view name) const;
};

// A chunked response that lives on after the handler returns (a watch): the
// handler starts it, hands it to whatever produces the chunks, and returns,
// so that an open stream holds no thread. Thread-safe.
class ChunkStream {
 public:
  virtual ~ChunkStream() = default;
  // Sends `chunk` to the peer as far as the connection takes it at once
  // and queues the rest, never waiting; false once the stream has ended.
  // An HTTPS stream encrypts on the caller's thread. A peer that falls too
  // far behind (more than the server's stream buffer queued) is cut off:
  // what is queued is dropped, the chunked body is ended and the
  // connection closed, and the stream ends.
  virtual bool Write(std::string chunk) = 0;
  // Whether WriteWatchLines hands objects on: a stream to a reader in this
  // process (the in-process client's watches need not parse the lines).
  // Others take the lines alone, and a writer need not gather objects.
  virtual bool TakesObjects() const { return false; }
  // Writes whole watch lines, `objects[i]` the i-th line's object when the
  // server has it parsed (null otherwise; shared, never modified); without
  // TakesObjects, Write(chunk).
  virtual bool WriteWatchLines(std::string chunk,
                               std::vector<std::shared_ptr<const json::object>> objects) {
    (void)objects;
    return Write(std::move(chunk));
  }
  // Ends the stream once what is queued has been sent.
  virtual void End() = 0;
  // Calls `fn` once the stream has ended, for whatever reason (End, the
  // peer gone, cut off, the server stopping), on a thread that may block
  // briefly but never inside Write or End. One function; set it once.
  virtual void OnEnd(std::function<void()> fn) = 0;
};

// Answers one request. Exactly one of Respond, StartStream or
// StartAsyncStream is called.
// Not thread-safe: one handler thread uses it; only ClientGone and
// WaitClientGone may also be called from another thread while it streams.
class Responder {
 public:
  virtual ~Responder() = default;
  virtual void Respond(int code, const Headers& headers, std::string body) = 0;
  // Responds with the concatenation of `parts`, which stay valid until it
  // returns. Lets a large body (a list) go out without being assembled in
  // one buffer first; by default it is assembled and passed to Respond.
  virtual void RespondParts(int code, const Headers& headers,
                            const std::vector<std::string_view>& parts) {
    size_t size = 0;
    for (std::string_view p : parts) size += p.size();
    std::string body;
    body.reserve(size);
    for (std::string_view p : parts) body += p;
    Respond(code, headers, std::move(body));
  }
  // Starts a chunked response; returns false when the client is gone.
  virtual bool StartStream(int code, const Headers& headers) = 0;
  // Sends one chunk; returns false when the client is gone.
  virtual bool WriteChunk(std::string_view data) = 0;
  // True once the peer has closed its side (checked without blocking).
  virtual bool ClientGone() = 0;
  // Blocks up to `millis` for the peer to close; returns true if it did.
  virtual bool WaitClientGone(int millis) = 0;
  // Registers `wake`, called (from another thread, without blocking) as
  // soon as the responder learns the peer is gone, so that a stream waiting
  // for something to send can end at once; an empty function unregisters.
  // Responders that only learn it when asked (ClientGone) ignore it.
  virtual void NotifyWhenGone(std::function<void()> wake) { (void)wake; }
  virtual bool Responded() const = 0;

  // Answers 101 Switching Protocols with `headers` (Upgrade and Connection
  // among them) and, once that is sent, hands the connection to `take`, on
  // the connection's strand: HTTP/2 goes on over it with the roles of
  // client and server as `take` decides (an agent's tunnel). False when
  // this responder cannot (plain TCP, an HTTP/2 stream, a handler on the
  // loop); the handler then answers otherwise.
  virtual bool SwitchProtocols(const Headers& headers, std::function<void(http2::Upgraded)> take) {
    (void)headers;
    (void)take;
    return false;
  }
  // As SwitchProtocols, but nothing is answered first: `take` gets the
  // connection as it is after the request and answers the upgrade itself
  // (a WebSocket handshake a library completes). False when this
  // responder cannot.
  virtual bool TakeConnection(std::function<void(http2::Upgraded)> take) {
    (void)take;
    return false;
  }

  // Starts a chunked response that outlives the handler call; null when the
  // client is gone. The default serves it from the handler's caller: it
  // starts a synchronous stream, and RunDetachedStream, called once the
  // handler has returned, writes the chunks until the stream ends.
  // Responders of an event-driven server override it.
  virtual std::shared_ptr<ChunkStream> StartAsyncStream(int code, const Headers& headers);
  // Serves the stream StartAsyncStream's default started, if any, until it
  // ends. Whoever calls a handler with a synchronous responder calls it.
  void RunDetachedStream();

 private:
  class DetachedStream;
  std::shared_ptr<DetachedStream> detached_;
};

}  // namespace flotilla::apiserver
