#include "base/clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <ctime>
#include <thread>
#include <vector>

#include "base/due_time.h"

namespace flotilla {
namespace {

using std::chrono::seconds;

TEST(ClockTest, FormatsRfc3339) {
  TimePoint t = std::chrono::system_clock::from_time_t(1700000000);
  EXPECT_EQ(FormatRfc3339(t), "2023-11-14T22:13:20Z");
  EXPECT_EQ(FormatRfc3339Micro(t + std::chrono::microseconds(42)), "2023-11-14T22:13:20.000042Z");
}

// The calendar arithmetic agrees with gmtime_r and strftime, leap days,
// ends of years and of centuries included, and before 1970 too.
TEST(ClockTest, FormatsRfc3339AsStrftimeDoes) {
  auto strftime_of = [](std::time_t secs, long micros) {
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[48];
    size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    std::string plain(buf, n);
    std::snprintf(buf, sizeof(buf), ".%06ldZ", micros);
    return std::pair{plain + "Z", plain + buf};
  };
  std::vector<std::time_t> times = {0,          59,         86399,     86400,      951782399,
                                    951782400,  951868799,  978307199, 1709164800, 1709251199,
                                    2147483647, 4102444800, 9214646399};  // TimePoint (ns) ends in
                                                                          // 2262
  for (std::time_t s = 0; s < 4102444800; s += 7919 * 3607) times.push_back(s);
  for (std::time_t secs : times) {
    TimePoint t = std::chrono::system_clock::from_time_t(secs) + std::chrono::microseconds(7);
    auto [plain, micro] = strftime_of(secs, 7);
    EXPECT_EQ(FormatRfc3339(t), plain) << secs;
    EXPECT_EQ(FormatRfc3339Micro(t), micro) << secs;
  }
  // Before 1970: the former way.
  TimePoint early = std::chrono::system_clock::from_time_t(-86400);
  EXPECT_EQ(FormatRfc3339(early), "1969-12-31T00:00:00Z");
  EXPECT_EQ(FormatRfc3339Micro(early + std::chrono::microseconds(7)),
            "1969-12-31T00:00:00.000007Z");
  // A fraction before 1970 belongs to the second before it, as after.
  TimePoint half = std::chrono::system_clock::from_time_t(0) - std::chrono::milliseconds(500);
  EXPECT_EQ(FormatRfc3339(half), "1969-12-31T23:59:59Z");
  EXPECT_EQ(FormatRfc3339Micro(half), "1969-12-31T23:59:59.500000Z");
}

TEST(ClockTest, PeriodsOfTwoSecondsOrMoreFallDueOnWholeSeconds) {
  using std::chrono::milliseconds;
  TimePoint t = std::chrono::system_clock::from_time_t(1700000000) + milliseconds(300);
  TimePoint whole = std::chrono::system_clock::from_time_t(1700000000);
  EXPECT_EQ(DueOnWholeSecond(t, seconds(10)), whole + seconds(10));  // 0.3 s early
  EXPECT_EQ(DueOnWholeSecond(whole, seconds(10)), whole + seconds(10));
  EXPECT_EQ(DueOnWholeSecond(t, seconds(2)), whole + seconds(2));
  // Shorter periods keep their length: rounding would halve them or worse.
  EXPECT_EQ(DueOnWholeSecond(t, seconds(1)), t + seconds(1));
  EXPECT_EQ(DueOnWholeSecond(t, milliseconds(1999)), t + milliseconds(1999));
}

TEST(ClockTest, ParsesRfc3339) {
  TimePoint t;
  ASSERT_TRUE(ParseRfc3339("2023-11-14T22:13:20Z", &t));
  EXPECT_EQ(std::chrono::system_clock::to_time_t(t), 1700000000);
  ASSERT_TRUE(ParseRfc3339("2023-11-14T23:13:20+01:00", &t));
  EXPECT_EQ(std::chrono::system_clock::to_time_t(t), 1700000000);
  ASSERT_TRUE(ParseRfc3339("2023-11-14T22:13:20.5Z", &t));
  EXPECT_FALSE(ParseRfc3339("yesterday", &t));
  EXPECT_FALSE(ParseRfc3339("2023-11-14T22:13:20", &t));
}

TEST(FakeClockTest, AdvanceReleasesSleepers) {
  FakeClock clock;
  TimePoint deadline = clock.Now() + seconds(10);
  bool reached = false;
  std::thread sleeper([&, s = clock.NewSleeper()] { reached = s->SleepUntil(deadline); });
  clock.Advance(seconds(5));
  clock.Advance(seconds(5));
  sleeper.join();
  EXPECT_TRUE(reached);
}

TEST(FakeClockTest, SleepUntilReturnsOnceTheClockGetsThere) {
  FakeClock clock;
  TimePoint deadline = clock.Now() + seconds(3);
  std::thread sleeper([&] { clock.SleepUntil(deadline); });
  for (int i = 0; i < 3; ++i) clock.Advance(seconds(1));
  sleeper.join();
  EXPECT_EQ(clock.Now(), deadline);
}

// Runs against both clocks: a Wake() made before the sleep is not lost, and
// it wakes only its own sleeper.
void WakeIsKeptAndOnlyForItsSleeper(Clock& clock) {
  std::unique_ptr<Sleeper> mine = clock.NewSleeper();
  std::unique_ptr<Sleeper> other = clock.NewSleeper();
  mine->Wake();  // nobody sleeps yet
  EXPECT_FALSE(mine->SleepUntil(clock.Now() + std::chrono::hours(1)));
  std::atomic<bool> other_done{false};
  std::thread other_thread([&] {
    other->SleepUntil(clock.Now() + std::chrono::hours(1));
    other_done = true;
  });
  std::atomic<bool> woke{false};
  std::thread mine_thread([&] { woke = !mine->SleepUntil(clock.Now() + std::chrono::hours(1)); });
  mine->Wake();
  mine_thread.join();
  EXPECT_TRUE(woke);
  EXPECT_FALSE(other_done);
  other->Wake();
  other_thread.join();
  EXPECT_TRUE(other_done);
}

TEST(FakeClockTest, WakeIsKeptAndOnlyForItsSleeper) {
  FakeClock clock;
  WakeIsKeptAndOnlyForItsSleeper(clock);
}

TEST(RealClockTest, WakeIsKeptAndOnlyForItsSleeper) { WakeIsKeptAndOnlyForItsSleeper(RealClock()); }

TEST(RealClockTest, SleepUntilWaitsForTheDeadline) {
  TimePoint deadline = RealClock().Now() + std::chrono::milliseconds(20);
  RealClock().SleepUntil(deadline);
  EXPECT_GE(RealClock().Now(), deadline);
}

}  // namespace
}  // namespace flotilla
