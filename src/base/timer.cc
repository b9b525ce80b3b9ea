// TimerService and Timer (timer.h).
#include "base/timer.h"

#include "base/io.h"

namespace flotilla {
namespace {

// How long the service sleeps with nothing armed; Arm wakes it sooner.
constexpr Duration kIdleSleep = std::chrono::hours(1);

}  // namespace

TimerService::TimerService(Clock& clock) : clock_(clock), sleeper_(clock.NewSleeper()) {
  thread_ = std::thread([this] { Run(); });
}

TimerService::~TimerService() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  sleeper_->Wake();
  thread_.join();
}

size_t TimerService::armed() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

TimePoint TimerService::next_deadline() const {
  std::lock_guard lock(mu_);
  return queue_.empty() ? TimePoint::max() : queue_.begin()->first;
}

void TimerService::Arm(Timer* timer, TimePoint when) {
  bool earliest;
  {
    std::lock_guard lock(mu_);
    if (timer->armed_) queue_.erase({timer->when_, timer});
    timer->armed_ = true;
    timer->when_ = when;
    auto it = queue_.emplace(when, timer).first;
    earliest = it == queue_.begin();
  }
  if (earliest) sleeper_->Wake();
}

void TimerService::Cancel(Timer* timer) {
  std::unique_lock lock(mu_);
  if (timer->armed_) queue_.erase({timer->when_, timer});
  timer->armed_ = false;
  if (std::this_thread::get_id() == thread_.get_id()) return;
  ScopedBlocking blocking;
  idle_cv_.wait(lock, [&] { return running_ != timer; });
}

void TimerService::Run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    TimePoint now = clock_.Now();
    if (!queue_.empty() && queue_.begin()->first <= now) {
      Timer* timer = queue_.begin()->second;
      queue_.erase(queue_.begin());
      timer->armed_ = false;
      running_ = timer;
      lock.unlock();
      // The callback may destroy its Timer: nothing here touches it after.
      std::shared_ptr<const std::function<void()>> fire = timer->fire_;
      (*fire)();
      lock.lock();
      running_ = nullptr;
      idle_cv_.notify_all();
      continue;
    }
    TimePoint next = queue_.empty() ? now + kIdleSleep : queue_.begin()->first;
    lock.unlock();
    sleeper_->SleepUntil(next);
    lock.lock();
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
