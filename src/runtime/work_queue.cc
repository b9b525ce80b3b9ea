#include "runtime/work_queue.h"

namespace flotilla::runtime {
namespace {

// How long the timer thread sleeps when no key is waiting; it only looks
// again (a Kick wakes it sooner).
constexpr Duration kIdleSleep = std::chrono::hours(1);

}  // namespace

WorkQueue::WorkQueue(Clock& clock, std::unique_ptr<RateLimiter> limiter)
    : clock_(clock),
      limiter_(limiter ? std::move(limiter) : NewControllerRateLimiter(clock)),
      alarm_(clock) {
  timer_ = std::thread([this] { RunTimer(); });
}

WorkQueue::~WorkQueue() { ShutDown(); }

void WorkQueue::Add(const std::string& key) { AddAfter(key, Duration::zero()); }

void WorkQueue::AddAfter(const std::string& key, Duration delay) {
  TimePoint ready = clock_.Now() + delay;
  bool kick = false;
  {
    std::lock_guard lock(mu_);
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
    kick = waiting_by_time_.begin()->second == key;
  }
  if (kick) alarm_.Kick();
}

void WorkQueue::AddRateLimited(const std::string& key) {
  Duration delay = limiter_->When(key);
  {
    std::lock_guard lock(mu_);
    ++retries_;
  }
  AddAfter(key, delay);
}

void WorkQueue::Forget(const std::string& key) { limiter_->Forget(key); }

int WorkQueue::NumRequeues(const std::string& key) { return limiter_->NumRequeues(key); }

std::optional<std::string> WorkQueue::Get() {
  std::unique_lock lock(mu_);
  ready_cv_.wait(lock, [&] { return !queue_.empty() || shutting_down_; });
  if (shutting_down_) return std::nullopt;
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  dirty_.erase(key);
  processing_.insert(key);
  return key;
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard lock(mu_);
  processing_.erase(key);
  if (dirty_.count(key) != 0 && !shutting_down_) {
    queue_.push_back(key);
    ready_cv_.notify_one();
  }
}

void WorkQueue::ShutDown() {
  {
    std::lock_guard lock(mu_);
    shutting_down_ = true;
    queue_.clear();
    dirty_.clear();
    waiting_by_key_.clear();
    waiting_by_time_.clear();
  }
  ready_cv_.notify_all();
  alarm_.Stop();
  std::lock_guard lock(join_mu_);
  if (timer_.joinable()) timer_.join();
}

bool WorkQueue::ShuttingDown() const {
  std::lock_guard lock(mu_);
  return shutting_down_;
}

size_t WorkQueue::Len() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

WorkQueueStats WorkQueue::Stats() const {
  std::lock_guard lock(mu_);
  return {queue_.size(), waiting_by_key_.size(), processing_.size(), adds_, retries_};
}

// REQUIRES: mu_ held and not shutting down.
void WorkQueue::AddLocked(const std::string& key) {
  if (!dirty_.insert(key).second) return;
  if (processing_.count(key) != 0) return;
  queue_.push_back(key);
  ready_cv_.notify_one();
}

// REQUIRES: mu_ held.
void WorkQueue::CancelWaitLocked(const std::string& key) {
  auto it = waiting_by_key_.find(key);
  if (it == waiting_by_key_.end()) return;
  waiting_by_time_.erase({it->second, key});
  waiting_by_key_.erase(it);
}

void WorkQueue::RunTimer() {
  std::unique_lock lock(mu_);
  while (!shutting_down_) {
    TimePoint now = clock_.Now();
    while (!waiting_by_time_.empty() && waiting_by_time_.begin()->first <= now) {
      std::string key = waiting_by_time_.begin()->second;
      waiting_by_time_.erase(waiting_by_time_.begin());
      waiting_by_key_.erase(key);
      AddLocked(key);
    }
    TimePoint next = waiting_by_time_.empty() ? now + kIdleSleep : waiting_by_time_.begin()->first;
    lock.unlock();
    alarm_.Wait(next);
    lock.lock();
  }
}

}  // namespace flotilla::runtime
