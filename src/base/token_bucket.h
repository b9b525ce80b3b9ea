// A token bucket, as client-go's flowcontrol limiter: the REST client's
// requests per second, and the work queues' overall rate limiter. Tokens accrue at `qps` per second
// up to `burst`; each request takes one, waiting (on the injected Clock) when none is left. Waits
// are reserved in arrival order: a caller that must wait takes a token that does not exist yet, so
// later callers wait longer.
#pragma once

#include "base/clock.h"
#include "base/mutex.h"

namespace flotilla {

// Thread-safe.
class TokenBucket {
 public:
  // `qps` <= 0 disables limiting. `burst` < 1 counts as 1. The bucket starts
  // full. `clock` is not owned and must outlive the bucket.
  TokenBucket(double qps, int burst, Clock& clock);

  // Takes a token and returns how long the caller must wait before using it
  // (zero when one was available).
  Duration Reserve();
  // Reserve() and wait that long on the clock.
  void Wait();
  // Takes a token when one is there (zero); otherwise takes nothing and
  // returns how long until one will be. For a caller that comes back
  // later instead of waiting.
  Duration TryTake();

 private:
  // Brings tokens_ up to the clock.
  void Refill() REQUIRES(mu_);

  const double qps_;
  const double burst_;
  Clock& clock_;
  Mutex mu_;
  double tokens_ GUARDED_BY(mu_);   // negative when waits are reserved
  TimePoint last_ GUARDED_BY(mu_);  // when tokens_ was last brought up to date
};

}  // namespace flotilla
