// TokenBucket (token_bucket.h).
#include "base/token_bucket.h"

#include <algorithm>
#include <chrono>

#include "base/mutex.h"

namespace flotilla {

TokenBucket::TokenBucket(double qps, int burst, Clock& clock)
    : qps_(qps), burst_(std::max(burst, 1)), clock_(clock), tokens_(burst_), last_(clock.Now()) {}

void TokenBucket::Refill() {
  TimePoint now = clock_.Now();
  if (now > last_) {
    double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
    last_ = now;
  }
}

Duration TokenBucket::Reserve() {
  if (qps_ <= 0) return Duration::zero();
  MutexLock lock(mu_);
  Refill();
  tokens_ -= 1;
  if (tokens_ >= 0) return Duration::zero();
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(-tokens_ / qps_));
}

Duration TokenBucket::TryTake() {
  if (qps_ <= 0) return Duration::zero();
  MutexLock lock(mu_);
  Refill();
  if (tokens_ >= 1) {
    tokens_ -= 1;
    return Duration::zero();
  }
  // At least a tick, so that a caller never comes back at once for nothing.
  return std::max<Duration>(
      std::chrono::duration_cast<Duration>(std::chrono::duration<double>((1 - tokens_) / qps_)),
      Duration(1));
}

void TokenBucket::Wait() {
  Duration wait = Reserve();
  if (wait <= Duration::zero()) return;
  clock_.SleepUntil(clock_.Now() + wait);
}

}  // namespace flotilla
