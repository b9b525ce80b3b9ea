#include "base/timer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/mutex.h"

namespace flotilla {
namespace {

using std::chrono::seconds;

// Records what fired, in order, and lets the test wait for it.
class Fired {
 public:
  std::function<void()> Record(std::string name) {
    return [this, name] {
      MutexLock lock(mu_);
      names_.push_back(name);
      cv_.NotifyAll();
    };
  }
  std::vector<std::string> WaitFor(size_t n) {
    MutexLock lock(mu_);
    cv_.Wait(lock, [&]() REQUIRES(mu_) { return names_.size() >= n; });
    return names_;
  }
  size_t count() {
    MutexLock lock(mu_);
    return names_.size();
  }

 private:
  Mutex mu_;
  CondVar cv_;
  std::vector<std::string> names_;
};

TEST(TimerTest, FiresInDeadlineOrderWhenTheClockGetsThere) {
  FakeClock clock;
  Fired fired;
  Timer late(clock, fired.Record("late"));
  Timer early(clock, fired.Record("early"));
  late.ArmAfter(seconds(20));
  early.ArmAfter(seconds(10));
  EXPECT_EQ(clock.timers().armed(), 2u);
  EXPECT_EQ(clock.timers().next_deadline(), clock.Now() + seconds(10));
  clock.Advance(seconds(30));
  EXPECT_EQ(fired.WaitFor(2), (std::vector<std::string>{"early", "late"}));
  EXPECT_EQ(clock.timers().armed(), 0u);
}

TEST(TimerTest, NotBeforeItsTime) {
  FakeClock clock;
  Fired fired;
  Timer marker(clock, fired.Record("marker"));
  Timer timer(clock, fired.Record("timer"));
  timer.ArmAfter(seconds(10));
  marker.ArmAfter(seconds(9));
  clock.Advance(seconds(9));
  // The marker fires before the timer would: once it has, the service has
  // looked at the clock at 9 s and left the timer armed.
  EXPECT_EQ(fired.WaitFor(1), (std::vector<std::string>{"marker"}));
  EXPECT_EQ(clock.timers().armed(), 1u);
  clock.Advance(seconds(1));
  EXPECT_EQ(fired.WaitFor(2), (std::vector<std::string>{"marker", "timer"}));
}

TEST(TimerTest, RearmingReplacesAndCancelDisarms) {
  FakeClock clock;
  Fired fired;
  Timer a(clock, fired.Record("a"));
  Timer b(clock, fired.Record("b"));
  Timer last(clock, fired.Record("last"));
  a.ArmAfter(seconds(5));
  a.ArmAfter(seconds(15));  // later: replaces the earlier arming
  b.ArmAfter(seconds(1));
  b.Cancel();
  last.ArmAfter(seconds(20));
  clock.Advance(seconds(10));
  EXPECT_EQ(clock.timers().armed(), 2u);
  clock.Advance(seconds(10));
  EXPECT_EQ(fired.WaitFor(2), (std::vector<std::string>{"a", "last"}));
}

TEST(TimerTest, ArmingTheOnlyTimerWakesTheService) {
  FakeClock clock;
  Fired fired;
  Timer first(clock, fired.Record("first"));
  Timer second(clock, fired.Record("second"));
  first.ArmAfter(seconds(10));
  clock.Advance(seconds(10));
  fired.WaitFor(1);
  // The service has nothing armed now and sleeps for long: arming the one
  // timer must wake it to sleep until that timer's time instead.
  second.ArmAfter(seconds(1));
  clock.Advance(seconds(1));
  EXPECT_EQ(fired.WaitFor(2), (std::vector<std::string>{"first", "second"}));
}

TEST(TimerTest, APassedDeadlineFiresAtOnce) {
  FakeClock clock;
  Fired fired;
  Timer t(clock, fired.Record("now"));
  t.ArmAt(clock.Now() - seconds(1));
  EXPECT_EQ(fired.WaitFor(1).size(), 1u);
}

TEST(TimerTest, ACallbackMayRearmOrDestroyItsTimer) {
  FakeClock clock;
  Fired fired;
  int ticks = 0;
  const TimePoint start = clock.Now();
  std::unique_ptr<Timer> ticker;
  ticker = std::make_unique<Timer>(clock, [&] {
    if (++ticks < 3) {
      ticker->ArmAt(start + seconds(ticks + 1));  // absolute: the clock may be ahead
      return;
    }
    ticker.reset();
    fired.Record("gone")();
  });
  ticker->ArmAfter(seconds(1));
  for (int i = 0; i < 3; ++i) clock.Advance(seconds(1));
  fired.WaitFor(1);
  EXPECT_EQ(ticks, 3);
  EXPECT_EQ(ticker, nullptr);
}

TEST(TimerTest, RunsOnTheRealClock) {
  Fired fired;
  Timer t(RealClock(), fired.Record("real"));
  t.ArmAfter(std::chrono::milliseconds(1));
  EXPECT_EQ(fired.WaitFor(1).size(), 1u);
}

}  // namespace
}  // namespace flotilla
