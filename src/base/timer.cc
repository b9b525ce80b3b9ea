// TimerService and Timer (timer.h).
#include "base/timer.h"

#include <sys/prctl.h>

#include "base/io.h"
#include "base/mutex.h"

namespace flotilla {
namespace {

// How long the service sleeps with nothing armed; Arm wakes it sooner.
constexpr Duration kIdleSleep = std::chrono::hours(1);

// How late the kernel may wake the service past the earliest deadline
// (prctl(2) PR_SET_TIMERSLACK; Linux's default is 50 us): timers due within
// it of each other fire after one wake-up instead of one each. A member
// process serves thousands of timers a second (its watches' bookmarks, its
// nodes' lease renewals), and each wake-up is a sleep and a switch.
constexpr unsigned long kTimerSlackNs = 5'000'000;

}  // namespace

TimerService::TimerService(Clock& clock) : clock_(clock), sleeper_(clock.NewSleeper()) {
  thread_ = std::thread([this] { Run(); });
}

TimerService::~TimerService() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  sleeper_->Wake();
  thread_.join();
}

size_t TimerService::armed() const {
  MutexLock lock(mu_);
  return queue_.size();
}

TimePoint TimerService::next_deadline() const {
  MutexLock lock(mu_);
  return queue_.empty() ? TimePoint::max() : queue_.begin()->first;
}

void TimerService::Arm(Timer* timer, TimePoint when) {
  bool earliest;
  {
    MutexLock lock(mu_);
    auto [at, fresh] = armed_at_.try_emplace(timer, when);
    if (!fresh) {
      queue_.erase({at->second, timer});
      at->second = when;
    }
    auto it = queue_.emplace(when, timer).first;
    earliest = it == queue_.begin();
  }
  if (earliest) sleeper_->Wake();
}

void TimerService::Cancel(Timer* timer) {
  MutexLock lock(mu_);
  if (auto at = armed_at_.find(timer); at != armed_at_.end()) {
    queue_.erase({at->second, timer});
    armed_at_.erase(at);
  }
  if (std::this_thread::get_id() == thread_.get_id()) return;
  ScopedBlocking blocking;
  idle_cv_.Wait(lock, [&]() REQUIRES(mu_) { return running_ != timer; });
}

void TimerService::Run() {
  prctl(PR_SET_TIMERSLACK, kTimerSlackNs, 0, 0, 0);  // this thread's timed waits
  MutexLock lock(mu_);
  while (!stopping_) {
    TimePoint now = clock_.Now();
    if (!queue_.empty() && queue_.begin()->first <= now) {
      Timer* timer = queue_.begin()->second;
      queue_.erase(queue_.begin());
      armed_at_.erase(timer);
      running_ = timer;
      lock.Unlock();
      // The callback may destroy its Timer: nothing here touches it after.
      std::shared_ptr<const std::function<void()>> fire = timer->fire_;
      (*fire)();
      lock.Lock();
      running_ = nullptr;
      idle_cv_.NotifyAll();
      continue;
    }
    TimePoint next = queue_.empty() ? now + kIdleSleep : queue_.begin()->first;
    lock.Unlock();
    sleeper_->SleepUntil(next);
    lock.Lock();
  }
}

Timer::Timer(Clock& clock, std::function<void()> fire)
    : clock_(clock),
      service_(clock.timers()),
      fire_(std::make_shared<const std::function<void()>>(std::move(fire))) {}

Timer::~Timer() { Cancel(); }

void Timer::ArmAt(TimePoint when) { service_.Arm(this, when); }

void Timer::ArmAfter(Duration delay) { ArmAt(clock_.Now() + delay); }

void Timer::Cancel() { service_.Cancel(this); }

}  // namespace flotilla
