// TokenBucket (token_bucket.h).
#include "base/token_bucket.h"

#include <algorithm>
#include <chrono>

#include "base/mutex.h"

namespace flotilla {

TokenBucket::TokenBucket(double qps, int burst, Clock& clock)
    : qps_(qps), burst_(std::max(burst, 1)), clock_(clock), tokens_(burst_), last_(clock.Now()) {}

Duration TokenBucket::Reserve() {
  if (qps_ <= 0) return Duration::zero();
  MutexLock lock(mu_);
  TimePoint now = clock_.Now();
  if (now > last_) {
    double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
    last_ = now;
  }
  tokens_ -= 1;
  if (tokens_ >= 0) return Duration::zero();
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(-tokens_ / qps_));
}

void TokenBucket::Wait() {
  Duration wait = Reserve();
  if (wait <= Duration::zero()) return;
  clock_.SleepUntil(clock_.Now() + wait);
}

}  // namespace flotilla
