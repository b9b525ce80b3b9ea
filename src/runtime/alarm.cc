#include "runtime/alarm.h"

namespace flotilla::runtime {

void Alarm::Wait(TimePoint deadline) {
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    sleeping_ = true;
    deadline_ = deadline;
  }
  sleeper_->SleepUntil(deadline);
  std::lock_guard lock(mu_);
  sleeping_ = false;
}

void Alarm::Kick() { sleeper_->Wake(); }

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
