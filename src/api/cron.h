// Cron schedules as a CronJob's spec.schedule writes them (the standard
// five fields, as the cron library Kubernetes uses parses them) and the
// time zones of its spec.timeZone (the IANA database in
// /usr/share/zoneinfo). Pure; thread-safe.
//
// Fields: minute (0-59), hour (0-23), day of month (1-31), month (1-12 or
// JAN-DEC), day of week (0-6 or SUN-SAT). Each is a comma-separated list of
// `*` (or `?` for the days), `N`, `A-B`, with an optional `/STEP` (`*/15`,
// `5/20`, `1-30/2`). When the day of month or the day of week is `*`, a day
// must match both; otherwise either. Descriptors: @yearly (@annually),
// @monthly, @weekly, @daily (@midnight), @hourly, and @every DURATION
// (`@every 1h30m`: at that interval from the previous run).
#pragma once

#include <absl/time/time.h>

#include <bitset>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"

namespace flotilla::api::cron {

class Schedule {
 public:
  // InvalidArgument with the cron library's words ("expected exactly 5
  // fields, found 1: [x]", "end of range (60) above maximum (59): 0-60").
  static StatusOr<Schedule> Parse(std::string_view spec);

  // The first time the schedule fires strictly after `t`, in `zone`;
  // nullopt when it never does within five years (February 30th).
  std::optional<TimePoint> Next(TimePoint t, const absl::TimeZone& zone) const;

 private:
  std::bitset<60> minute_;
  std::bitset<24> hour_;
  std::bitset<32> dom_;
  std::bitset<13> month_;
  std::bitset<7> dow_;
  bool dom_star_ = false;
  bool dow_star_ = false;
  Duration every_{};  // @every: nonzero
};

// The IANA zone `name` ("" and "UTC": UTC); InvalidArgument "unknown time
// zone NAME" when the database has none of that name.
StatusOr<absl::TimeZone> LoadZone(std::string_view name);

}  // namespace flotilla::api::cron
