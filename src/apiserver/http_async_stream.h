// AsyncStream: a response stream that outlives its handler (see http_internal.h).
#pragma once

#include "apiserver/http_internal.h"
#include "base/mutex.h"

namespace flotilla::apiserver::http_internal {

// A stream that outlives its handler. Chunks are encrypted and sent by
// whichever thread writes them, with a non-blocking send(2), as long as the
// socket takes them; what it does not take waits for the socket to be
// writable, on the connection's strand, and later chunks queue behind it.
// Meanwhile the strand watches the socket for the peer's leaving.
//
// When the stream starts, the stream takes the TLS session over from the
// connection's TlsStream: the session's BIOs become two memory BIOs of its
// own, so that a chunk costs one SSL_write and one send(2) on the writer's
// thread, with no hand-off to the loop (docs/benchmarks.md: 10,000
// watches). Nothing is
// pending in the TlsStream then: its operations end with their output sent,
// and nothing the peer sends after the request is read (a stream ends its
// connection). Every use of the session from then on holds mu_.
template <typename Stream>
class AsyncStream : public ChunkStream, public std::enable_shared_from_this<AsyncStream<Stream>> {
 public:
  static constexpr bool kTls = Connection<Stream>::kTls;

  // `head`: the response's header, sent before the first chunk.
  AsyncStream(std::shared_ptr<Connection<Stream>> conn, std::string head)
      : conn_(std::move(conn)),
        done_wake_(conn_->executor()),
        send_watch_(conn_->executor()),
        head_(std::move(head)) {}

  bool Write(std::string chunk) override {
    MutexLock lock(mu_);
    if (ending_) return false;
    if (queued_bytes_ + chunk.size() > conn_->opts().max_stream_buffer_bytes) {
      spdlog::debug("cutting off a stream {} bytes behind", queued_bytes_);
      for (const std::string& c : queue_) queued_bytes_ -= c.size();
      queue_.clear();
      ending_ = true;
      FlushLocked();
      return false;
    }
    queued_bytes_ += chunk.size();
    queue_.push_back(std::move(chunk));
    FlushLocked();
    return true;
  }

  void End() override {
    MutexLock lock(mu_);
    ending_ = true;
    FlushLocked();
  }

  void OnEnd(std::function<void()> fn) override {
    {
      MutexLock lock(mu_);
      if (!ended_) {
        on_end_ = std::move(fn);
        return;
      }
    }
    fn();
  }

  // On the strand, after the handler returned: sends until the stream ends
  // and the peer's watch has finished.
  net::awaitable<void> Run();

 private:
  int fd() { return conn_->socket().native_handle(); }

  // Sends what is queued as far as the socket takes it, unless the strand
  // waits for the socket (then it sends once it can); ends the stream once
  // ending and all is sent, or once the peer is gone.
  void FlushLocked() REQUIRES(mu_);
  // Frames the header and queued chunks (about kBlock bytes of them, and
  // the last chunk once ending) and encrypts them into out_.
  void EncodeLocked() REQUIRES(mu_);
  // Moves what the session wrote into out_.
  void DrainSessionLocked() REQUIRES(mu_);
  // Starts the end on the strand, once.
  void EndLocked(bool failed) REQUIRES(mu_);
  // On the strand: waits until the socket is writable, then flushes.
  void WaitWritable();
  // On the strand: waits for the peer to send something or leave.
  void WatchPeer();
  // On the strand: reads what the peer sent; true while it stays.
  bool PeerStays();
  // On the strand: the stream has ended.
  void Ended();
  // On the strand: the stream has ended and the peer's watch is done.
  void MaybeDone() {
    if (!ended_on_strand_ || !reader_done_) return;
    done_ = true;
    done_wake_.cancel();
  }
  std::chrono::seconds SendTimeout() const {
    return std::chrono::seconds(conn_->opts().send_timeout_sec);
  }
  // The watchdog: a send waiting since before the deadline closes the
  // connection, which ends it; one that started waiting later re-arms it;
  // with none waiting it rests until the next.
  void ArmWatch(std::chrono::steady_clock::time_point at) {
    watch_armed_ = true;
    send_watch_.expires_at(at);
    send_watch_.async_wait([self = this->shared_from_this()](error_code ec) {
      self->watch_armed_ = false;
      if (ec || !self->waiting_) return;
      auto deadline = self->wait_started_ + self->SendTimeout();
      if (std::chrono::steady_clock::now() >= deadline) return self->conn_->ShutDown();
      self->ArmWatch(deadline);
    });
  }

  std::shared_ptr<Connection<Stream>> conn_;
  // On the strand from here to mu_.
  net::steady_timer done_wake_;
  net::steady_timer send_watch_;
  bool watch_armed_ = false;
  bool waiting_ = false;  // for the socket to be writable
  std::chrono::steady_clock::time_point wait_started_;
  bool ended_on_strand_ = false;
  bool reader_done_ = false;
  bool done_ = false;

  Mutex mu_;
  std::string head_ GUARDED_BY(mu_);               // "" once encoded
  std::deque<std::string> queue_ GUARDED_BY(mu_);  // chunks not yet encoded
  size_t queued_bytes_ GUARDED_BY(mu_) = 0;        // chunks not yet sent
  std::string out_ GUARDED_BY(mu_);                // bytes for the socket
  size_t out_sent_ GUARDED_BY(mu_) = 0;            // of out_
  size_t out_plain_bytes_ GUARDED_BY(mu_) = 0;     // chunk bytes out_ carries
  BIO* rbio_ GUARDED_BY(mu_) = nullptr;            // the session's, once taken
  BIO* wbio_ GUARDED_BY(mu_) = nullptr;
  bool started_ GUARDED_BY(mu_) = false;       // Run has taken the session
  bool strand_sends_ GUARDED_BY(mu_) = false;  // waiting for the socket
  bool ending_ GUARDED_BY(mu_) = false;
  bool terminated_ GUARDED_BY(mu_) = false;  // the last chunk is encoded
  bool end_posted_ GUARDED_BY(mu_) = false;
  bool ended_ GUARDED_BY(mu_) = false;
  std::function<void()> on_end_ GUARDED_BY(mu_);
};

template <typename Stream>
net::awaitable<void> AsyncStream<Stream>::Run() {
  {
    MutexLock lock(mu_);
    if constexpr (kTls) {
      SSL* ssl = conn_->stream().native_handle();
      rbio_ = BIO_new(BIO_s_mem());
      wbio_ = BIO_new(BIO_s_mem());
      SSL_set_bio(ssl, rbio_, wbio_);  // the session owns them now
      conn_->set_session_taken();
    }
    started_ = true;
    FlushLocked();
  }
  WatchPeer();
  while (!done_) {
    done_wake_.expires_at(net::steady_timer::time_point::max());
    co_await done_wake_.async_wait(kAwait);
  }
}

template <typename Stream>
void AsyncStream<Stream>::EncodeLocked() {
  std::string plain;
  plain.swap(head_);
  size_t taken = 0;
  while (!queue_.empty() && plain.size() < kBlock) {
    AppendChunk(plain, queue_.front());
    taken += queue_.front().size();
    queue_.pop_front();
  }
  out_plain_bytes_ += taken;
  if (ending_ && queue_.empty() && !terminated_) {
    plain += "0\r\n\r\n";
    terminated_ = true;
  }
  if constexpr (kTls) {
    // A write may stop at a record; what is left is written
    // on until all is.
    SSL* ssl = conn_->stream().native_handle();
    for (size_t done = 0; done < plain.size();) {
      int n = SSL_write(ssl, plain.data() + done, static_cast<int>(plain.size() - done));
      if (n <= 0) {
        ERR_clear_error();
        return EndLocked(true);
      }
      done += static_cast<size_t>(n);
    }
    DrainSessionLocked();
  } else {
    out_ += plain;
  }
}

template <typename Stream>
void AsyncStream<Stream>::DrainSessionLocked() {
  if constexpr (kTls) {
    char* data = nullptr;
    long n = BIO_get_mem_data(wbio_, &data);
    if (n <= 0) return;
    out_.append(data, static_cast<size_t>(n));
    (void)BIO_reset(wbio_);
  }
}

template <typename Stream>
void AsyncStream<Stream>::FlushLocked() {
  if (!started_ || strand_sends_ || end_posted_) return;
  while (true) {
    if (out_sent_ == out_.size()) {
      out_.clear();
      out_sent_ = 0;
      queued_bytes_ -= std::min(queued_bytes_, out_plain_bytes_);
      out_plain_bytes_ = 0;
      if (head_.empty() && queue_.empty() && (!ending_ || terminated_)) {
        if (terminated_) EndLocked(false);
        return;
      }
      EncodeLocked();
      if (end_posted_) return;
      continue;
    }
    ssize_t n =
        ::send(fd(), out_.data() + out_sent_, out_.size() - out_sent_, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      out_sent_ += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      strand_sends_ = true;
      net::post(conn_->executor(), [self = this->shared_from_this()] { self->WaitWritable(); });
      return;
    }
    return EndLocked(true);
  }
}

template <typename Stream>
void AsyncStream<Stream>::WaitWritable() {
  if (ended_on_strand_) return;
  waiting_ = true;
  wait_started_ = std::chrono::steady_clock::now();
  if (!watch_armed_) ArmWatch(wait_started_ + SendTimeout());
  conn_->socket().async_wait(tcp::socket::wait_write,
                             [self = this->shared_from_this()](error_code) {
                               self->waiting_ = false;
                               MutexLock lock(self->mu_);
                               self->strand_sends_ = false;
                               self->FlushLocked();  // a failed wait fails the send
                             });
}

template <typename Stream>
void AsyncStream<Stream>::EndLocked(bool failed) {
  if (end_posted_) return;
  end_posted_ = true;
  ending_ = true;
  if (failed) {
    queue_.clear();
    queued_bytes_ = 0;
  }
  net::post(conn_->executor(), [self = this->shared_from_this()] { self->Ended(); });
}

template <typename Stream>
void AsyncStream<Stream>::WatchPeer() {
  conn_->socket().async_wait(tcp::socket::wait_read,
                             [self = this->shared_from_this()](error_code ec) {
                               if (!ec && !self->ended_on_strand_ && self->PeerStays()) {
                                 return self->WatchPeer();
                               }
                               self->reader_done_ = true;
                               {
                                 MutexLock lock(self->mu_);
                                 self->EndLocked(true);
                               }
                               self->MaybeDone();
                             });
}

template <typename Stream>
bool AsyncStream<Stream>::PeerStays() {
  char buf[4096];
  ssize_t n = ::recv(fd(), buf, sizeof(buf), MSG_DONTWAIT);
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  if (n == 0) return false;
  if constexpr (kTls) {
    // Whatever the peer sends is read and dropped; its close_notify, or
    // anything the session cannot read, means it has left.
    MutexLock lock(mu_);
    BIO_write(rbio_, buf, static_cast<int>(n));
    SSL* ssl = conn_->stream().native_handle();
    while (true) {
      int r = SSL_read(ssl, buf, sizeof(buf));
      if (r > 0) continue;
      int err = SSL_get_error(ssl, r);
      ERR_clear_error();
      if (err != SSL_ERROR_WANT_READ) return false;
      break;
    }
    // The session may have answered (a key update): it goes out in order.
    if (BIO_ctrl_pending(wbio_) > 0) {
      DrainSessionLocked();
      FlushLocked();
    }
  }
  return true;
}

template <typename Stream>
void AsyncStream<Stream>::Ended() {
  std::function<void()> on_end;
  {
    MutexLock lock(mu_);
    ended_ = true;
    queue_.clear();
    on_end = std::move(on_end_);
    if constexpr (kTls) {
      // The close_notify, if the socket takes it at once; the connection
      // closes after.
      if (started_ && out_sent_ == out_.size()) {
        SSL* ssl = conn_->stream().native_handle();
        SSL_shutdown(ssl);
        ERR_clear_error();
        char* data = nullptr;
        long n = BIO_get_mem_data(wbio_, &data);
        if (n > 0) (void)::send(fd(), data, static_cast<size_t>(n), MSG_DONTWAIT | MSG_NOSIGNAL);
        (void)BIO_reset(wbio_);
      }
    }
  }
  ended_on_strand_ = true;
  send_watch_.cancel();
  if (on_end) on_end();
  // The peer's watch (and a wait for the socket) must be done before the
  // connection closes.
  error_code ignored;
  conn_->socket().cancel(ignored);
  MaybeDone();
}

}  // namespace flotilla::apiserver::http_internal
