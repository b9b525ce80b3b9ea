// Alarm: one thread's sleep on the injected Clock that other threads can cut
// short without ever losing the wake-up (a Clock Sleeper, with Stop() and
// what tests need to know about the sleep).
//
// Thread-safe. Wait() has one caller at a time (the timer thread that owns
// the Alarm); Kick() and Stop() may be called from any thread.
#pragma once

#include <memory>

#include "base/clock.h"
#include "base/mutex.h"

namespace flotilla::runtime {

class Alarm {
 public:
  explicit Alarm(Clock& clock) : clock_(clock), sleeper_(clock.NewSleeper()) {}
  Alarm(const Alarm&) = delete;
  Alarm& operator=(const Alarm&) = delete;

  Clock& clock() const { return clock_; }

  // Returns once the clock reaches `deadline`, a Kick() arrives (one made
  // before this call and not yet consumed counts) or Stop() was called.
  // Callers re-check their state afterwards.
  void Wait(TimePoint deadline);

  // Makes the Wait() in progress, or else the next one, return.
  void Kick();

  // Makes every later Wait() return at once. Idempotent.
  void Stop();
  bool stopped() const;

  // The deadline of the Wait() in progress; TimePoint::min() when the owner
  // is not waiting. Tests use it to know that a timer thread has handled
  // everything due before the clock's current time.
  TimePoint SleepingUntil() const;

 private:
  Clock& clock_;
  const std::unique_ptr<Sleeper> sleeper_;
  mutable Mutex mu_;
  bool sleeping_ GUARDED_BY(mu_) = false;
  TimePoint deadline_ GUARDED_BY(mu_);  // while sleeping_
  bool stopped_ GUARDED_BY(mu_) = false;
};

}  // namespace flotilla::runtime
