#include "runtime/parallel.h"

#include <gtest/gtest.h>

#include <mutex>
#include <set>

namespace flotilla::runtime {
namespace {

TEST(ParallelForTest, CallsEveryIndexOnceOnAtMostMaxThreads) {
  for (int max_threads : {0, 1, 4, 64}) {
    std::vector<std::atomic<int>> calls(50);
    std::mutex mu;
    std::set<std::thread::id> threads;
    ParallelFor(calls.size(), max_threads, [&](size_t i) {
      ++calls[i];
      std::lock_guard lock(mu);
      threads.insert(std::this_thread::get_id());
    });
    for (const auto& c : calls) EXPECT_EQ(c, 1);
    EXPECT_LE(threads.size(), static_cast<size_t>(std::max(max_threads, 1)));
  }
  ParallelFor(0, 8, [](size_t) { FAIL(); });
}

}  // namespace
}  // namespace flotilla::runtime
