// The controllers' work queue: a deduplicating FIFO of keys with delays and
// per-key rate limiting, with client-go's util/workqueue semantics.
//
// - A key is queued at most once: adding a key that is already waiting to be
//   handed out does nothing.
// - A key is never handed to two workers at once: between Get() and Done()
//   the key is "processing"; adding it meanwhile marks it dirty, and Done()
//   queues it again, so a change made during processing is processed again.
// - AddAfter(key, delay) makes the key ready after `delay` on the Clock. If
//   the key is already waiting, the earlier of the two times wins: a shorter
//   delay replaces a longer one, a longer one never postpones a shorter one
//   (seed 000's FRS_TO_CHECK_QUEUE). Add(key) is AddAfter(key, 0): it also
//   cancels the key's pending delay.
// - AddRateLimited(key) is AddAfter(key, limiter.When(key)) with client-go's
//   default controller limiter (see rate_limiter.h); Forget(key) ends the
//   key's backoff once it is processed successfully.
// - ShutDown() releases every blocked Get() (returning nullopt), drops the
//   keys still queued or waiting (a level-based controller finds them again
//   when it starts) and ignores later adds.
//
// Delayed keys move to the queue on a Timer (base/timer.h): the queues on
// one Clock share its one timer thread. Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/timer.h"
#include "runtime/rate_limiter.h"

namespace flotilla::runtime {

struct WorkQueueStats {
  size_t depth = 0;       // keys ready to be handed out (Len())
  size_t waiting = 0;     // keys waiting on a delay
  size_t processing = 0;  // keys between Get() and Done()
  uint64_t adds = 0;      // calls to Add, AddAfter and AddRateLimited
  uint64_t retries = 0;   // calls to AddRateLimited
};

class WorkQueue {
 public:
  // `limiter` null means NewControllerRateLimiter(clock).
  explicit WorkQueue(Clock& clock, std::unique_ptr<RateLimiter> limiter = nullptr);
  // Shuts the queue down.
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void Add(const std::string& key);
  void AddAfter(const std::string& key, Duration delay);
  void AddRateLimited(const std::string& key);
  void Forget(const std::string& key);
  // Failures recorded for `key` since its last Forget.
  int NumRequeues(const std::string& key);

  // Blocks until a key is ready and hands it out, or returns nullopt once the
  // queue is shut down. The caller must call Done(key) when finished.
  std::optional<std::string> Get();
  // A ready key as Get() hands it out, or nullopt at once when none is.
  std::optional<std::string> TryGet();
  // Calls `fn` whenever a key becomes ready, under the queue's lock: it must
  // be quick and must not call the queue (a controller posts a worker).
  // Set it before keys are added.
  void SetOnReady(std::function<void()> fn);
  void Done(const std::string& key);

  void ShutDown();
  bool ShuttingDown() const;

  // Keys ready to be handed out: the queue-depth metric.
  size_t Len() const;
  WorkQueueStats Stats() const;

 private:
  void AddLocked(const std::string& key) REQUIRES(mu_);
  void CancelWaitLocked(const std::string& key) REQUIRES(mu_);
  void MoveDue();
  void PushLocked(const std::string& key) REQUIRES(mu_);
  std::string TakeLocked() REQUIRES(mu_);

  Clock& clock_;
  const std::unique_ptr<RateLimiter> limiter_;

  mutable Mutex mu_;
  CondVar ready_cv_;
  std::deque<std::string> queue_ GUARDED_BY(mu_);
  std::unordered_set<std::string> dirty_ GUARDED_BY(mu_);
  std::unordered_set<std::string> processing_ GUARDED_BY(mu_);
  std::map<std::string, TimePoint> waiting_by_key_ GUARDED_BY(mu_);
  std::set<std::pair<TimePoint, std::string>> waiting_by_time_ GUARDED_BY(mu_);
  bool shutting_down_ GUARDED_BY(mu_) = false;
  std::function<void()> on_ready_ GUARDED_BY(mu_);
  uint64_t adds_ GUARDED_BY(mu_) = 0;
  uint64_t retries_ GUARDED_BY(mu_) = 0;
  Timer timer_;  // armed for the earliest waiting key
};

}  // namespace flotilla::runtime
