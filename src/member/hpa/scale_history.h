// What the HPA controller remembers of one HPA between syncs, and the rules
// that turn a metric's proposal into the replica count to set (Kubernetes'
// normalizeDesiredReplicas and normalizeDesiredReplicasWithBehaviors):
// - Without spec.behavior: the recommendation is the highest one seen within
//   the downscale stabilization window, then clamped to [min, max] and to
//   max(2 * current, 4) per sync.
// - With spec.behavior: the recommendation is held between the lowest one
//   of the scale-up window and the highest one of the scale-down window,
//   then clamped to [min, max] and to the rate the policies allow
//   (Pods / Percent per periodSeconds, over the scale events of each
//   period; selectPolicy Max, Min or Disabled).
// Each result carries the AbleToScale reason/message and the ScalingLimited
// reason/message Kubernetes sets. Time is passed in. Not thread-safe: the
// controller serializes access. Internal to src/member/hpa.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/json.h"

namespace flotilla::member::hpa {

struct ScalingPolicy {
  std::string type;  // "Pods" or "Percent"
  int64_t value = 0;
  int64_t period_seconds = 0;
};

struct ScalingRules {
  int64_t stabilization_window_seconds = 0;
  std::string select_policy = "Max";  // "Max", "Min" or "Disabled"
  std::vector<ScalingPolicy> policies;
};

struct Behavior {
  ScalingRules scale_up;
  ScalingRules scale_down;
};

// spec.behavior with Kubernetes' defaults for what it leaves unset (scale
// up: no window, Max of 100% and 4 pods per 15 s; scale down: the
// controller's `default_down_window`, 100% per 15 s). nullopt without
// spec.behavior.
std::optional<Behavior> ParseBehavior(const json::object& spec, Duration default_down_window);

struct Normalized {
  int64_t replicas = 0;
  std::string able_reason, able_message;  // AbleToScale (status True)
  bool limited = false;                   // ScalingLimited status
  std::string limited_reason, limited_message;
};

class ScaleHistory {
 public:
  // recordInitialRecommendation: the first sync remembers the current size.
  void RecordInitial(int64_t current, TimePoint now);

  Normalized Normalize(const std::optional<Behavior>& behavior, Duration down_window,
                       int64_t current, int64_t proposal, int64_t min, int64_t max, TimePoint now);

  // storeScaleEvent: a rescale from `from` to `to` replicas (with behavior
  // only; the policies look at these).
  void RecordScale(const std::optional<Behavior>& behavior, int64_t from, int64_t to,
                   TimePoint now);

 private:
  struct Recommendation {
    int64_t replicas;
    TimePoint at;
  };
  struct ScaleEvent {
    int64_t change;
    TimePoint at;
    bool outdated;
  };

  int64_t StabilizeDown(int64_t proposal, Duration window, TimePoint now);
  int64_t StabilizeWithBehavior(const Behavior& b, int64_t current, int64_t proposal,
                                TimePoint now);
  Normalized LimitWithBehavior(const Behavior& b, int64_t current, int64_t desired, int64_t min,
                               int64_t max, TimePoint now) const;
  int64_t ScaleUpLimit(const ScalingRules& rules, int64_t current, TimePoint now) const;
  int64_t ScaleDownLimit(const ScalingRules& rules, int64_t current, TimePoint now) const;
  int64_t PeriodStart(int64_t current, int64_t period_seconds, TimePoint now) const;

  std::vector<Recommendation> recommendations_;
  std::vector<ScaleEvent> up_events_, down_events_;
};

}  // namespace flotilla::member::hpa
