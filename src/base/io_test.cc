#include "base/io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>

namespace flotilla {
namespace {

// A gate the pool's task waits at, so the test knows it is running.
class Gate {
 public:
  void Arrive() {
    std::unique_lock lock(mu_);
    ++arrived_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
  }
  void WaitArrived(int n) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return arrived_ >= n; });
  }
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  bool open_ = false;
};

TEST(PoolTriggerTest, KicksWhileItRunsMakeOneMoreRun) {
  BlockingPool pool(4, std::chrono::seconds(30));
  Gate gate;
  std::mutex mu;
  std::condition_variable cv;
  int runs = 0, concurrent = 0, most = 0;
  PoolTrigger trigger(pool, [&] {
    int run;
    {
      std::lock_guard lock(mu);
      run = ++runs;
      most = std::max(most, ++concurrent);
    }
    if (run == 1) gate.Arrive();
    std::lock_guard lock(mu);
    --concurrent;
    cv.notify_all();
  });
  trigger.Kick();
  gate.WaitArrived(1);  // the first run is under way
  for (int i = 0; i < 10; ++i) trigger.Kick();
  gate.Open();
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return runs == 2 && concurrent == 0; });
  }
  trigger.Stop();
  EXPECT_EQ(runs, 2) << "ten kicks during a run make one more run, not ten";
  EXPECT_EQ(most, 1) << "never two runs at once";
  trigger.Kick();
  EXPECT_EQ(runs, 2) << "nothing runs after Stop";
}

TEST(PoolTriggerTest, EachKickWhileIdleRuns) {
  BlockingPool pool(2, std::chrono::seconds(30));
  std::mutex mu;
  std::condition_variable cv;
  int runs = 0;
  PoolTrigger trigger(pool, [&] {
    std::lock_guard lock(mu);
    ++runs;
    cv.notify_all();
  });
  for (int want = 1; want <= 3; ++want) {
    trigger.Kick();
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return runs >= want; });
  }
  trigger.Stop();
  EXPECT_EQ(runs, 3);
}

}  // namespace
}  // namespace flotilla
