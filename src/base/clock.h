// Time, injected. RealClock is the only code that reads the system clock;
// everything else takes a Clock& so that tests drive time with FakeClock.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/mutex.h"

namespace flotilla {

using TimePoint = std::chrono::system_clock::time_point;
using Duration = std::chrono::system_clock::duration;

// One thread's sleep on a Clock, which other threads can cut short. A
// Wake() is never lost: one that arrives while nobody sleeps ends the next
// SleepUntil() at once. Each Sleeper wakes only its own sleeper, so a
// process with thousands of timer threads wakes one thread per Wake().
// SleepUntil() has one caller at a time; Wake() may come from any thread.
class Sleeper {
 public:
  virtual ~Sleeper() = default;
  // Returns true when Now() >= deadline, false when a Wake() came first (or
  // was pending).
  virtual bool SleepUntil(TimePoint deadline) = 0;
  virtual void Wake() = 0;
};

class TimerService;

class Clock {
 public:
  Clock();
  virtual ~Clock();
  virtual TimePoint Now() const = 0;
  virtual std::unique_ptr<Sleeper> NewSleeper() = 0;
  // Blocks until Now() >= deadline (a backoff, a rate limit's wait).
  void SleepUntil(TimePoint deadline);
  // The thread that runs every Timer on this clock (timer.h), started on
  // first use.
  TimerService& timers();

 protected:
  // Stops the timer thread; a derived clock calls it in its destructor,
  // before what the thread's Sleeper uses is gone.
  void StopTimers();

 private:
  Mutex timers_mu_;
  std::unique_ptr<TimerService> timers_ GUARDED_BY(timers_mu_);
};

// The process-wide real clock. Thread-safe; never destroyed.
Clock& RealClock();

// A clock that moves only when told to. Thread-safe.
class FakeClock : public Clock {
 public:
  explicit FakeClock(TimePoint start = TimePoint(std::chrono::seconds(1700000000)));
  ~FakeClock() override;
  TimePoint Now() const override;
  std::unique_ptr<Sleeper> NewSleeper() override;
  void Advance(Duration d);
  void Set(TimePoint t);

 private:
  class FakeSleeper;

  mutable Mutex mu_;
  // Every sleeper waits on this one (tests have few): Advance() and any
  // Wake() notify all, and each looks at its own deadline and flag.
  CondVar cv_;
  TimePoint now_ GUARDED_BY(mu_);
};

// RFC 3339 in UTC with second precision ("2026-11-21T05:07:55Z"), as
// Kubernetes writes metav1.Time.
std::string FormatRfc3339(TimePoint t);
// RFC 3339 with microseconds, as metav1.MicroTime.
std::string FormatRfc3339Micro(TimePoint t);
// Parses RFC 3339 ("Z" or "+hh:mm" offsets, optional fraction). False on error.
bool ParseRfc3339(const std::string& s, TimePoint* out);

// A duration as Go spells it, one or more "<number><unit>" with units ns,
// us, ms, s, m, h ("500ms", "1m30s"); nullopt when it is not one.
std::optional<Duration> ParseGoDuration(std::string_view text);

}  // namespace flotilla
