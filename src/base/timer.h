// Timers on the injected Clock that share one thread per clock, in place of a
// sleeping thread per work queue, informer or backoff.
//
// A Timer runs its callback once the clock reaches the time it was armed
// for. Every Timer on one Clock is served by that clock's TimerService
// (Clock::timers()): one thread that sleeps on the clock until the earliest
// armed timer and runs the due callbacks, in deadline order, one at a time.
// Callbacks must therefore be quick (move a key to a queue, post work to a
// pool); they may arm, cancel or destroy any Timer, their own included.
// ArmAt may be called under a lock that the callback takes; Cancel and the
// destructor must not be (they wait for a running callback).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>

#include "base/clock.h"
#include "base/mutex.h"

namespace flotilla {

class Timer;

// Thread-safe. Destroyed by its Clock, after every Timer on it.
class TimerService {
 public:
  explicit TimerService(Clock& clock);
  ~TimerService();
  TimerService(const TimerService&) = delete;
  TimerService& operator=(const TimerService&) = delete;

  // Timers armed and not yet fired; the earliest deadline (TimePoint::max()
  // when none). Tests use them to know what is pending.
  size_t armed() const;
  TimePoint next_deadline() const;

 private:
  friend class Timer;
  void Arm(Timer* timer, TimePoint when);
  // No callback of `timer` runs after it returns, unless called from that
  // callback.
  void Cancel(Timer* timer);
  void Run();

  Clock& clock_;
  const std::unique_ptr<Sleeper> sleeper_;
  mutable Mutex mu_;
  CondVar idle_cv_;  // signalled when a callback returns
  std::set<std::pair<TimePoint, Timer*>> queue_ GUARDED_BY(mu_);
  // The armed timers and when each fires: queue_'s entries by timer.
  std::unordered_map<Timer*, TimePoint> armed_at_ GUARDED_BY(mu_);
  Timer* running_ GUARDED_BY(mu_) = nullptr;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

// A re-armable one-shot callback. Thread-safe; destroying it cancels it.
class Timer {
 public:
  Timer(Clock& clock, std::function<void()> fire);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // Fires at `when` (at once when it has passed), replacing an earlier
  // arming that has not fired.
  void ArmAt(TimePoint when);
  void ArmAfter(Duration delay);
  // Disarms. When it returns the callback is not running and will not run,
  // unless it is called from the callback itself.
  void Cancel();

 private:
  friend class TimerService;
  Clock& clock_;
  TimerService& service_;
  // Shared so that a callback that destroys its Timer runs to its end.
  const std::shared_ptr<const std::function<void()>> fire_;
};

}  // namespace flotilla
