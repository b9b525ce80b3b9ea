// H2Server: a connection that negotiated HTTP/2 (see http_internal.h).
#pragma once

#include "apiserver/http_internal.h"
#include "base/http2.h"
#include "base/mutex.h"

namespace flotilla::apiserver::http_internal {

// What a stream's handler and its response share with the connection's
// strand: the body waiting to go out, and whether the stream has ended.
struct H2StreamState {
  Mutex mu;
  CondVar cv;
  std::deque<std::string> out GUARDED_BY(mu);
  size_t out_offset GUARDED_BY(mu) = 0;  // into out.front()
  size_t queued GUARDED_BY(mu) = 0;      // bytes in out not yet taken
  bool ending GUARDED_BY(mu) = false;    // nothing follows what is in out
  bool closed GUARDED_BY(mu) = false;    // the stream has ended
  // The data source found out empty and waits for Resume.
  bool deferred GUARDED_BY(mu) = false;
  std::function<void()> wake GUARDED_BY(mu);    // Responder::NotifyWhenGone
  std::function<void()> on_end GUARDED_BY(mu);  // ChunkStream::OnEnd
};

// One HTTP/2 connection: an nghttp2 server session on the connection's
// strand. Each request is a stream whose handler runs on the blocking pool
// (or the loop, as for HTTP/1.1); its response, whole or streamed, goes out
// as the stream's flow-control window allows, so that a watcher that reads
// slowly holds back only its own stream (and is cut off once it is the
// server's stream buffer behind, as over HTTP/1.1).
class H2Server : public std::enable_shared_from_this<H2Server> {
 public:
  using Conn = Connection<TlsStream>;

  explicit H2Server(std::shared_ptr<Conn> conn);

  // On the strand: serves until the connection ends and every handler of
  // it has returned. `received`: HTTP/2 bytes already read (http2::Upgraded).
  net::awaitable<void> Serve(X509* cert, std::string remote, std::string received);

  // Any thread: what a stream's responder asks of the session.
  void PostResponse(int32_t id, int code, const Headers& headers, bool body);
  void PostResume(int32_t id);
  void PostReset(int32_t id);

  const HttpServerOptions& opts() const;

 private:
  struct Stream {
    Request request;
    size_t body_bytes = 0;
    bool too_large = false;
    bool started = false;  // the handler was started
    std::shared_ptr<H2StreamState> state = std::make_shared<H2StreamState>();
  };

  // nghttp2's callbacks; `user` is the H2Server.
  static int OnBeginHeaders(nghttp2_session*, const nghttp2_frame* frame, void* user);
  static int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                      size_t namelen, const uint8_t* value, size_t valuelen, uint8_t flags,
                      void* user);
  static int OnDataChunk(nghttp2_session*, uint8_t flags, int32_t id, const uint8_t* data,
                         size_t len, void* user);
  static int OnFrameRecv(nghttp2_session*, const nghttp2_frame* frame, void* user);
  static int OnStreamClose(nghttp2_session*, int32_t id, uint32_t error, void* user);
  static ssize_t ReadBody(nghttp2_session*, int32_t id, uint8_t* buf, size_t length,
                          uint32_t* flags, nghttp2_data_source* source, void* user);

  void Start(int32_t id, Stream& stream);
  void Respond(int32_t id, int code, const Headers& headers, bool body);
  // Marks the stream ended for its handler and response, and runs what
  // waits for that.
  static void Close(H2StreamState& state);
  void Flush() { pump_->Flush(shared_from_this()); }
  // Says GOAWAY and closes once it is sent (the server stopping, or idle).
  void GoAway();
  void ArmIdle();
  // Closes the connection when a whole silence timeout passes unheard.
  void ArmSilence();
  void HandlerDone();

  std::shared_ptr<Conn> conn_;
  http2::SessionPtr session_;
  std::optional<http2::Pump> pump_;
  X509* cert_ = nullptr;
  std::string remote_;
  // On the strand from here.
  std::map<int32_t, Stream> streams_;
  size_t handlers_ = 0;  // running handlers
  net::steady_timer idle_;
  net::steady_timer handlers_done_;
  bool going_away_ = false;
  net::steady_timer silence_;
  bool heard_ = false;  // a frame came since the silence timer was armed
};

}  // namespace flotilla::apiserver::http_internal
