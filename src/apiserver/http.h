// The HTTP surface the API server's handlers see: a parsed request and a
// responder that either answers once or streams chunks (watch).
#pragma once

#include <openssl/x509.h>

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flotilla::apiserver {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Request {
  std::string method;                             // "GET", "POST", ...
  std::string target;                             // as received, e.g. "/api/v1/namespaces?limit=5"
  std::string path;                               // percent-decoded path without the query
  std::multimap<std::string, std::string> query;  // percent-decoded
  std::map<std::string, std::string> headers;     // lower-cased names
  std::string body;
  X509* peer_cert = nullptr;  // verified TLS client certificate, not owned
  std::string remote;         // "ip:port"

  // First value of a query parameter ("" when absent).
  std::string Query(std::string_view name) const;
  bool HasQuery(std::string_view name) const;
  // A boolean parameter as Go's strconv.ParseBool reads it ("true", "True",
  // "1", "t", ...); false when absent or unparsable.
  bool QueryBool(std::string_view name) const;
  // Header value ("" when absent); `name` lower-case.
  std::string Header(std::string_view name) const;
};

// Answers one request. Exactly one of Respond or StartStream is called.
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
};

}  // namespace flotilla::apiserver
