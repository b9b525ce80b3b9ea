#include "runtime/work_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "runtime/test_util.h"

namespace flotilla::runtime {
namespace {

using namespace std::chrono_literals;
using testing::Eventually;

TEST(WorkQueueTest, AddedKeysAreHandedOutOnceInOrder) {
  FakeClock clock;
  WorkQueue q(clock);
  q.Add("a");
  q.Add("b");
  q.Add("a");
  EXPECT_EQ(q.Len(), 2u);
  EXPECT_EQ(q.Get(), "a");
  EXPECT_EQ(q.Get(), "b");
  EXPECT_EQ(q.Len(), 0u);
}

TEST(WorkQueueTest, KeyAddedWhileProcessingIsHandedOutAgainAfterDone) {
  FakeClock clock;
  WorkQueue q(clock);
  q.Add("a");
  ASSERT_EQ(q.Get(), "a");
  q.Add("a");
  q.Add("a");
  EXPECT_EQ(q.Len(), 0u) << "a processing key is not handed to a second worker";
  q.Done("a");
  EXPECT_EQ(q.Len(), 1u);
  EXPECT_EQ(q.Get(), "a");
  q.Done("a");
  EXPECT_EQ(q.Len(), 0u);
}

TEST(WorkQueueTest, ShutDownReleasesBlockedGetsAndIgnoresLaterAdds) {
  FakeClock clock;
  WorkQueue q(clock);
  std::vector<std::thread> workers;
  std::atomic<int> released = 0;
  for (int i = 0; i < 3; ++i) {
    workers.emplace_back([&] {
      if (!q.Get().has_value()) ++released;
    });
  }
  q.ShutDown();
  for (auto& w : workers) w.join();
  EXPECT_EQ(released, 3);
  q.Add("a");
  EXPECT_EQ(q.Len(), 0u);
  EXPECT_FALSE(q.Get().has_value());
  EXPECT_TRUE(q.ShuttingDown());
}

// Many producers, several workers: a key is never processed by two workers at
// once, and every add is followed by a processing that saw it.
TEST(WorkQueueTest, ConcurrentProducersAndWorkers) {
  constexpr int kKeys = 20, kProducers = 8, kAddsEach = 2000, kWorkers = 4;
  FakeClock clock;
  WorkQueue q(clock);
  std::array<std::atomic<int>, kKeys> version{};  // bumped before each Add
  std::array<std::atomic<int>, kKeys> seen{};     // version read when processing starts
  std::array<std::atomic<int>, kKeys> in_flight{};
  std::atomic<int> overlaps = 0, processed = 0;
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&] {
      while (auto key = q.Get()) {
        int k = std::stoi(*key);
        if (in_flight[k].fetch_add(1) != 0) ++overlaps;
        seen[k] = version[k].load();
        std::this_thread::yield();
        in_flight[k].fetch_sub(1);
        ++processed;
        q.Done(*key);
      }
    });
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      std::mt19937 rng(p);
      for (int i = 0; i < kAddsEach; ++i) {
        int k = static_cast<int>(rng() % kKeys);
        ++version[k];
        q.Add(std::to_string(k));
      }
    });
  }
  for (auto& p : producers) p.join();
  EXPECT_TRUE(Eventually([&] {
    for (int k = 0; k < kKeys; ++k) {
      if (seen[k] != version[k]) return false;
    }
    WorkQueueStats s = q.Stats();
    return s.depth == 0 && s.processing == 0;
  }));
  q.ShutDown();
  for (auto& w : workers) w.join();
  EXPECT_EQ(overlaps, 0);
  EXPECT_LT(processed, kProducers * kAddsEach) << "adds of a queued key are merged";
}

TEST(WorkQueueTest, AddAfterWaitsOnTheClock) {
  FakeClock clock;
  WorkQueue q(clock);
  q.AddAfter("a", 5s);
  EXPECT_EQ(q.Stats().waiting, 1u);
  clock.Advance(4999ms);
  EXPECT_EQ(q.Len(), 0u);
  clock.Advance(1ms);
  EXPECT_TRUE(Eventually([&] { return q.Len() == 1; }));
  EXPECT_EQ(q.Stats().waiting, 0u);
  EXPECT_EQ(q.Get(), "a");
}

TEST(WorkQueueTest, ShorterDelayReplacesLongerOne) {
  FakeClock clock;
  WorkQueue q(clock);
  q.AddAfter("frs", 60s);
  q.AddAfter("frs", 1s);
  EXPECT_EQ(q.Stats().waiting, 1u);
  clock.Advance(1s);
  EXPECT_TRUE(Eventually([&] { return q.Len() == 1; }));
  EXPECT_EQ(q.Stats().waiting, 0u) << "the 60 s delay was replaced, not kept";
  ASSERT_EQ(q.Get(), "frs");
  q.Done("frs");
  clock.Advance(60s);
  q.AddAfter("other", 1ms);  // a later timer firing proves the timer ran
  clock.Advance(1ms);
  EXPECT_TRUE(Eventually([&] { return q.Len() == 1; }));
  EXPECT_EQ(q.Get(), "other");
}

TEST(WorkQueueTest, LongerDelayDoesNotPostponeShorterOne) {
  FakeClock clock;
  WorkQueue q(clock);
  q.AddAfter("frs", 1s);
  q.AddAfter("frs", 60s);
  EXPECT_EQ(q.Stats().waiting, 1u);
  clock.Advance(1s);
  EXPECT_TRUE(Eventually([&] { return q.Len() == 1; }));
  EXPECT_EQ(q.Stats().waiting, 0u);
}

TEST(WorkQueueTest, EarlierKeyAddedWhileTimerSleepsFiresFirst) {
  FakeClock clock;
  WorkQueue q(clock);
  q.AddAfter("late", 1h);
  q.AddAfter("soon", 2s);
  clock.Advance(2s);
  EXPECT_TRUE(Eventually([&] { return q.Len() == 1; }));
  EXPECT_EQ(q.Get(), "soon");
  EXPECT_EQ(q.Stats().waiting, 1u);
}

TEST(WorkQueueTest, AddCancelsPendingDelay) {
  FakeClock clock;
  WorkQueue q(clock);
  q.AddAfter("a", 10s);
  q.Add("a");
  EXPECT_EQ(q.Len(), 1u);
  EXPECT_EQ(q.Stats().waiting, 0u);
}

TEST(WorkQueueTest, AddRateLimitedBacksOffExponentiallyPerKey) {
  FakeClock clock;
  WorkQueue q(clock);
  q.AddRateLimited("a");  // 5 ms
  EXPECT_EQ(q.NumRequeues("a"), 1);
  clock.Advance(4ms);
  EXPECT_EQ(q.Len(), 0u);
  clock.Advance(1ms);
  EXPECT_TRUE(Eventually([&] { return q.Len() == 1; }));
  ASSERT_EQ(q.Get(), "a");
  q.AddRateLimited("a");  // 10 ms
  q.Done("a");
  clock.Advance(9ms);
  EXPECT_EQ(q.Len(), 0u);
  clock.Advance(1ms);
  EXPECT_TRUE(Eventually([&] { return q.Len() == 1; }));
  EXPECT_EQ(q.NumRequeues("a"), 2);
  EXPECT_EQ(q.NumRequeues("b"), 0);
  q.Forget("a");
  EXPECT_EQ(q.NumRequeues("a"), 0);
  EXPECT_EQ(q.Stats().retries, 2u);
}

TEST(WorkQueueTest, TryGetDoesNotBlockAndOnReadyTellsOfEveryReadyKey) {
  FakeClock clock;
  WorkQueue q(clock);
  std::atomic<int> ready = 0;
  q.SetOnReady([&] { ++ready; });
  EXPECT_EQ(q.TryGet(), std::nullopt);
  q.Add("a");
  q.Add("a");  // merged: not ready twice
  EXPECT_EQ(ready, 1);
  ASSERT_EQ(q.TryGet(), "a");
  q.Add("a");  // dirty while processing: ready again once done
  EXPECT_EQ(ready, 1);
  q.Done("a");
  EXPECT_EQ(ready, 2);
  ASSERT_EQ(q.TryGet(), "a");
  q.Done("a");
  q.AddAfter("b", 1s);
  clock.Advance(1s);
  EXPECT_TRUE(Eventually([&] { return ready == 3; }));
  EXPECT_EQ(q.TryGet(), "b");
}

TEST(WorkQueueTest, QueuesOnOneClockShareItsTimerThread) {
  FakeClock clock;
  std::vector<std::unique_ptr<WorkQueue>> queues;
  for (int i = 0; i < 100; ++i) {
    queues.push_back(std::make_unique<WorkQueue>(clock));
    queues.back()->AddAfter("k", std::chrono::seconds(i + 1));
  }
  EXPECT_EQ(clock.timers().armed(), 100u) << "one timer per queue, all on the clock's service";
  clock.Advance(100s);
  for (auto& q : queues) EXPECT_EQ(q->Get(), "k");
  queues.clear();
  EXPECT_EQ(clock.timers().armed(), 0u);
}

TEST(RateLimiterTest, ExponentialDoublesFromBaseToMax) {
  ExponentialFailureRateLimiter limiter(5ms, 1000s);
  EXPECT_EQ(limiter.When("k"), 5ms);
  EXPECT_EQ(limiter.When("k"), 10ms);
  EXPECT_EQ(limiter.When("k"), 20ms);
  EXPECT_EQ(limiter.When("other"), 5ms);
  for (int i = 0; i < 100; ++i) (void)limiter.When("k");
  EXPECT_EQ(limiter.When("k"), 1000s);
  EXPECT_EQ(limiter.NumRequeues("k"), 104);
  limiter.Forget("k");
  EXPECT_EQ(limiter.When("k"), 5ms);
}

TEST(RateLimiterTest, TokenBucketAllowsBurstThenRate) {
  FakeClock clock;
  TokenBucketRateLimiter limiter(clock, 10, 100);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(limiter.When("k" + std::to_string(i)), 0ms);
  EXPECT_EQ(limiter.When("x"), 100ms);
  EXPECT_EQ(limiter.When("y"), 200ms);
  clock.Advance(1s);  // ten tokens back: the debt of two is paid, eight left
  for (int i = 0; i < 8; ++i) ASSERT_EQ(limiter.When("z"), 0ms);
  EXPECT_EQ(limiter.When("z"), 100ms);
}

TEST(RateLimiterTest, ControllerLimiterIsTheLongerOfBoth) {
  FakeClock clock;
  auto limiter = NewControllerRateLimiter(clock);
  EXPECT_EQ(limiter->When("a"), 5ms);
  for (int i = 0; i < 99; ++i) (void)limiter->When("key" + std::to_string(i));
  // The bucket is empty: a new key waits for a token (100 ms), not 5 ms.
  EXPECT_EQ(limiter->When("fresh"), 100ms);
  EXPECT_EQ(limiter->NumRequeues("a"), 1);
  limiter->Forget("a");
  EXPECT_EQ(limiter->NumRequeues("a"), 0);
}

}  // namespace
}  // namespace flotilla::runtime
