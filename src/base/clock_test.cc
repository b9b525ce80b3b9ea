#include "base/clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "base/due_time.h"

namespace flotilla {
namespace {

using std::chrono::seconds;

TEST(ClockTest, FormatsRfc3339) {
  TimePoint t = std::chrono::system_clock::from_time_t(1700000000);
  EXPECT_EQ(FormatRfc3339(t), "2023-11-14T22:13:20Z");
  EXPECT_EQ(FormatRfc3339Micro(t + std::chrono::microseconds(42)), "2023-11-14T22:13:20.000042Z");
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
