// Rate limiters for the work queue, as client-go's util/workqueue has them.
//
// When(key) says how long to wait before the key may be processed again and
// records the request; Forget(key) ends the key's backoff; NumRequeues(key)
// counts the failures since the last Forget. The default controller limiter
// is the larger of a per-key exponential backoff (5 ms doubling to 1000 s)
// and a global token bucket (10 per second, burst 100), as client-go's
// DefaultControllerRateLimiter. Time comes from the injected Clock.
//
// Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/token_bucket.h"

namespace flotilla::runtime {

class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  virtual Duration When(const std::string& key) = 0;
  virtual void Forget(const std::string& key) = 0;
  virtual int NumRequeues(const std::string& key) = 0;
};

// base * 2^failures, capped at `max`.
class ExponentialFailureRateLimiter : public RateLimiter {
 public:
  ExponentialFailureRateLimiter(Duration base, Duration max) : base_(base), max_(max) {}
  Duration When(const std::string& key) override;
  void Forget(const std::string& key) override;
  int NumRequeues(const std::string& key) override;

 private:
  const Duration base_;
  const Duration max_;
  Mutex mu_;
  std::unordered_map<std::string, int> failures_ GUARDED_BY(mu_);
};

// A token bucket shared by all keys (golang.org/x/time/rate's Reserve): it
// refills at `qps` up to `burst`; each When takes a token, going into debt
// when none is left, and returns how long until the debt is paid.
class TokenBucketRateLimiter : public RateLimiter {
 public:
  TokenBucketRateLimiter(Clock& clock, double qps, int burst) : bucket_(qps, burst, clock) {}
  Duration When(const std::string& key) override { return bucket_.Reserve(); }
  void Forget(const std::string& key) override {}
  int NumRequeues(const std::string& key) override { return 0; }

 private:
  TokenBucket bucket_;
};

// The longest of its limiters' delays; Forget and NumRequeues fan out.
class MaxOfRateLimiter : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
      : limiters_(std::move(limiters)) {}
  Duration When(const std::string& key) override;
  void Forget(const std::string& key) override;
  int NumRequeues(const std::string& key) override;

 private:
  const std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

struct RateLimiterOptions {
  Duration base_delay = std::chrono::milliseconds(5);
  Duration max_delay = std::chrono::seconds(1000);
  double qps = 10;
  int burst = 100;
};

// MaxOf(exponential per key, token bucket), client-go's default controller
// rate limiter with the given (by default its) parameters.
std::unique_ptr<RateLimiter> NewControllerRateLimiter(Clock& clock,
                                                      const RateLimiterOptions& options = {});

}  // namespace flotilla::runtime
