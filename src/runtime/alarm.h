// Alarm: one thread's sleep on the injected Clock that other threads can cut
// short without ever losing the wake-up.
//
// Clock::WaitUntil has no predicate: a Clock::Wake() that lands between a
// thread's last look at its state and its call to WaitUntil would be lost, and
// the thread would sleep to a stale deadline (with a FakeClock, forever). An
// Alarm closes that gap: Kick() marks a wake-up that the current or the next
// Wait() consumes, and keeps calling Clock::Wake() until the sleeper has seen
// it. Wake() releases every sleeper on the clock, so every user of the clock
// treats an early return as "look again".
//
// Thread-safe. Wait() has one caller at a time (the timer thread that owns
// the Alarm); Kick() and Stop() may be called from any thread.
#pragma once

#include <cstdint>
#include <mutex>

#include "base/clock.h"

namespace flotilla::runtime {

class Alarm {
 public:
  explicit Alarm(Clock& clock) : clock_(clock) {}
  Alarm(const Alarm&) = delete;
  Alarm& operator=(const Alarm&) = delete;

  Clock& clock() const { return clock_; }

  // Returns once the clock reaches `deadline`, a Kick() arrives (one made
  // before this call and not yet consumed counts), Stop() was called, or the
  // clock is woken by someone else. Callers re-check their state afterwards.
  void Wait(TimePoint deadline);

  // Makes the Wait() in progress, or else the next one, return. Returns once
  // the sleeper has noticed (promptly: it only needs to be scheduled).
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
  mutable std::mutex mu_;
  uint64_t kicks_ = 0;     // GUARDED_BY(mu_)
  uint64_t seen_ = 0;      // GUARDED_BY(mu_) kicks_ when the sleeper last looked
  bool sleeping_ = false;  // GUARDED_BY(mu_)
  TimePoint deadline_;     // GUARDED_BY(mu_) while sleeping_
  bool stopped_ = false;   // GUARDED_BY(mu_)
};

}  // namespace flotilla::runtime
