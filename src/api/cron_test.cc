// Cron schedules: parsing in the cron library's words, the next run in a
// time zone, descriptors and @every.
#include "api/cron.h"

#include <gtest/gtest.h>

namespace flotilla::api::cron {
namespace {

TimePoint At(const std::string& rfc3339) {
  TimePoint t;
  EXPECT_TRUE(ParseRfc3339(rfc3339, &t)) << rfc3339;
  return t;
}

std::string NextAfter(std::string_view spec, const std::string& after, std::string_view zone = "") {
  StatusOr<Schedule> s = Schedule::Parse(spec);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  StatusOr<absl::TimeZone> tz = LoadZone(zone);
  EXPECT_TRUE(tz.ok());
  std::optional<TimePoint> next = s->Next(At(after), *tz);
  return next ? FormatRfc3339(*next) : "never";
}

TEST(Cron, NextRuns) {
  EXPECT_EQ(NextAfter("*/15 * * * *", "2026-03-01T10:07:30Z"), "2026-03-01T10:15:00Z");
  EXPECT_EQ(NextAfter("*/15 * * * *", "2026-03-01T10:15:00Z"), "2026-03-01T10:30:00Z");
  EXPECT_EQ(NextAfter("0 3 * * *", "2026-03-01T10:07:30Z"), "2026-03-02T03:00:00Z");
  EXPECT_EQ(NextAfter("30 2 1 * *", "2026-03-01T10:00:00Z"), "2026-04-01T02:30:00Z");
  EXPECT_EQ(NextAfter("0 9 * * MON-FRI", "2026-03-06T10:00:00Z"), "2026-03-09T09:00:00Z");
  EXPECT_EQ(NextAfter("0 0 29 FEB *", "2026-03-01T00:00:00Z"), "2028-02-29T00:00:00Z");
  EXPECT_EQ(NextAfter("0 0 30 2 *", "2026-03-01T00:00:00Z"), "never");
  // Day of month and day of week both given: either matches.
  EXPECT_EQ(NextAfter("0 0 13 * 5", "2026-03-01T00:00:00Z"), "2026-03-06T00:00:00Z");
  EXPECT_EQ(NextAfter("@hourly", "2026-03-01T10:07:30Z"), "2026-03-01T11:00:00Z");
  EXPECT_EQ(NextAfter("@weekly", "2026-03-04T10:00:00Z"), "2026-03-08T00:00:00Z");
  EXPECT_EQ(NextAfter("@every 90s", "2026-03-01T10:00:00Z"), "2026-03-01T10:01:30Z");
}

TEST(Cron, TimeZones) {
  // 09:00 in New York is 14:00 UTC in winter and 13:00 in summer.
  EXPECT_EQ(NextAfter("0 9 * * *", "2026-01-10T00:00:00Z", "America/New_York"),
            "2026-01-10T14:00:00Z");
  EXPECT_EQ(NextAfter("0 9 * * *", "2026-07-10T00:00:00Z", "America/New_York"),
            "2026-07-10T13:00:00Z");
  EXPECT_EQ(LoadZone("Mars/Olympus").status().message(), "unknown time zone Mars/Olympus");
  EXPECT_FALSE(LoadZone("Local").ok());
}

TEST(Cron, ErrorsInTheCronLibrarysWords) {
  auto error = [](std::string_view spec) { return Schedule::Parse(spec).status().message(); };
  EXPECT_EQ(error("x"), "expected exactly 5 fields, found 1: [x]");
  EXPECT_EQ(error("0-60 * * * *"), "end of range (60) above maximum (59): 0-60");
  EXPECT_EQ(error("* * 0 * *"), "beginning of range (0) below minimum (1): 0");
  EXPECT_EQ(error("5-1 * * * *"), "beginning of range (5) beyond end of range (1): 5-1");
  EXPECT_EQ(error("*/0 * * * *"), "step of range should be a positive number: */0");
  EXPECT_EQ(error("a * * * *"),
            "failed to parse int from a: strconv.Atoi: parsing \"a\": invalid syntax");
  EXPECT_EQ(error("@fortnightly"), "unrecognized descriptor: @fortnightly");
  EXPECT_TRUE(Schedule::Parse("0 0 * JAN,jul sun").ok());
}

}  // namespace
}  // namespace flotilla::api::cron
