#include "runtime/rate_limiter.h"

#include <algorithm>
#include <cmath>

#include "base/mutex.h"

namespace flotilla::runtime {

Duration ExponentialFailureRateLimiter::When(const std::string& key) {
  int exp;
  {
    MutexLock lock(mu_);
    exp = failures_[key]++;
  }
  // Computed in floating point so that a large exponent saturates at max_
  // instead of overflowing.
  double delay = static_cast<double>(base_.count()) * std::pow(2.0, exp);
  if (delay >= static_cast<double>(max_.count())) return max_;
  return Duration(static_cast<Duration::rep>(delay));
}

void ExponentialFailureRateLimiter::Forget(const std::string& key) {
  MutexLock lock(mu_);
  failures_.erase(key);
}

int ExponentialFailureRateLimiter::NumRequeues(const std::string& key) {
  MutexLock lock(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

Duration MaxOfRateLimiter::When(const std::string& key) {
  Duration longest = Duration::zero();
  for (const auto& limiter : limiters_) longest = std::max(longest, limiter->When(key));
  return longest;
}

void MaxOfRateLimiter::Forget(const std::string& key) {
  for (const auto& limiter : limiters_) limiter->Forget(key);
}

int MaxOfRateLimiter::NumRequeues(const std::string& key) {
  int most = 0;
  for (const auto& limiter : limiters_) most = std::max(most, limiter->NumRequeues(key));
  return most;
}

std::unique_ptr<RateLimiter> NewControllerRateLimiter(Clock& clock,
                                                      const RateLimiterOptions& options) {
  std::vector<std::unique_ptr<RateLimiter>> limiters;
  limiters.push_back(
      std::make_unique<ExponentialFailureRateLimiter>(options.base_delay, options.max_delay));
  limiters.push_back(std::make_unique<TokenBucketRateLimiter>(clock, options.qps, options.burst));
  return std::make_unique<MaxOfRateLimiter>(std::move(limiters));
}

}  // namespace flotilla::runtime
