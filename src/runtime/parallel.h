// Running calls side by side, for controllers that send one request to each
// of many member clusters at once instead of one after another.
//
// ParallelFor(n, max_threads, fn) starts up to `max_threads` threads for one
// batch (for rare batches, such as stopping informers at shutdown). A
// WorkPool keeps a fixed set of threads that every batch of a process
// shares, so that many controllers fanning out at once hold a bounded
// number of threads between them. In both, the calling thread works on its
// own batch too: a batch finishes even when every pool thread is busy, and
// a call from inside a pool task cannot deadlock. fn must not throw.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace flotilla::runtime {

// Runs fn(0) ... fn(n-1) on up to `max_threads` threads (the caller's
// included) and returns when every call has returned. With n <= 1 or
// max_threads <= 1 everything runs on the calling thread.
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

// A fixed pool of threads shared by the batches of many callers.
// Thread-safe.
class WorkPool {
 public:
  explicit WorkPool(int threads);
  // Waits for the tasks already taken, then joins the threads.
  ~WorkPool();
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  // Runs fn(0) ... fn(n-1) on the calling thread and up to `max_helpers`
  // pool threads, and returns when every call has returned.
  void ParallelFor(size_t n, const std::function<void(size_t)>& fn, int max_helpers = 1 << 30);
  int threads() const { return static_cast<int>(threads_.size()); }

 private:
  void Run();

  Mutex mu_;
  CondVar cv_;
  std::deque<std::function<void()>> tasks_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace flotilla::runtime
