#include "runtime/alarm.h"

#include <thread>

namespace flotilla::runtime {

void Alarm::Wait(TimePoint deadline) {
  {
    std::lock_guard lock(mu_);
    if (stopped_ || kicks_ != seen_) {
      seen_ = kicks_;
      return;
    }
    sleeping_ = true;
    deadline_ = deadline;
  }
  clock_.WaitUntil(deadline);
  std::lock_guard lock(mu_);
  sleeping_ = false;
  seen_ = kicks_;
}

void Alarm::Kick() {
  std::unique_lock lock(mu_);
  uint64_t kick = ++kicks_;
  // The sleeper may be between setting sleeping_ and entering
  // Clock::WaitUntil, where a Wake() is lost: repeat until it has looked.
  while (sleeping_ && seen_ < kick) {
    lock.unlock();
    clock_.Wake();
    std::this_thread::yield();
    lock.lock();
  }
}

void Alarm::Stop() {
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
  }
  Kick();
}

TimePoint Alarm::SleepingUntil() const {
  std::lock_guard lock(mu_);
  return sleeping_ ? deadline_ : TimePoint::min();
}

bool Alarm::stopped() const {
  std::lock_guard lock(mu_);
  return stopped_;
}

}  // namespace flotilla::runtime
