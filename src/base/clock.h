// Time, injected. RealClock is the only code that reads the system clock;
// everything else takes a Clock& so that tests drive time with FakeClock.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

namespace flotilla {

using TimePoint = std::chrono::system_clock::time_point;
using Duration = std::chrono::system_clock::duration;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
  // Blocks until Now() >= deadline or Wake() is called; returns true if the
  // deadline was reached. Thread-safe.
  virtual bool WaitUntil(TimePoint deadline) = 0;
  // Releases every WaitUntil() in progress (used on shutdown).
  virtual void Wake() = 0;
};

// The process-wide real clock. Thread-safe; never destroyed.
Clock& RealClock();

// A clock that moves only when told to. Thread-safe.
class FakeClock : public Clock {
 public:
  explicit FakeClock(TimePoint start = TimePoint(std::chrono::seconds(1700000000)));
  TimePoint Now() const override;
  bool WaitUntil(TimePoint deadline) override;
  void Wake() override;
  void Advance(Duration d);
  void Set(TimePoint t);

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  TimePoint now_;       // GUARDED_BY(mu_)
  uint64_t wakes_ = 0;  // GUARDED_BY(mu_)
};

// RFC 3339 in UTC with second precision ("2026-11-21T05:07:55Z"), as
// Kubernetes writes metav1.Time.
std::string FormatRfc3339(TimePoint t);
// RFC 3339 with microseconds, as metav1.MicroTime.
std::string FormatRfc3339Micro(TimePoint t);
// Parses RFC 3339 ("Z" or "+hh:mm" offsets, optional fraction). False on error.
bool ParseRfc3339(const std::string& s, TimePoint* out);

}  // namespace flotilla
