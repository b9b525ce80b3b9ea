// ParallelFor: runs fn(0) ... fn(n-1) on up to `max_threads` threads and
// returns when every call has returned. Controllers use it to send one
// request to each of many member clusters at once instead of one after
// another. With n <= 1 or max_threads <= 1 everything runs on the calling
// thread. fn must not throw.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace flotilla::runtime {

inline void ParallelFor(size_t n, int max_threads, const std::function<void(size_t)>& fn) {
  size_t threads = std::min<size_t>(n, static_cast<size_t>(std::max(max_threads, 1)));
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next = 0;
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) fn(i);
  };
  std::vector<std::thread> helpers;
  helpers.reserve(threads - 1);
  for (size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  for (std::thread& t : helpers) t.join();
}

}  // namespace flotilla::runtime
