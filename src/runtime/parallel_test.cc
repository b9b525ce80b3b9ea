#include "runtime/parallel.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "base/mutex.h"

namespace flotilla::runtime {
namespace {

TEST(ParallelForTest, CallsEveryIndexOnceOnAtMostMaxThreads) {
  for (int max_threads : {0, 1, 4, 64}) {
    std::vector<std::atomic<int>> calls(50);
    Mutex mu;
    std::set<std::thread::id> threads;
    ParallelFor(calls.size(), max_threads, [&](size_t i) {
      ++calls[i];
      MutexLock lock(mu);
      threads.insert(std::this_thread::get_id());
    });
    for (const auto& c : calls) EXPECT_EQ(c, 1);
    EXPECT_LE(threads.size(), static_cast<size_t>(std::max(max_threads, 1)));
  }
  ParallelFor(0, 8, [](size_t) { FAIL(); });
}

TEST(WorkPoolTest, CallsEveryIndexOnceOnThePoolAndTheCaller) {
  WorkPool pool(3);
  std::vector<std::atomic<int>> calls(200);
  Mutex mu;
  std::set<std::thread::id> threads;
  pool.ParallelFor(calls.size(), [&](size_t i) {
    ++calls[i];
    MutexLock lock(mu);
    threads.insert(std::this_thread::get_id());
  });
  for (const auto& c : calls) EXPECT_EQ(c, 1);
  EXPECT_LE(threads.size(), 4u);  // three pool threads and the caller
  pool.ParallelFor(0, [](size_t) { FAIL(); });
}

TEST(WorkPoolTest, NestedAndConcurrentBatchesFinishWhenThePoolIsBusy) {
  WorkPool pool(2);
  std::atomic<int> total = 0;
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      pool.ParallelFor(8, [&](size_t) {
        // Every pool thread may be taken by an outer batch: the inner one
        // still finishes on the thread that asked for it.
        pool.ParallelFor(4, [&](size_t) { ++total; });
      });
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(total, 4 * 8 * 4);
}

}  // namespace
}  // namespace flotilla::runtime
