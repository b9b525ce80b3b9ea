#include "apiserver/http.h"

#include <deque>

#include "base/io.h"
#include "base/mutex.h"

namespace flotilla::apiserver {

std::string Request::Query(std::string_view name) const {
  auto it = query.find(name);
  return it == query.end() ? "" : it->second;
}

bool Request::HasQuery(std::string_view name) const { return query.find(name) != query.end(); }

bool Request::QueryBool(std::string_view name) const {
  auto it = query.find(name);
  if (it == query.end()) return false;
  std::string_view v = it->second;
  return v == "1" || v == "t" || v == "T" || v == "true" || v == "TRUE" || v == "True";
}

std::string Request::Header(std::string_view name) const { return std::string(HeaderView(name)); }

std::string_view Request::HeaderView(std::string_view name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string_view() : std::string_view(it->second);
}

// A ChunkStream written by the thread that called the handler, through the
// responder's synchronous stream, once the handler has returned.
class Responder::DetachedStream : public ChunkStream {
 public:
  // A reader this far behind is cut off, as the event-driven server cuts
  // off one more than its stream buffer behind.
  static constexpr size_t kMaxQueuedBytes = 16 << 20;
  // How often a responder that cannot notify is asked whether the client left.
  static constexpr auto kGonePoll = std::chrono::seconds(1);

  bool Write(std::string chunk) override {
    MutexLock lock(mu_);
    if (ended_ || ending_) return false;
    queued_bytes_ += chunk.size();
    if (queued_bytes_ > kMaxQueuedBytes) {
      queue_.clear();
      ending_ = true;
      cv_.NotifyAll();
      return false;
    }
    queue_.push_back(std::move(chunk));
    cv_.NotifyAll();
    return true;
  }

  void End() override {
    MutexLock lock(mu_);
    ending_ = true;
    cv_.NotifyAll();
  }

  void OnEnd(std::function<void()> fn) override {
    MutexLock lock(mu_);
    on_end_ = std::move(fn);
  }

  void Run(Responder& out) {
    out.NotifyWhenGone([this] {
      MutexLock lock(mu_);
      gone_ = true;
      cv_.NotifyAll();
    });
    MutexLock lock(mu_);
    ScopedBlocking blocking;
    while (!gone_) {
      cv_.WaitFor(lock, kGonePoll,
                  [&]() REQUIRES(mu_) { return !queue_.empty() || ending_ || gone_; });
      std::deque<std::string> chunks;
      chunks.swap(queue_);
      queued_bytes_ = 0;
      bool ending = ending_;
      lock.Unlock();
      bool ok = true;
      for (const std::string& c : chunks) {
        if (!(ok = out.WriteChunk(c))) break;
      }
      if (!ok || out.ClientGone()) ending = true;
      lock.Lock();
      if (ending && queue_.empty()) break;
      if (!ok) break;
    }
    ended_ = true;
    queue_.clear();
    auto on_end = std::move(on_end_);
    lock.Unlock();
    out.NotifyWhenGone(nullptr);
    if (on_end) on_end();
  }

 private:
  Mutex mu_;
  CondVar cv_;
  std::deque<std::string> queue_ GUARDED_BY(mu_);
  size_t queued_bytes_ GUARDED_BY(mu_) = 0;
  bool ending_ GUARDED_BY(mu_) = false;
  bool ended_ GUARDED_BY(mu_) = false;
  bool gone_ GUARDED_BY(mu_) = false;
  std::function<void()> on_end_ GUARDED_BY(mu_);
};

std::shared_ptr<ChunkStream> Responder::StartAsyncStream(int code, const Headers& headers) {
  if (!StartStream(code, headers)) return nullptr;
  detached_ = std::make_shared<DetachedStream>();
  return detached_;
}

void Responder::RunDetachedStream() {
  if (auto stream = std::move(detached_)) stream->Run(*this);
}

}  // namespace flotilla::apiserver
