#include "runtime/alarm.h"

#include "base/mutex.h"

namespace flotilla::runtime {

void Alarm::Wait(TimePoint deadline) {
  {
    MutexLock lock(mu_);
    if (stopped_) return;
    sleeping_ = true;
    deadline_ = deadline;
  }
  sleeper_->SleepUntil(deadline);
  MutexLock lock(mu_);
  sleeping_ = false;
}

void Alarm::Kick() { sleeper_->Wake(); }

void Alarm::Stop() {
  {
    MutexLock lock(mu_);
    stopped_ = true;
  }
  Kick();
}

TimePoint Alarm::SleepingUntil() const {
  MutexLock lock(mu_);
  return sleeping_ ? deadline_ : TimePoint::min();
}

bool Alarm::stopped() const {
  MutexLock lock(mu_);
  return stopped_;
}

}  // namespace flotilla::runtime
