#include "base/clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace flotilla {
namespace {

using std::chrono::seconds;

TEST(ClockTest, FormatsRfc3339) {
  TimePoint t = std::chrono::system_clock::from_time_t(1700000000);
  EXPECT_EQ(FormatRfc3339(t), "2023-11-14T22:13:20Z");
  EXPECT_EQ(FormatRfc3339Micro(t + std::chrono::microseconds(42)), "2023-11-14T22:13:20.000042Z");
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

TEST(FakeClockTest, AdvanceReleasesWaiters) {
  FakeClock clock;
  TimePoint deadline = clock.Now() + seconds(10);
  bool reached = false;
  std::thread waiter([&] { reached = clock.WaitUntil(deadline); });
  clock.Advance(seconds(5));
  clock.Advance(seconds(5));
  waiter.join();
  EXPECT_TRUE(reached);
}

TEST(FakeClockTest, WakeReleasesWaitersEarly) {
  FakeClock clock;
  std::atomic<bool> done{false};
  bool reached = true;
  std::thread waiter([&] {
    reached = clock.WaitUntil(clock.Now() + seconds(10));
    done = true;
  });
  // A Wake() before the waiter starts waiting is not seen by it, so repeat.
  while (!done) {
    clock.Wake();
    std::this_thread::yield();
  }
  waiter.join();
  EXPECT_FALSE(reached);
}

}  // namespace
}  // namespace flotilla
