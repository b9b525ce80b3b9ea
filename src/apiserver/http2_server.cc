// H2Server (http2_server.h): HTTP/2 connections of the HTTP server.
#include "apiserver/http2_server.h"

#include <boost/asio/co_spawn.hpp>

#include "apiserver/http_connection.h"

namespace flotilla::apiserver::http_internal {
namespace {

// A synchronous stream's writer (Responder::WriteChunk) waits while this
// much of its body is queued.
constexpr size_t kSyncStreamQueue = 1 << 20;
// The receive windows: 256 KiB per stream, as kube-apiserver's upload
// buffer, and that per stream the connection allows at once.
constexpr int32_t kStreamWindow = 256 * 1024;

void Append(H2StreamState& st, std::string data) REQUIRES(st.mu) {
  st.queued += data.size();
  st.out.push_back(std::move(data));
}

// Takes what waits to resume the stream's data source; true when it did.
bool TakeDeferred(H2StreamState& st) REQUIRES(st.mu) {
  bool deferred = st.deferred;
  st.deferred = false;
  return deferred;
}

// A stream's response.
class H2Responder : public Responder {
 public:
  H2Responder(std::shared_ptr<H2Server> server, int32_t id, std::shared_ptr<H2StreamState> state,
              bool on_loop, bool head)
      : server_(std::move(server)),
        id_(id),
        state_(std::move(state)),
        on_loop_(on_loop),
        head_(head) {}

  void Respond(int code, const Headers& headers, std::string body) override {
    responded_ = true;
    Headers with_length = headers;
    bool has_length = false;
    for (const auto& [k, v] : headers) has_length |= EqualsLower(k, "content-length");
    if (!has_length) with_length.emplace_back("content-length", std::to_string(body.size()));
    bool has_body = !head_ && !body.empty();
    {
      MutexLock lock(state_->mu);
      if (has_body) Append(*state_, std::move(body));
      state_->ending = true;
    }
    server_->PostResponse(id_, code, with_length, has_body);
  }

  bool StartStream(int code, const Headers& headers) override {
    if (on_loop_) {
      spdlog::error("a synchronous stream cannot be served on the event loop");
      return false;
    }
    responded_ = true;
    streaming_ = true;
    server_->PostResponse(id_, code, headers, true);
    return !ClientGone();
  }

  bool WriteChunk(std::string_view data) override {
    MutexLock lock(state_->mu);
    if (state_->queued > kSyncStreamQueue && !state_->closed) {
      ScopedBlocking blocking;  // for a peer that reads slowly
      state_->cv.Wait(lock, [&]() REQUIRES(state_->mu) {
        return state_->queued <= kSyncStreamQueue || state_->closed;
      });
    }
    if (state_->closed || state_->ending) return false;
    Append(*state_, std::string(data));
    if (TakeDeferred(*state_)) server_->PostResume(id_);
    return true;
  }

  std::shared_ptr<ChunkStream> StartAsyncStream(int code, const Headers& headers) override;

  bool ClientGone() override {
    MutexLock lock(state_->mu);
    return state_->closed;
  }

  bool WaitClientGone(int millis) override {
    MutexLock lock(state_->mu);
    ScopedBlocking blocking;
    return state_->cv.WaitFor(lock, std::chrono::milliseconds(millis),
                              [&]() REQUIRES(state_->mu) { return state_->closed; });
  }

  void NotifyWhenGone(std::function<void()> wake) override {
    {
      MutexLock lock(state_->mu);
      if (!state_->closed || !wake) {
        state_->wake = std::move(wake);
        return;
      }
    }
    wake();
  }

  bool Responded() const override { return responded_; }

  // After the handler: answers a handler that did not, ends a synchronous
  // stream.
  void Finish() {
    if (!responded_) {
      Respond(500, {{"Content-Type", "application/json"}},
              StatusBody(500, "InternalError", "no response"));
      return;
    }
    if (!streaming_ || async_) return;
    MutexLock lock(state_->mu);
    state_->ending = true;
    if (TakeDeferred(*state_)) server_->PostResume(id_);
  }

 private:
  static bool EqualsLower(std::string_view a, std::string_view lower) {
    if (a.size() != lower.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(a[i])) != lower[i]) return false;
    }
    return true;
  }

  std::shared_ptr<H2Server> server_;
  const int32_t id_;
  std::shared_ptr<H2StreamState> state_;
  const bool on_loop_;
  const bool head_;
  bool responded_ = false;
  bool streaming_ = false;
  bool async_ = false;
};

// A stream that outlives its handler (a watch): chunks queue in the
// stream's state and go out as its window allows.
class H2ChunkStream : public ChunkStream {
 public:
  H2ChunkStream(std::shared_ptr<H2Server> server, int32_t id, std::shared_ptr<H2StreamState> state)
      : server_(std::move(server)), id_(id), state_(std::move(state)) {}

  bool Write(std::string chunk) override {
    MutexLock lock(state_->mu);
    if (state_->closed || state_->ending) return false;
    if (state_->queued + chunk.size() > server_->opts().max_stream_buffer_bytes) {
      spdlog::debug("cutting off an HTTP/2 stream {} bytes behind", state_->queued);
      state_->out.clear();
      state_->queued = 0;
      state_->out_offset = 0;
      state_->ending = true;
      server_->PostReset(id_);
      return false;
    }
    Append(*state_, std::move(chunk));
    if (TakeDeferred(*state_)) server_->PostResume(id_);
    return true;
  }

  void End() override {
    MutexLock lock(state_->mu);
    if (state_->ending) return;
    state_->ending = true;
    if (TakeDeferred(*state_)) server_->PostResume(id_);
  }

  void OnEnd(std::function<void()> fn) override {
    {
      MutexLock lock(state_->mu);
      if (!state_->closed) {
        state_->on_end = std::move(fn);
        return;
      }
    }
    fn();
  }

 private:
  std::shared_ptr<H2Server> server_;
  const int32_t id_;
  std::shared_ptr<H2StreamState> state_;
};

std::shared_ptr<ChunkStream> H2Responder::StartAsyncStream(int code, const Headers& headers) {
  responded_ = true;
  streaming_ = true;
  async_ = true;
  server_->PostResponse(id_, code, headers, true);
  return std::make_shared<H2ChunkStream>(server_, id_, state_);
}

}  // namespace

net::awaitable<void> ServeHttp2(std::shared_ptr<Connection<TlsStream>> conn, X509* cert,
                                std::string remote, std::string received) {
  auto server = std::make_shared<H2Server>(std::move(conn));
  co_await server->Serve(cert, std::move(remote), std::move(received));
}

H2Server::H2Server(std::shared_ptr<Conn> conn)
    : conn_(std::move(conn)),
      idle_(conn_->executor()),
      handlers_done_(conn_->executor()),
      silence_(conn_->executor()) {}

const HttpServerOptions& H2Server::opts() const { return conn_->opts(); }

net::awaitable<void> H2Server::Serve(X509* cert, std::string remote, std::string received) {
  cert_ = cert;
  remote_ = std::move(remote);
  session_ = http2::NewSession(http2::Side::kServer,
                               {.on_begin_headers = OnBeginHeaders,
                                .on_header = OnHeader,
                                .on_data_chunk = OnDataChunk,
                                .on_frame_recv = OnFrameRecv,
                                .on_stream_close = OnStreamClose},
                               this);
  nghttp2_session* raw = session_.get();
  uint32_t max_streams = opts().http2_max_streams;
  nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, max_streams},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kStreamWindow},
  };
  nghttp2_submit_settings(raw, NGHTTP2_FLAG_NONE, settings, std::size(settings));
  nghttp2_session_set_local_window_size(raw, NGHTTP2_FLAG_NONE, 0,
                                        static_cast<int32_t>(kStreamWindow * max_streams));
  pump_.emplace(conn_->stream(), raw, std::chrono::seconds(opts().send_timeout_sec));
  auto self = shared_from_this();
  conn_->set_abort_hook([self] { self->GoAway(); });
  ArmIdle();
  if (opts().http2_silence_timeout_sec > 0) ArmSilence();
  co_await pump_->Run(self, std::move(received));
  conn_->set_abort_hook(nullptr);
  idle_.cancel();
  silence_.cancel();
  pump_->ShutDown();
  for (auto& [id, stream] : streams_) Close(*stream.state);
  streams_.clear();
  // Handlers still running hold this session; the connection ends after them.
  while (handlers_ > 0) {
    handlers_done_.expires_at(net::steady_timer::time_point::max());
    co_await handlers_done_.async_wait(kAwait);
  }
  // Whatever was pending is abandoned; the writes hold the session until they end.
  conn_->set_session_taken();
}

void H2Server::GoAway() {
  if (going_away_) return;
  going_away_ = true;
  nghttp2_session_terminate_session(session_.get(), NGHTTP2_NO_ERROR);
  pump_->CloseAfterFlush(shared_from_this());
  // A peer that stops reading cannot hold the connection open.
  conn_->Arm(kCloseTimeoutSec);
}

void H2Server::ArmIdle() {
  idle_.expires_after(std::chrono::seconds(opts().idle_timeout_sec));
  idle_.async_wait([self = shared_from_this()](error_code ec) {
    if (!ec && self->streams_.empty()) self->GoAway();
  });
}

void H2Server::ArmSilence() {
  heard_ = false;
  silence_.expires_after(std::chrono::seconds(opts().http2_silence_timeout_sec));
  silence_.async_wait([self = shared_from_this()](error_code ec) {
    if (ec) return;
    if (!self->heard_) {
      spdlog::warn("HTTP/2 connection {}: nothing heard for {} s; closing it", self->remote_,
                   self->opts().http2_silence_timeout_sec);
      return self->pump_->ShutDown();
    }
    self->ArmSilence();
  });
}

void H2Server::HandlerDone() {
  --handlers_;
  if (handlers_ == 0) handlers_done_.cancel();
}

int H2Server::OnBeginHeaders(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  auto* self = static_cast<H2Server*>(user);
  if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
  self->streams_.try_emplace(frame->hd.stream_id);
  self->idle_.cancel();
  return 0;
}

int H2Server::OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                       size_t namelen, const uint8_t* value, size_t valuelen, uint8_t, void* user) {
  auto* self = static_cast<H2Server*>(user);
  auto it = self->streams_.find(frame->hd.stream_id);
  if (it == self->streams_.end() || it->second.started) return 0;
  Request& req = it->second.request;
  std::string_view n(reinterpret_cast<const char*>(name), namelen);
  std::string_view v(reinterpret_cast<const char*>(value), valuelen);
  if (n == ":method") {
    req.method = v;
  } else if (n == ":path") {
    req.target = v;
  } else if (n == ":authority") {
    req.headers["host"] = v;
  } else if (!n.starts_with(':')) {
    // nghttp2 has checked the names are lower-case.
    auto [h, inserted] = req.headers.emplace(std::string(n), std::string(v));
    if (!inserted) h->second += (n == "cookie" ? "; " : ",") + std::string(v);
  }
  return 0;
}

int H2Server::OnDataChunk(nghttp2_session*, uint8_t, int32_t id, const uint8_t* data, size_t len,
                          void* user) {
  auto* self = static_cast<H2Server*>(user);
  auto it = self->streams_.find(id);
  if (it == self->streams_.end() || it->second.started) return 0;
  Stream& s = it->second;
  s.body_bytes += len;
  if (s.body_bytes > self->opts().max_body_bytes) s.too_large = true;
  if (!s.too_large) s.request.body.append(reinterpret_cast<const char*>(data), len);
  return 0;
}

int H2Server::OnFrameRecv(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  auto* self = static_cast<H2Server*>(user);
  self->heard_ = true;
  if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) return 0;
  if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) == 0) return 0;
  auto it = self->streams_.find(frame->hd.stream_id);
  if (it == self->streams_.end() || it->second.started) return 0;
  self->Start(it->first, it->second);
  return 0;
}

void H2Server::Start(int32_t id, Stream& stream) {
  stream.started = true;
  if (stream.too_large) {
    std::string body =
        StatusBody(413, "RequestEntityTooLarge",
                   "Request entity too large: limit is " + std::to_string(opts().max_body_bytes));
    {
      MutexLock lock(stream.state->mu);
      Append(*stream.state, std::move(body));
      stream.state->ending = true;
    }
    Respond(id, 413, {{"Content-Type", "application/json"}}, true);
    return;
  }
  auto req = std::make_shared<Request>(std::move(stream.request));
  SplitTarget(req->target, &req->path, &req->query);
  req->peer_cert = cert_;
  req->remote = remote_;
  req->protocol = "HTTP/2.0";
  bool on_loop = opts().runs_on_loop && opts().runs_on_loop(*req);
  auto responder = std::make_shared<H2Responder>(shared_from_this(), id, stream.state, on_loop,
                                                 req->method == "HEAD");
  ++handlers_;
  auto work = [self = shared_from_this(), req, responder] {
    self->conn_->handler()(*req, *responder);
    responder->Finish();
  };
  if (on_loop) {
    work();
    HandlerDone();
    return;
  }
  SharedBlockingPool().Submit([work, self = shared_from_this()] {
    work();
    net::post(self->conn_->executor(), [self] { self->HandlerDone(); });
  });
}

void H2Server::PostResponse(int32_t id, int code, const Headers& headers, bool body) {
  net::post(conn_->executor(), [self = shared_from_this(), id, code, headers, body] {
    self->Respond(id, code, headers, body);
  });
}

void H2Server::PostResume(int32_t id) {
  net::post(conn_->executor(), [self = shared_from_this(), id] {
    if (!self->streams_.contains(id)) return;
    nghttp2_session_resume_data(self->session_.get(), id);
    self->Flush();
  });
}

void H2Server::PostReset(int32_t id) {
  net::post(conn_->executor(), [self = shared_from_this(), id] {
    if (!self->streams_.contains(id)) return;
    nghttp2_submit_rst_stream(self->session_.get(), NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
    self->Flush();
  });
}

void H2Server::Respond(int32_t id, int code, const Headers& headers, bool body) {
  auto it = streams_.find(id);
  if (it == streams_.end()) return;
  http2::HeaderBlock block;
  block.Add(":status", std::to_string(code));
  for (const auto& [k, v] : headers) block.Add(k, v);
  nghttp2_data_provider provider{};
  provider.source.ptr = it->second.state.get();
  provider.read_callback = ReadBody;
  nghttp2_submit_response(session_.get(), id, block.data(), block.size(),
                          body ? &provider : nullptr);
  Flush();
}

ssize_t H2Server::ReadBody(nghttp2_session*, int32_t, uint8_t* buf, size_t length, uint32_t* flags,
                           nghttp2_data_source* source, void*) {
  auto& st = *static_cast<H2StreamState*>(source->ptr);
  MutexLock lock(st.mu);
  size_t n = 0;
  while (n < length && !st.out.empty()) {
    std::string& front = st.out.front();
    size_t take = std::min(length - n, front.size() - st.out_offset);
    std::memcpy(buf + n, front.data() + st.out_offset, take);
    n += take;
    st.out_offset += take;
    if (st.out_offset == front.size()) {
      st.out.pop_front();
      st.out_offset = 0;
    }
  }
  st.queued -= n;
  if (st.out.empty() && st.ending) {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
  } else if (n == 0) {
    st.deferred = true;
    return NGHTTP2_ERR_DEFERRED;
  }
  st.cv.NotifyAll();
  return static_cast<ssize_t>(n);
}

int H2Server::OnStreamClose(nghttp2_session*, int32_t id, uint32_t, void* user) {
  auto* self = static_cast<H2Server*>(user);
  auto it = self->streams_.find(id);
  if (it == self->streams_.end()) return 0;
  auto state = it->second.state;
  self->streams_.erase(it);
  Close(*state);
  if (self->streams_.empty() && !self->going_away_) self->ArmIdle();
  return 0;
}

void H2Server::Close(H2StreamState& state) {
  std::function<void()> wake, on_end;
  {
    MutexLock lock(state.mu);
    if (state.closed) return;
    state.closed = true;
    state.out.clear();
    state.queued = 0;
    wake = std::move(state.wake);
    on_end = std::move(state.on_end);
    state.cv.NotifyAll();
  }
  if (wake) wake();
  if (on_end) on_end();
}

}  // namespace flotilla::apiserver::http_internal
