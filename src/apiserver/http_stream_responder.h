// StreamResponder: a handler's answers through its connection (see http_internal.h).
#pragma once

#include "apiserver/http_internal.h"

namespace flotilla::apiserver::http_internal {

// Answers from a handler's thread through the connection's strand.
template <typename Stream>
class StreamResponder : public Responder {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  // `on_loop`: the handler runs on the connection's strand, where nothing
  // may wait for the connection's I/O.
  StreamResponder(std::shared_ptr<Connection<Stream>> conn, bool keep_alive, bool on_loop)
      : conn_(std::move(conn)), keep_alive_(keep_alive), on_loop_(on_loop) {}

  // On the loop the response is written once the handler has returned, by
  // the connection's coroutine; on the pool, at once.
  void Respond(int code, const Headers& headers, std::string body) override {
    responded_ = true;
    if constexpr (kTls) {
      std::string wire = Wire(code, headers, keep_alive_, body);
      body.clear();
      if (on_loop_) {
        wire_ = std::move(wire);
        return;
      }
      error_code ec;
      std::string_view rest = std::string_view(wire).substr(conn_->WriteNow(wire, ec));
      if (!ec && !rest.empty()) {
        ec = conn_->WriteBlocking(
            [&](error_code& wec) { net::write(conn_->stream(), net::buffer(rest), wec); });
      }
      failed_ = static_cast<bool>(ec);
      return;
    }
    response_.emplace();
    response_->version(11);
    response_->result(static_cast<unsigned>(code));
    for (const auto& [k, v] : headers) response_->insert(k, v);
    response_->keep_alive(keep_alive_);
    response_->body() = std::move(body);
    response_->prepare_payload();
    if (on_loop_) return;
    failed_ = static_cast<bool>(conn_->WriteBlocking(
        [&](error_code& ec) { http::write(conn_->stream(), *response_, ec); }));
    response_.reset();
  }

  // On the blocking pool: the header and the parts copied into blocks of
  // kBlock bytes, one TLS write per block rather than per part, and no
  // buffer the size of the body. On the loop, which cannot wait for its own
  // writes, the parts are copied into one body.
  void RespondParts(int code, const Headers& headers,
                    const std::vector<std::string_view>& parts) override {
    if (on_loop_) return Responder::RespondParts(code, headers, parts);
    size_t size = 0;
    for (std::string_view p : parts) size += p.size();
    auto res = Head(code, headers, keep_alive_);
    res.content_length(size);
    std::ostringstream head;
    head << res.base();
    std::string block = head.str();
    block.reserve(std::max(kBlock, block.size()));
    error_code ec;
    auto flush = [&] {
      if (!ec && !block.empty()) ec = WriteRaw(block);
      block.clear();
    };
    if (block.size() >= kBlock) flush();
    for (std::string_view p : parts) {
      while (!ec && !p.empty()) {
        size_t n = std::min(p.size(), kBlock - block.size());
        block.append(p.data(), n);
        p.remove_prefix(n);
        if (block.size() == kBlock) flush();
      }
    }
    flush();
    responded_ = true;
    failed_ = static_cast<bool>(ec);
  }

  bool StartStream(int code, const Headers& headers) override {
    if (on_loop_) {
      spdlog::error("a synchronous stream cannot be served on the event loop");
      failed_ = true;
      return false;
    }
    auto res = Head(code, headers, false);
    res.chunked(true);
    error_code ec = WriteHeader(res);
    responded_ = true;
    streaming_ = true;
    failed_ = static_cast<bool>(ec);
    return !failed_;
  }

  // The header goes out with the first chunks, written by the stream.
  std::shared_ptr<ChunkStream> StartAsyncStream(int code, const Headers& headers) override {
    auto res = Head(code, headers, false);
    res.chunked(true);
    std::ostringstream head;
    head << res.base();
    responded_ = true;
    streaming_ = true;
    async_ = std::make_shared<AsyncStream<Stream>>(conn_, head.str());
    return async_;
  }

  // The 101 goes out from the connection's coroutine once the handler has
  // returned; the connection is `take`'s from then on (HTTPS only).
  bool SwitchProtocols(const Headers& headers, std::function<void(http2::Upgraded)> take) override {
    if (!TakeConnection(std::move(take))) return false;
    auto res = Head(101, headers, true);
    std::ostringstream head;
    head << res.base();
    switch_head_ = head.str();
    return true;
  }

  bool TakeConnection(std::function<void(http2::Upgraded)> take) override {
    if constexpr (!kTls) {
      return false;
    } else {
      if (on_loop_ || responded_) return false;
      take_ = std::move(take);
      responded_ = true;
      return true;
    }
  }

  bool WriteChunk(std::string_view data) override {
    if (failed_) return false;
    std::string chunk;
    AppendChunk(chunk, data);
    failed_ = static_cast<bool>(WriteRaw(chunk));
    return !failed_;
  }

  bool ClientGone() override { return WaitClientGone(0); }

  bool WaitClientGone(int millis) override {
    if (failed_) return true;
    pollfd pfd{conn_->socket().native_handle(), POLLRDHUP, 0};
    int n = ::poll(&pfd, 1, millis);
    return n > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
  }

  bool Responded() const override { return responded_; }

  // Ends a synchronous stream; on the handler's thread.
  void Finish() {
    if (streaming_ && !async_ && !failed_) WriteRaw(std::string("0\r\n\r\n"));
  }
  bool keep_going() const { return responded_ && !streaming_ && !failed_ && keep_alive_; }
  std::shared_ptr<AsyncStream<Stream>> async_stream() const { return async_; }
  // The response Respond left for the connection to write, if any: over
  // TLS as it goes on the wire, else as a message.
  std::optional<std::string>& wire() { return wire_; }
  std::optional<http::response<http::string_body>>& response() { return response_; }
  void set_failed() { failed_ = true; }
  // After SwitchProtocols: the 101's head ("" after TakeConnection), and
  // who takes the connection.
  const std::string& switch_head() const { return switch_head_; }
  std::function<void(http2::Upgraded)>& take() { return take_; }
  bool on_loop() const { return on_loop_; }

 private:
  static http::response<http::empty_body> Head(int code, const Headers& headers, bool keep_alive) {
    http::response<http::empty_body> res;
    res.version(11);
    res.result(static_cast<unsigned>(code));
    for (const auto& [k, v] : headers) res.insert(k, v);
    res.keep_alive(keep_alive);
    return res;
  }
  template <typename Response>
  error_code WriteHeader(Response& res) {
    http::response_serializer<http::empty_body> sr(res);
    return conn_->WriteBlocking(
        [&](error_code& ec) { http::write_header(conn_->stream(), sr, ec); });
  }
  error_code WriteRaw(const std::string& bytes) {
    return conn_->WriteBlocking(
        [&](error_code& ec) { net::write(conn_->stream(), net::buffer(bytes), ec); });
  }

  std::shared_ptr<Connection<Stream>> conn_;
  bool keep_alive_;
  bool responded_ = false;
  std::string switch_head_;
  std::function<void(http2::Upgraded)> take_;
  bool streaming_ = false;
  const bool on_loop_;
  // Read by WaitClientGone, which a handler may call from a second thread.
  std::atomic<bool> failed_{false};
  std::shared_ptr<AsyncStream<Stream>> async_;
  std::optional<std::string> wire_;
  std::optional<http::response<http::string_body>> response_;
};

}  // namespace flotilla::apiserver::http_internal
