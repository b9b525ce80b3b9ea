// Due times of periodic work, chosen so that work of many objects shares
// wake-ups.
#pragma once

#include <chrono>

#include "base/clock.h"

namespace flotilla {

// When work done at `t` every `period` is next due: `t + period` rounded
// down to a whole second, for a period of 2 s or more (shorter ones keep
// their length). Periodic work of many objects due on whole seconds (a
// member process's node Leases, a server's watch bookmarks, the
// federation's probes) runs in one wake-up a second, not one each, as
// kube-apiserver's watch cache sends its bookmarks in 1-second buckets.
inline TimePoint DueOnWholeSecond(TimePoint t, Duration period) {
  if (period < std::chrono::seconds(2)) return t + period;
  return std::chrono::floor<std::chrono::seconds>(t + period);
}

}  // namespace flotilla
