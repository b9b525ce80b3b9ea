#include "member/hpa/scale_history.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace flotilla::member::hpa {
namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();
constexpr int64_t kMinInt = std::numeric_limits<int32_t>::min();

ScalingRules ParseRules(const json::object* rules, int64_t default_window,
                        std::vector<ScalingPolicy> default_policies) {
  ScalingRules out;
  out.stabilization_window_seconds = default_window;
  out.policies = std::move(default_policies);
  if (rules == nullptr) return out;
  if (auto window = GetInt(*rules, "stabilizationWindowSeconds")) {
    out.stabilization_window_seconds = *window;
  }
  if (auto select = GetString(*rules, "selectPolicy"); select && !select->empty()) {
    out.select_policy = std::string(*select);
  }
  const json::array* policies = GetArray(*rules, "policies");
  if (policies == nullptr || policies->empty()) return out;
  out.policies.clear();
  for (const json::value& p : *policies) {
    if (!p.is_object()) continue;
    const json::object& o = p.get_object();
    out.policies.push_back({std::string(GetString(o, "type").value_or("")),
                            GetInt(o, "value").value_or(0),
                            GetInt(o, "periodSeconds").value_or(0)});
  }
  return out;
}

Duration Seconds(int64_t s) { return std::chrono::seconds(s); }

}  // namespace

std::optional<Behavior> ParseBehavior(const json::object& spec, Duration default_down_window) {
  const json::object* behavior = GetObject(spec, "behavior");
  if (behavior == nullptr) return std::nullopt;
  int64_t down_window =
      std::chrono::duration_cast<std::chrono::seconds>(default_down_window).count();
  return Behavior{
      ParseRules(GetObject(*behavior, "scaleUp"), 0, {{"Pods", 4, 15}, {"Percent", 100, 15}}),
      ParseRules(GetObject(*behavior, "scaleDown"), down_window, {{"Percent", 100, 15}})};
}

void ScaleHistory::RecordInitial(int64_t current, TimePoint now) {
  if (recommendations_.empty()) recommendations_.push_back({current, now});
}

Normalized ScaleHistory::Normalize(const std::optional<Behavior>& behavior, Duration down_window,
                                   int64_t current, int64_t proposal, int64_t min, int64_t max,
                                   TimePoint now) {
  int64_t stabilized = behavior ? StabilizeWithBehavior(*behavior, current, proposal, now)
                                : StabilizeDown(proposal, down_window, now);
  Normalized out;
  if (stabilized == proposal) {
    out.able_reason = "ReadyForNewScale";
    out.able_message = "recommended size matches current size";
  } else if (behavior && proposal >= current) {
    out.able_reason = "ScaleUpStabilized";
    out.able_message =
        "recent recommendations were lower than current one, applying the lowest recent "
        "recommendation";
  } else {
    out.able_reason = "ScaleDownStabilized";
    out.able_message =
        "recent recommendations were higher than current one, applying the highest recent "
        "recommendation";
  }
  Normalized limits;
  if (behavior) {
    limits = LimitWithBehavior(*behavior, current, stabilized, min, max, now);
  } else {
    // convertDesiredReplicasWithRules: at most doubling (or 4) per sync.
    int64_t up_limit = std::max<int64_t>(2 * current, 4);
    int64_t max_allowed = std::min(max, up_limit);
    limits.replicas = stabilized;
    limits.limited_reason = "DesiredWithinRange";
    limits.limited_message = "the desired count is within the acceptable range";
    if (stabilized < min) {
      limits = {min,
                "",
                "",
                true,
                "TooFewReplicas",
                "the desired replica count is less than the minimum replica count"};
    } else if (stabilized > max_allowed && max > up_limit) {
      limits = {max_allowed,
                "",
                "",
                true,
                "ScaleUpLimit",
                "the desired replica count is increasing faster than the maximum scale rate"};
    } else if (stabilized > max_allowed) {
      limits = {max_allowed,
                "",
                "",
                true,
                "TooManyReplicas",
                "the desired replica count is more than the maximum replica count"};
    }
  }
  out.replicas = limits.replicas;
  out.limited = limits.replicas != stabilized;
  out.limited_reason = limits.limited_reason;
  out.limited_message = limits.limited_message;
  return out;
}

// stabilizeRecommendation: the highest recommendation of the window; the
// proposal replaces a sample that left the window, or is added.
int64_t ScaleHistory::StabilizeDown(int64_t proposal, Duration window, TimePoint now) {
  TimePoint cutoff = now - window;
  int64_t highest = proposal;
  std::optional<size_t> old;
  for (size_t i = 0; i < recommendations_.size(); ++i) {
    if (recommendations_[i].at < cutoff) {
      old = i;
    } else {
      highest = std::max(highest, recommendations_[i].replicas);
    }
  }
  if (old) {
    recommendations_[*old] = {proposal, now};
  } else {
    recommendations_.push_back({proposal, now});
  }
  return highest;
}

int64_t ScaleHistory::StabilizeWithBehavior(const Behavior& b, int64_t current, int64_t proposal,
                                            TimePoint now) {
  TimePoint up_cutoff = now - Seconds(b.scale_up.stabilization_window_seconds);
  TimePoint down_cutoff = now - Seconds(b.scale_down.stabilization_window_seconds);
  int64_t up = proposal, down = proposal;
  std::optional<size_t> old;
  for (size_t i = 0; i < recommendations_.size(); ++i) {
    const Recommendation& r = recommendations_[i];
    if (r.at > up_cutoff) up = std::min(up, r.replicas);
    if (r.at > down_cutoff) down = std::max(down, r.replicas);
    if (r.at < up_cutoff && r.at < down_cutoff) old = i;
  }
  int64_t recommendation = std::min(std::max(current, up), down);
  if (old) {
    recommendations_[*old] = {proposal, now};
  } else {
    recommendations_.push_back({proposal, now});
  }
  return recommendation;
}

// convertDesiredReplicasWithBehaviorRate.
Normalized ScaleHistory::LimitWithBehavior(const Behavior& b, int64_t current, int64_t desired,
                                           int64_t min, int64_t max, TimePoint now) const {
  if (desired > current) {
    int64_t limit = std::max(ScaleUpLimit(b.scale_up, current, now), current);
    if (max > limit && desired > limit) {
      return {limit,
              "",
              "",
              true,
              "ScaleUpLimit",
              "the desired replica count is increasing faster than the maximum scale rate"};
    }
    if (max <= limit && desired > max) {
      return {max,
              "",
              "",
              true,
              "TooManyReplicas",
              "the desired replica count is more than the maximum replica count"};
    }
  } else if (desired < current) {
    int64_t limit = std::min(ScaleDownLimit(b.scale_down, current, now), current);
    if (min < limit && desired < limit) {
      return {limit,
              "",
              "",
              true,
              "ScaleDownLimit",
              "the desired replica count is decreasing faster than the maximum scale rate"};
    }
    if (min >= limit && desired < min) {
      return {min,
              "",
              "",
              true,
              "TooFewReplicas",
              "the desired replica count is less than the minimum replica count"};
    }
  }
  return {desired,
          "",
          "",
          false,
          "DesiredWithinRange",
          "the desired count is within the acceptable range"};
}

// The replica count at the start of a policy's period: the current one less
// what was added, plus what was removed, within the period.
int64_t ScaleHistory::PeriodStart(int64_t current, int64_t period_seconds, TimePoint now) const {
  TimePoint cutoff = now - Seconds(period_seconds);
  int64_t start = current;
  for (const ScaleEvent& e : up_events_) start -= e.at > cutoff ? e.change : 0;
  for (const ScaleEvent& e : down_events_) start += e.at > cutoff ? e.change : 0;
  return start;
}

int64_t ScaleHistory::ScaleUpLimit(const ScalingRules& rules, int64_t current,
                                   TimePoint now) const {
  if (rules.select_policy == "Disabled") return current;
  bool min_change = rules.select_policy == "Min";
  int64_t result = min_change ? kMaxInt : kMinInt;
  for (const ScalingPolicy& p : rules.policies) {
    int64_t start = PeriodStart(current, p.period_seconds, now);
    int64_t proposed =
        p.type == "Pods"
            ? start + p.value
            : static_cast<int64_t>(std::ceil(static_cast<double>(start) * (1 + p.value / 100.0)));
    result = min_change ? std::min(result, proposed) : std::max(result, proposed);
  }
  return result;
}

int64_t ScaleHistory::ScaleDownLimit(const ScalingRules& rules, int64_t current,
                                     TimePoint now) const {
  if (rules.select_policy == "Disabled") return current;
  bool min_change = rules.select_policy == "Min";
  int64_t result = min_change ? kMinInt : kMaxInt;
  for (const ScalingPolicy& p : rules.policies) {
    int64_t start = PeriodStart(current, p.period_seconds, now);
    int64_t proposed =
        p.type == "Pods" ? start - p.value
                         : static_cast<int64_t>(static_cast<double>(start) * (1 - p.value / 100.0));
    result = min_change ? std::max(result, proposed) : std::min(result, proposed);
  }
  return result;
}

void ScaleHistory::RecordScale(const std::optional<Behavior>& behavior, int64_t from, int64_t to,
                               TimePoint now) {
  if (!behavior || from == to) return;
  bool up = to > from;
  const ScalingRules& rules = up ? behavior->scale_up : behavior->scale_down;
  std::vector<ScaleEvent>& events = up ? up_events_ : down_events_;
  int64_t longest = 0;
  for (const ScalingPolicy& p : rules.policies) longest = std::max(longest, p.period_seconds);
  TimePoint cutoff = now - Seconds(longest);
  std::optional<size_t> old;
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].at < cutoff) events[i].outdated = true;
    if (events[i].outdated) old = i;
  }
  ScaleEvent event{up ? to - from : from - to, now, false};
  if (old) {
    events[*old] = event;
  } else {
    events.push_back(event);
  }
}

}  // namespace flotilla::member::hpa
