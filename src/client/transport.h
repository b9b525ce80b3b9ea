// Transports: what carries one API request to a server and its response
// back. The Client verbs are written once over this interface
// (NewTransportClient): they build ApiRequests and decode the responses the
// same way whatever carries them, so the REST client (HTTPS, rest_client.h)
// and the in-process client (ApiServer::Handle, in_process_client.h) share
// paths, query strings, bodies, error decoding and watch decoding by
// construction. A transport only moves bytes.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "client/client.h"

namespace flotilla::client {

inline bool Is2xx(int code) { return code >= 200 && code < 300; }
// How much of an error response's body a transport keeps (the rest of a
// huge error page says nothing more).
inline constexpr size_t kMaxErrorBody = 1 << 20;

struct ApiRequest {
  std::string method;  // "GET", "POST", "PUT", "PATCH", "DELETE"
  std::string path;    // percent-encoded, e.g. "/api/v1/namespaces/default/pods/web"
  std::vector<std::pair<std::string, std::string>> query;  // not encoded, in order
  std::string body;
  std::string content_type;  // of the body; "" when there is none
  // Sent after the transport's own: a name given here replaces the
  // transport's header of that name (Accept, User-Agent); a name given
  // twice is sent twice (Impersonate-Group).
  std::vector<std::pair<std::string, std::string>> headers;

  // The percent-encoded request target: path, then '?' and the query when
  // there is one.
  std::string Target() const;
};

struct ApiResponse {
  int code = 0;
  std::string body;
  // The response's Content-Type and Warning headers, for a caller that
  // passes the response on (a proxy).
  std::string content_type;
  std::vector<std::string> warnings;
};

// Receives a streamed response. A transport calls it from the thread that
// runs Transport::Stream; Cancel-related members may be called from any
// thread.
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  // Called once when the response head is known. For a code outside 2xx,
  // `error_body` is the complete body and OnData is not called.
  virtual void OnHead(int code, std::string error_body) = 0;
  // A piece of the body, in order. Returns false to end the stream.
  virtual bool OnData(std::string_view data) = 0;
  // True once the consumer wants the stream to end.
  virtual bool Cancelled() const = 0;
  // Blocks up to `millis` for Cancelled(); returns it.
  virtual bool WaitCancelled(int millis) = 0;
  // Registers how to unblock the transport when it is blocked in I/O; called
  // under the sink's lock on cancellation, so it must not block. Pass an
  // empty function before whatever it refers to is destroyed.
  virtual void SetCanceller(std::function<void()> cancel) = 0;
};

// Receives a streamed response asynchronously (Transport::StartStream).
// The calls come one at a time and in order, on the process's shared loop
// (base/io.h) or, for OnHead, on the thread that starts the stream; they
// must not block for long.
class AsyncStreamSink {
 public:
  virtual ~AsyncStreamSink() = default;
  // Once, when the response head is known. For a code outside 2xx,
  // `error_body` is the complete body and OnData is not called.
  virtual void OnHead(int code, std::string error_body) = 0;
  // The response's headers, just before OnHead, for a sink that passes
  // them on (a proxy); transports over HTTP call it.
  virtual void OnHeaders(std::vector<std::pair<std::string, std::string>> headers) {
    (void)headers;
  }
  // A piece of the body, in order. Returns false to end the stream.
  virtual bool OnData(std::string_view data) = 0;
  // A piece of a watch's body, whole lines, from a server in this process
  // that had their objects parsed: `objects[i]` is the i-th line's object
  // (null: not parsed). By default, OnData(data).
  virtual bool OnWatchLines(std::string_view data,
                            std::span<const std::shared_ptr<const json::object>> objects) {
    (void)objects;
    return OnData(data);
  }
  // Once, last: OK when the server ended the stream, the sink did or the
  // call was cancelled; the transport failure otherwise (before the head,
  // OnHead is never called).
  virtual void OnEnd(Status status) = 0;
};

// A stream started by Transport::StartStream. Thread-safe.
class StreamCall {
 public:
  virtual ~StreamCall() = default;
  // Ends the stream soon; OnEnd follows, asynchronously. Idempotent.
  virtual void Cancel() = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Sends one request and returns its complete response. HTTP error codes
  // are responses, not errors; errors are transport failures (cannot
  // connect, TLS, timeouts). Thread-safe.
  virtual StatusOr<ApiResponse> Do(const ApiRequest& req) = 0;
  // Sends a streaming request and feeds its response to `sink` until the
  // stream ends, fails or the sink ends or cancels it, blocking the calling
  // thread throughout. Returns OK when the server ended the stream or the
  // sink did; a transport failure otherwise (when it happens before the
  // head, OnHead is never called). Thread-safe.
  virtual Status Stream(const ApiRequest& req, StreamSink& sink) = 0;
  // Starts a streaming request whose response goes to `sink` without a
  // thread of its own; the transport holds `sink` until OnEnd. May block
  // briefly (a rate limit), never for the response. Thread-safe.
  virtual std::shared_ptr<StreamCall> StartStream(const ApiRequest& req,
                                                  std::shared_ptr<AsyncStreamSink> sink) = 0;
};

// The Client over `transport`. Watches share ownership of the transport, so
// they may outlive the Client.
std::unique_ptr<Client> NewTransportClient(std::shared_ptr<Transport> transport);

}  // namespace flotilla::client
