#include "base/io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace flotilla {
namespace {

// A gate the pool's task waits at, so the test knows it is running.
class Gate {
 public:
  void Arrive() {
    MutexLock lock(mu_);
    ++arrived_;
    cv_.NotifyAll();
    cv_.Wait(lock, [&]() REQUIRES(mu_) { return open_; });
  }
  void WaitArrived(int n) {
    MutexLock lock(mu_);
    cv_.Wait(lock, [&]() REQUIRES(mu_) { return arrived_ >= n; });
  }
  void Open() {
    MutexLock lock(mu_);
    open_ = true;
    cv_.NotifyAll();
  }

 private:
  Mutex mu_;
  CondVar cv_;
  int arrived_ = 0;
  bool open_ = false;
};

// The monitor's check, for tests that must see the target alone at work.
constexpr std::chrono::milliseconds kNoMonitor = std::chrono::hours(1);

// A flag one thread sets and others wait for.
class Latch {
 public:
  void Set() {
    MutexLock lock(mu_);
    set_ = true;
    cv_.NotifyAll();
  }
  void Wait() {
    MutexLock lock(mu_);
    cv_.Wait(lock, [&]() REQUIRES(mu_) { return set_; });
  }

 private:
  Mutex mu_;
  CondVar cv_;
  bool set_ = false;
};

// Counts tasks that ran, and how many ran at once at most.
class Tally {
 public:
  void Enter() {
    MutexLock lock(mu_);
    most_ = std::max(most_, ++now_);
  }
  void Leave() {
    MutexLock lock(mu_);
    --now_;
    ++done_;
    cv_.NotifyAll();
  }
  void WaitDone(int n) {
    MutexLock lock(mu_);
    cv_.Wait(lock, [&]() REQUIRES(mu_) { return done_ >= n; });
  }
  int most() {
    MutexLock lock(mu_);
    return most_;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  int now_ = 0, most_ = 0, done_ = 0;
};

TEST(BlockingPoolTest, RunsNoMoreThanItsTargetAtOnce) {
  BlockingPool pool(64, std::chrono::seconds(30), /*running_target=*/2, kNoMonitor);
  Gate gate;
  Tally tally;
  for (int i = 0; i < 10; ++i) {
    pool.Submit([&] {
      tally.Enter();
      gate.Arrive();
      tally.Leave();
    });
  }
  gate.WaitArrived(2);
  EXPECT_EQ(pool.threads(), 2u) << "work waits for a running thread instead of starting one";
  gate.Open();
  tally.WaitDone(10);
  EXPECT_EQ(tally.most(), 2);
}

TEST(BlockingPoolTest, WorkThatDeclaresItWaitsLetsQueuedWorkRun) {
  BlockingPool pool(64, std::chrono::seconds(30), /*running_target=*/1, kNoMonitor);
  Latch waiting, second_ran, first_done;
  pool.Submit([&] {
    ScopedBlocking outer;
    { ScopedBlocking inner; }  // nested: the outer one still holds
    waiting.Set();
    second_ran.Wait();
    first_done.Set();
  });
  waiting.Wait();
  // With a target of one and the only thread busy, this runs only because
  // the first declared that it waits; without, the test would hang.
  pool.Submit([&] { second_ran.Set(); });
  first_done.Wait();
  EXPECT_EQ(pool.threads(), 2u);
}

TEST(BlockingPoolTest, TheMonitorStartsAThreadForWorkStuckBehindAnUndeclaredWait) {
  BlockingPool pool(64, std::chrono::seconds(30), /*running_target=*/1,
                    std::chrono::milliseconds(1));
  Latch waiting, second_ran, first_done;
  pool.Submit([&] {
    waiting.Set();
    second_ran.Wait();  // not declared
    first_done.Set();
  });
  waiting.Wait();
  pool.Submit([&] { second_ran.Set(); });
  first_done.Wait();
  // At least one more; how many depends on how soon a new thread starts.
  EXPECT_GE(pool.threads(), 2u);
}

TEST(BlockingPoolTest, ThreadsABurstStartedTimeOutUnderATrickleOfWork) {
  BlockingPool pool(64, std::chrono::milliseconds(100), /*running_target=*/8, kNoMonitor);
  Gate gate;
  Tally tally;
  for (int i = 0; i < 8; ++i) {
    pool.Submit([&] {
      tally.Enter();
      gate.Arrive();
      tally.Leave();
    });
  }
  gate.WaitArrived(8);
  ASSERT_EQ(pool.threads(), 8u);
  gate.Open();
  tally.WaitDone(8);
  // One task at a time: the most recently idle thread takes each (or the
  // one before it, while the last is still going idle); the rest idle past
  // the timeout and exit. Woken in turn, each would be busy every eighth
  // task and none would. The time is the pool's idle timeout: real time.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (pool.threads() > 2 && std::chrono::steady_clock::now() < deadline) {
    Latch ran;
    pool.Submit([&] { ran.Set(); });
    ran.Wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_LE(pool.threads(), 2u);
}

TEST(BlockingPoolTest, ScopedBlockingOffAPoolThreadDoesNothing) {
  ScopedBlocking outer;
  ScopedBlocking inner;
  BlockingPool pool(4, std::chrono::seconds(30));
  Latch ran;
  pool.Submit([&] { ran.Set(); });
  ran.Wait();
}

TEST(BlockingPoolTest, WorkATaskDefersRunsInOrderOnItsThreadOnceItReturns) {
  BlockingPool pool(64, std::chrono::seconds(30), /*running_target=*/4, kNoMonitor);
  Mutex mu;
  std::vector<std::string> order;
  std::thread::id task_thread, deferred_thread;
  auto note = [&](std::string what) {
    MutexLock lock(mu);
    order.push_back(std::move(what));
  };
  Latch done;
  pool.Submit([&] {
    task_thread = std::this_thread::get_id();
    std::function<void()> first = [&] {
      note("first");
      std::function<void()> third = [&] {
        note("third");
        done.Set();
      };
      EXPECT_TRUE(pool.TryDefer(third));  // deferred work defers too
    };
    EXPECT_TRUE(pool.TryDefer(first));
    EXPECT_FALSE(first) << "taken";
    pool.SubmitNext([&] {
      deferred_thread = std::this_thread::get_id();
      note("second");
    });
    note("task");
  });
  done.Wait();
  MutexLock lock(mu);
  EXPECT_EQ(order, (std::vector<std::string>{"task", "first", "second", "third"}));
  EXPECT_EQ(deferred_thread, task_thread);
  EXPECT_EQ(pool.threads(), 1u) << "nothing deferred woke or started a thread";
}

TEST(BlockingPoolTest, OnlyAPoolTaskOutsideAWaitDefers) {
  BlockingPool pool(64, std::chrono::seconds(30), /*running_target=*/4, kNoMonitor);
  BlockingPool other(64, std::chrono::seconds(30), /*running_target=*/4, kNoMonitor);
  std::function<void()> work = [] {};
  EXPECT_FALSE(pool.TryDefer(work)) << "off the pool's threads";
  EXPECT_TRUE(work) << "left as it was";
  Latch done;
  bool in_wait = true, other_pool = true;
  pool.Submit([&] {
    std::function<void()> fn = [] {};
    {
      ScopedBlocking blocking;
      in_wait = pool.TryDefer(fn);
    }
    other_pool = other.TryDefer(fn);
    done.Set();
  });
  done.Wait();
  EXPECT_FALSE(in_wait) << "inside a ScopedBlocking";
  EXPECT_FALSE(other_pool) << "on another pool's thread";
}

TEST(BlockingPoolTest, WorkDeferredByATaskThatDeclaresAWaitRunsOnAnotherThread) {
  BlockingPool pool(64, std::chrono::seconds(30), /*running_target=*/1, kNoMonitor);
  Latch ran, task_done;
  std::thread::id task_thread, deferred_thread;
  pool.Submit([&] {
    task_thread = std::this_thread::get_id();
    pool.SubmitNext([&] {
      deferred_thread = std::this_thread::get_id();
      ran.Set();
    });
    // Without the hand-over at the wait, this would wait for itself.
    ScopedBlocking blocking;
    ran.Wait();
    task_done.Set();
  });
  task_done.Wait();
  EXPECT_NE(deferred_thread, task_thread);
}

TEST(BlockingPoolTest, TheMonitorHandsOnWorkDeferredByATaskThatRunsOn) {
  BlockingPool pool(64, std::chrono::seconds(30), /*running_target=*/4,
                    std::chrono::milliseconds(1));
  Latch ran, task_done;
  pool.Submit([&] {
    pool.SubmitNext([&] { ran.Set(); });
    ran.Wait();  // not declared: only the monitor hands the work on
    task_done.Set();
  });
  task_done.Wait();
  EXPECT_GE(pool.threads(), 2u);
}

TEST(PoolTriggerTest, KicksWhileItRunsMakeOneMoreRun) {
  BlockingPool pool(4, std::chrono::seconds(30));
  Gate gate;
  Mutex mu;
  CondVar cv;
  int runs = 0, concurrent = 0, most = 0;
  PoolTrigger trigger(pool, [&] {
    int run;
    {
      MutexLock lock(mu);
      run = ++runs;
      most = std::max(most, ++concurrent);
    }
    if (run == 1) gate.Arrive();
    MutexLock lock(mu);
    --concurrent;
    cv.NotifyAll();
  });
  trigger.Kick();
  gate.WaitArrived(1);  // the first run is under way
  for (int i = 0; i < 10; ++i) trigger.Kick();
  gate.Open();
  {
    MutexLock lock(mu);
    cv.Wait(lock, [&]() REQUIRES(mu) { return runs == 2 && concurrent == 0; });
  }
  trigger.Stop();
  EXPECT_EQ(runs, 2) << "ten kicks during a run make one more run, not ten";
  EXPECT_EQ(most, 1) << "never two runs at once";
  trigger.Kick();
  EXPECT_EQ(runs, 2) << "nothing runs after Stop";
}

TEST(PoolTriggerTest, EachKickWhileIdleRuns) {
  BlockingPool pool(2, std::chrono::seconds(30));
  Mutex mu;
  CondVar cv;
  int runs = 0;
  PoolTrigger trigger(pool, [&] {
    MutexLock lock(mu);
    ++runs;
    cv.NotifyAll();
  });
  for (int want = 1; want <= 3; ++want) {
    trigger.Kick();
    MutexLock lock(mu);
    cv.Wait(lock, [&]() REQUIRES(mu) { return runs >= want; });
  }
  trigger.Stop();
  EXPECT_EQ(runs, 3);
}

}  // namespace
}  // namespace flotilla
