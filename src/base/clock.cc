#include "base/clock.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "base/io.h"
#include "base/mutex.h"
#include "base/timer.h"

namespace flotilla {
namespace {

class SystemSleeper : public Sleeper {
 public:
  bool SleepUntil(TimePoint deadline) override {
    MutexLock lock(mu_);
    bool woken = cv_.WaitUntil(lock, deadline, [&]() REQUIRES(mu_) { return woken_; });
    woken_ = false;
    return !woken;
  }
  void Wake() override {
    {
      MutexLock lock(mu_);
      woken_ = true;
    }
    cv_.NotifyOne();
  }

 private:
  Mutex mu_;
  CondVar cv_;
  bool woken_ GUARDED_BY(mu_) = false;
};

class SystemClock : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::system_clock::now(); }
  std::unique_ptr<Sleeper> NewSleeper() override { return std::make_unique<SystemSleeper>(); }
};

}  // namespace

Clock::Clock() = default;

Clock::~Clock() { StopTimers(); }

TimerService& Clock::timers() {
  MutexLock lock(timers_mu_);
  if (timers_ == nullptr) timers_ = std::make_unique<TimerService>(*this);
  return *timers_;
}

void Clock::StopTimers() {
  std::unique_ptr<TimerService> timers;
  {
    MutexLock lock(timers_mu_);
    timers = std::move(timers_);
  }
}

void Clock::SleepUntil(TimePoint deadline) {
  ScopedBlocking blocking;
  std::unique_ptr<Sleeper> sleeper = NewSleeper();
  while (!sleeper->SleepUntil(deadline)) {
  }
}

Clock& RealClock() {
  static auto* clock = new SystemClock();
  return *clock;
}

class FakeClock::FakeSleeper : public Sleeper {
 public:
  explicit FakeSleeper(FakeClock& clock) : clock_(clock) {}
  bool SleepUntil(TimePoint deadline) override {
    MutexLock lock(clock_.mu_);
    clock_.cv_.Wait(lock, [&]() REQUIRES(clock_.mu_) { return clock_.now_ >= deadline || woken_; });
    woken_ = false;
    return clock_.now_ >= deadline;
  }
  void Wake() override {
    MutexLock lock(clock_.mu_);
    woken_ = true;
    clock_.cv_.NotifyAll();
  }

 private:
  FakeClock& clock_;
  bool woken_ GUARDED_BY(clock_.mu_) = false;
};

FakeClock::FakeClock(TimePoint start) : now_(start) {}

FakeClock::~FakeClock() { StopTimers(); }

TimePoint FakeClock::Now() const {
  MutexLock lock(mu_);
  return now_;
}

std::unique_ptr<Sleeper> FakeClock::NewSleeper() { return std::make_unique<FakeSleeper>(*this); }

void FakeClock::Advance(Duration d) {
  MutexLock lock(mu_);
  now_ += d;
  cv_.NotifyAll();
}

void FakeClock::Set(TimePoint t) {
  MutexLock lock(mu_);
  now_ = t;
  cv_.NotifyAll();
}

namespace {

// "YYYY-MM-DDTHH:MM:SS" of the whole second `secs` in UTC into `out`
// (room for 32), from the calendar arithmetic alone: no gmtime_r (which
// takes glibc's time zone lock) nor strftime. False, writing nothing,
// outside 1970-9999.
bool FormatCalendar(std::chrono::sys_seconds secs, char* out) {
  using namespace std::chrono;
  if (secs < sys_seconds{}) return false;
  const sys_days day = floor<days>(secs);
  const year_month_day ymd(day);
  const hh_mm_ss<seconds> hms(secs - day);
  const int y = static_cast<int>(ymd.year());
  if (y > 9999) return false;
  auto put = [](char* at, unsigned value, int width) {
    for (int i = width - 1; i >= 0; --i, value /= 10) at[i] = static_cast<char>('0' + value % 10);
  };
  put(out, static_cast<unsigned>(y), 4);
  out[4] = '-';
  put(out + 5, static_cast<unsigned>(ymd.month()), 2);
  out[7] = '-';
  put(out + 8, static_cast<unsigned>(ymd.day()), 2);
  out[10] = 'T';
  put(out + 11, static_cast<unsigned>(hms.hours().count()), 2);
  out[13] = ':';
  put(out + 14, static_cast<unsigned>(hms.minutes().count()), 2);
  out[16] = ':';
  put(out + 17, static_cast<unsigned>(hms.seconds().count()), 2);
  return true;
}

// The same for any second (before 1970 and after 9999 through gmtime_r);
// its length.
size_t FormatDateTime(std::chrono::sys_seconds secs, char* out) {
  if (FormatCalendar(secs, out)) return 19;
  std::time_t tt = secs.time_since_epoch().count();
  std::tm tm{};
  gmtime_r(&tt, &tm);
  return std::strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
}

}  // namespace

std::string FormatRfc3339(TimePoint t) {
  char buf[40];
  size_t n = FormatDateTime(std::chrono::floor<std::chrono::seconds>(t), buf);
  buf[n++] = 'Z';
  return std::string(buf, n);
}

std::string FormatRfc3339Micro(TimePoint t) {
  const auto secs = std::chrono::floor<std::chrono::seconds>(t);
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(t - secs).count();
  char buf[40];
  size_t n = FormatDateTime(secs, buf);
  buf[n] = '.';
  for (size_t i = n + 6; i > n; --i, micros /= 10) buf[i] = static_cast<char>('0' + micros % 10);
  buf[n + 7] = 'Z';
  return std::string(buf, n + 8);
}

bool ParseRfc3339(const std::string& s, TimePoint* out) {
  std::tm tm{};
  const char* rest = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr) return false;
  long micros = 0;
  if (*rest == '.') {
    ++rest;
    long scale = 100000;
    while (*rest >= '0' && *rest <= '9') {
      micros += (*rest - '0') * scale;
      scale /= 10;
      ++rest;
    }
  }
  long offset = 0;
  if (*rest == 'Z' || *rest == 'z') {
    ++rest;
  } else if (*rest == '+' || *rest == '-') {
    int hh = 0, mm = 0;
    if (std::sscanf(rest + 1, "%2d:%2d", &hh, &mm) != 2) return false;
    offset = (hh * 3600 + mm * 60) * (*rest == '+' ? 1 : -1);
    rest += 6;
  } else {
    return false;
  }
  if (*rest != '\0') return false;
  std::time_t secs = timegm(&tm) - offset;
  *out = std::chrono::system_clock::from_time_t(secs) + std::chrono::microseconds(micros);
  return true;
}

std::optional<Duration> ParseGoDuration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text == "0") return Duration::zero();
  double total_ns = 0;
  while (!text.empty()) {
    size_t num_end = text.find_first_not_of("0123456789.");
    if (num_end == 0 || num_end == std::string_view::npos) return std::nullopt;
    double value = std::strtod(std::string(text.substr(0, num_end)).c_str(), nullptr);
    text.remove_prefix(num_end);
    size_t unit_end = text.find_first_of("0123456789.");
    std::string_view unit = text.substr(0, unit_end);
    text.remove_prefix(unit.size());
    double scale = unit == "ns"                   ? 1
                   : unit == "us" || unit == "µs" ? 1e3
                   : unit == "ms"                 ? 1e6
                   : unit == "s"                  ? 1e9
                   : unit == "m"                  ? 60e9
                   : unit == "h"                  ? 3600e9
                                                  : 0;
    if (scale == 0) return std::nullopt;
    total_ns += value * scale;
  }
  return std::chrono::duration_cast<Duration>(
      std::chrono::nanoseconds(static_cast<int64_t>(total_ns)));
}

}  // namespace flotilla
