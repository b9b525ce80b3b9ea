// StreamWatch (stream_watch.h).
#include "client/stream_watch.h"

#include <string>
#include <thread>
#include <utility>

#include "base/io.h"
#include "base/mutex.h"
#include "client/response_decoder.h"
#include "client/watch_decoder.h"

namespace flotilla::client {

// The sink the transport feeds; it outlives the StreamWatch until OnEnd.
class StreamWatch::State : public AsyncStreamSink {
 public:
  State(WatchCallback on_event, WatchDone on_done, bool shared_objects)
      : on_event_(std::move(on_event)),
        shared_objects_(shared_objects),
        on_done_(std::move(on_done)) {}

  // Blocks until the head is known; its status.
  Status WaitForHead() {
    ScopedBlocking blocking;
    MutexLock lock(mu_);
    cv_.Wait(lock, [&]() REQUIRES(mu_) { return head_known_; });
    return head_status_;
  }

  // See Watch::Stop.
  void Stop(StreamCall& call) {
    {
      MutexLock lock(mu_);
      cancelled_ = true;
    }
    call.Cancel();
    WatchDone done;
    {
      MutexLock lock(mu_);
      // From a callback: `done` follows once it returns, from OnEnd.
      if (callback_thread_ == std::this_thread::get_id()) return;
      ScopedBlocking blocking;
      cv_.Wait(lock, [&]() REQUIRES(mu_) { return callback_thread_ == std::thread::id(); });
      if (ended_) return;
      ended_ = true;
      done = std::move(on_done_);
    }
    if (done) done(Status::Ok());
  }

  std::string LastResourceVersion() const {
    MutexLock lock(mu_);
    return last_rv_;
  }

  void OnHead(int code, std::string error_body) override {
    MutexLock lock(mu_);
    head_known_ = true;
    head_status_ = code >= 200 && code < 300 ? Status::Ok() : ErrorFromResponse(code, error_body);
    cv_.NotifyAll();
  }

  bool OnData(std::string_view data) override {
    if (!EnterCallback()) return false;
    if (end_status_.ok()) {
      Status s =
          decoder_.Feed(data, [this](WatchEvent event) { return Deliver(std::move(event)); });
      if (!s.ok()) end_status_ = s;
    }
    return LeaveCallback() && end_status_.ok();
  }

  bool OnWatchLines(std::string_view data,
                    std::span<const std::shared_ptr<const json::object>> objects) override {
    if (!EnterCallback()) return false;
    if (end_status_.ok()) {
      Status s = decoder_.FeedShared(data, objects, shared_objects_, [this](WatchEvent event) {
        return Deliver(std::move(event));
      });
      if (!s.ok()) end_status_ = s;
    }
    return LeaveCallback() && end_status_.ok();
  }

  void OnEnd(Status status) override {
    {
      MutexLock lock(mu_);
      if (!head_known_) {
        head_known_ = true;
        head_status_ = status.ok()
                           ? Status::Unavailable("the watch ended before the server answered")
                           : status;
        cv_.NotifyAll();
        return;
      }
      if (!head_status_.ok()) return;         // refused: StartWatch returned the error
      if (cancelled_) status = Status::Ok();  // failures that Stop() caused are not errors
    }
    if (status.ok() && end_status_.ok() && EnterCallback()) {
      end_status_ = decoder_.Finish([this](WatchEvent event) { return Deliver(std::move(event)); });
      LeaveCallback();
    }
    WatchDone done;
    {
      MutexLock lock(mu_);
      if (ended_) return;
      ended_ = true;
      if (status.ok() && !cancelled_) status = end_status_;
      done = std::move(on_done_);
      callback_thread_ = std::this_thread::get_id();
    }
    // It may destroy the StreamWatch; this State lives on until we return.
    if (done) done(status);
    MutexLock lock(mu_);
    callback_thread_ = std::thread::id();
    cv_.NotifyAll();
  }

 private:
  // Marks this thread as running a callback; false when cancelled.
  bool EnterCallback() {
    MutexLock lock(mu_);
    if (cancelled_) return false;
    callback_thread_ = std::this_thread::get_id();
    return true;
  }
  // Clears the mark; false when cancelled meanwhile.
  bool LeaveCallback() {
    MutexLock lock(mu_);
    callback_thread_ = std::thread::id();
    cv_.NotifyAll();
    return !cancelled_;
  }

  bool Deliver(WatchEvent event) {
    bool is_error = event.type == WatchEvent::Type::kError;
    {
      MutexLock lock(mu_);
      if (cancelled_) return false;
      if (!is_error) {
        if (std::string rv = EventResourceVersion(event); !rv.empty()) last_rv_ = std::move(rv);
      }
    }
    if (is_error) end_status_ = StatusFromObject(event.object, 500);
    if (on_event_) on_event_(std::move(event));
    return !is_error;  // an ERROR event ends the stream
  }

  const WatchCallback on_event_;
  const bool shared_objects_;  // WatchOptions::shared_objects
  // The transport's calls are serialized: these are used by one at a time.
  WatchDecoder decoder_;
  Status end_status_;  // why the stream ended early

  mutable Mutex mu_;
  CondVar cv_;
  bool head_known_ GUARDED_BY(mu_) = false;
  Status head_status_ GUARDED_BY(mu_);
  bool cancelled_ GUARDED_BY(mu_) = false;
  bool ended_ GUARDED_BY(mu_) = false;  // `done` taken
  WatchDone on_done_ GUARDED_BY(mu_);
  std::thread::id callback_thread_ GUARDED_BY(mu_);  // running a callback
  std::string last_rv_ GUARDED_BY(mu_);
};

StreamWatch::StreamWatch(std::shared_ptr<State> state, std::shared_ptr<StreamCall> call)
    : state_(std::move(state)), call_(std::move(call)) {}

StatusOr<std::unique_ptr<Watch>> StreamWatch::Start(Transport& transport, const ApiRequest& req,
                                                    WatchCallback on_event, WatchDone on_done,
                                                    bool shared_objects) {
  auto state = std::make_shared<State>(std::move(on_event), std::move(on_done), shared_objects);
  std::shared_ptr<StreamCall> call = transport.StartStream(req, state);
  Status head = state->WaitForHead();
  if (!head.ok()) {
    call->Cancel();
    return head;
  }
  return std::unique_ptr<Watch>(new StreamWatch(std::move(state), std::move(call)));
}

StreamWatch::~StreamWatch() { Stop(); }

void StreamWatch::Stop() { state_->Stop(*call_); }

std::string StreamWatch::LastResourceVersion() const { return state_->LastResourceVersion(); }

}  // namespace flotilla::client
