#include "runtime/work_queue.h"

#include "base/io.h"
#include "base/mutex.h"

namespace flotilla::runtime {

WorkQueue::WorkQueue(Clock& clock, std::unique_ptr<RateLimiter> limiter)
    : clock_(clock),
      limiter_(limiter ? std::move(limiter) : NewControllerRateLimiter(clock)),
      timer_(clock, [this] { MoveDue(); }) {}

WorkQueue::~WorkQueue() { ShutDown(); }

void WorkQueue::Add(const std::string& key) { AddAfter(key, Duration::zero()); }

void WorkQueue::AddAfter(const std::string& key, Duration delay) {
  TimePoint ready = clock_.Now() + delay;
  {
    MutexLock lock(mu_);
    if (shutting_down_) return;
    ++adds_;
    if (delay <= Duration::zero()) {
      CancelWaitLocked(key);
      AddLocked(key);
      return;
    }
    auto it = waiting_by_key_.find(key);
    if (it != waiting_by_key_.end()) {
      if (ready >= it->second) return;
      waiting_by_time_.erase({it->second, key});
      it->second = ready;
    } else {
      waiting_by_key_.emplace(key, ready);
    }
    waiting_by_time_.emplace(ready, key);
    // Armed under mu_, so that MoveDue cannot arm for a later key after it.
    if (waiting_by_time_.begin()->second == key) timer_.ArmAt(ready);
  }
}

void WorkQueue::AddRateLimited(const std::string& key) {
  Duration delay = limiter_->When(key);
  {
    MutexLock lock(mu_);
    ++retries_;
  }
  AddAfter(key, delay);
}

void WorkQueue::Forget(const std::string& key) { limiter_->Forget(key); }

int WorkQueue::NumRequeues(const std::string& key) { return limiter_->NumRequeues(key); }

std::optional<std::string> WorkQueue::Get() {
  MutexLock lock(mu_);
  ScopedBlocking blocking;
  ready_cv_.Wait(lock, [&]() REQUIRES(mu_) { return !queue_.empty() || shutting_down_; });
  if (shutting_down_) return std::nullopt;
  return TakeLocked();
}

std::optional<std::string> WorkQueue::TryGet() {
  MutexLock lock(mu_);
  if (shutting_down_ || queue_.empty()) return std::nullopt;
  return TakeLocked();
}

void WorkQueue::SetOnReady(std::function<void()> fn) {
  MutexLock lock(mu_);
  on_ready_ = std::move(fn);
}

void WorkQueue::Done(const std::string& key) {
  MutexLock lock(mu_);
  processing_.erase(key);
  if (dirty_.count(key) != 0 && !shutting_down_) PushLocked(key);
}

// REQUIRES: a key queued.
std::string WorkQueue::TakeLocked() {
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  dirty_.erase(key);
  processing_.insert(key);
  return key;
}

void WorkQueue::PushLocked(const std::string& key) {
  queue_.push_back(key);
  ready_cv_.NotifyOne();
  if (on_ready_) on_ready_();
}

void WorkQueue::ShutDown() {
  {
    MutexLock lock(mu_);
    shutting_down_ = true;
    queue_.clear();
    dirty_.clear();
    waiting_by_key_.clear();
    waiting_by_time_.clear();
  }
  ready_cv_.NotifyAll();
  timer_.Cancel();
}

bool WorkQueue::ShuttingDown() const {
  MutexLock lock(mu_);
  return shutting_down_;
}

size_t WorkQueue::Len() const {
  MutexLock lock(mu_);
  return queue_.size();
}

WorkQueueStats WorkQueue::Stats() const {
  MutexLock lock(mu_);
  return {queue_.size(), waiting_by_key_.size(), processing_.size(), adds_, retries_};
}

// REQUIRES: not shutting down.
void WorkQueue::AddLocked(const std::string& key) {
  if (!dirty_.insert(key).second) return;
  if (processing_.count(key) != 0) return;
  PushLocked(key);
}

void WorkQueue::CancelWaitLocked(const std::string& key) {
  auto it = waiting_by_key_.find(key);
  if (it == waiting_by_key_.end()) return;
  waiting_by_time_.erase({it->second, key});
  waiting_by_key_.erase(it);
}

// The timer's callback: moves the keys whose delay has passed to the queue
// and arms the timer for the next one.
void WorkQueue::MoveDue() {
  MutexLock lock(mu_);
  if (shutting_down_) return;
  TimePoint now = clock_.Now();
  while (!waiting_by_time_.empty() && waiting_by_time_.begin()->first <= now) {
    std::string key = waiting_by_time_.begin()->second;
    waiting_by_time_.erase(waiting_by_time_.begin());
    waiting_by_key_.erase(key);
    AddLocked(key);
  }
  if (!waiting_by_time_.empty()) timer_.ArmAt(waiting_by_time_.begin()->first);
}

}  // namespace flotilla::runtime
