// StreamWatch (stream_watch.h).
#include "client/stream_watch.h"

#include <utility>

#include "client/response_decoder.h"

namespace flotilla::client {

StreamWatch::StreamWatch(std::shared_ptr<Transport> transport, ApiRequest req,
                         WatchCallback on_event, WatchDone on_done)
    : transport_(std::move(transport)),
      req_(std::move(req)),
      on_event_(std::move(on_event)),
      on_done_(std::move(on_done)) {}

StatusOr<std::unique_ptr<Watch>> StreamWatch::Start(std::shared_ptr<Transport> transport,
                                                    ApiRequest req, WatchCallback on_event,
                                                    WatchDone on_done) {
  std::unique_ptr<StreamWatch> watch(new StreamWatch(std::move(transport), std::move(req),
                                                     std::move(on_event), std::move(on_done)));
  StreamWatch* w = watch.get();
  w->thread_ = std::thread([w] { w->Run(); });
  Status head;
  {
    std::unique_lock lock(w->mu_);
    w->cv_.wait(lock, [w] { return w->head_known_; });
    head = w->head_status_;
  }
  if (!head.ok()) {
    w->thread_.join();
    return head;
  }
  return std::unique_ptr<Watch>(std::move(watch));
}

StreamWatch::~StreamWatch() {
  Stop();
  // Destroyed from its own done callback: Run touches nothing after it.
  if (thread_.joinable()) thread_.detach();
}

void StreamWatch::Stop() {
  {
    std::lock_guard lock(mu_);
    cancelled_ = true;
    if (canceller_) canceller_();
    cv_.notify_all();
  }
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

std::string StreamWatch::LastResourceVersion() const {
  std::lock_guard lock(mu_);
  return last_rv_;
}

void StreamWatch::Run() {
  Status status = transport_->Stream(req_, *this);
  {
    std::lock_guard lock(mu_);
    if (!head_known_) {
      head_known_ = true;
      head_status_ =
          status.ok() ? Status::Unavailable("the watch ended before the server answered") : status;
      cv_.notify_all();
      return;
    }
    if (!head_status_.ok()) return;
    if (cancelled_) status = Status::Ok();  // failures that Stop() caused are not errors
  }
  if (status.ok() && end_status_.ok() && !Cancelled()) {
    end_status_ = decoder_.Finish([this](WatchEvent event) { return Deliver(std::move(event)); });
  }
  if (status.ok() && !Cancelled()) status = end_status_;
  // Moved out first: the done callback may destroy this Watch.
  WatchDone done = std::move(on_done_);
  if (done) done(status);
}

bool StreamWatch::Deliver(WatchEvent event) {
  if (Cancelled()) return false;
  bool is_error = event.type == WatchEvent::Type::kError;
  if (is_error) {
    end_status_ = StatusFromObject(event.object, 500);
  } else if (std::string rv = EventResourceVersion(event); !rv.empty()) {
    std::lock_guard lock(mu_);
    last_rv_ = std::move(rv);
  }
  if (on_event_) on_event_(event);
  return !is_error;  // an ERROR event ends the stream
}

void StreamWatch::OnHead(int code, std::string error_body) {
  std::lock_guard lock(mu_);
  head_known_ = true;
  head_status_ = code >= 200 && code < 300 ? Status::Ok() : ErrorFromResponse(code, error_body);
  cv_.notify_all();
}

bool StreamWatch::OnData(std::string_view data) {
  if (Cancelled() || !end_status_.ok()) return false;
  Status s = decoder_.Feed(data, [this](WatchEvent event) { return Deliver(std::move(event)); });
  if (!s.ok()) end_status_ = s;
  return end_status_.ok() && !Cancelled();
}

bool StreamWatch::Cancelled() const {
  std::lock_guard lock(mu_);
  return cancelled_;
}

bool StreamWatch::WaitCancelled(int millis) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, std::chrono::milliseconds(millis), [this] { return cancelled_; });
}

void StreamWatch::SetCanceller(std::function<void()> cancel) {
  std::lock_guard lock(mu_);
  canceller_ = std::move(cancel);
  if (cancelled_ && canceller_) canceller_();
}

}  // namespace flotilla::client
