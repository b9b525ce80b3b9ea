// A fixed pool of threads for fan-out batches (parallel.h).
#include "runtime/parallel.h"

#include <memory>

#include "base/io.h"
#include "base/mutex.h"

namespace flotilla::runtime {
namespace {

// One batch: the next index to take and how many calls have returned.
// Shared with the helpers, which may start after the batch is done (they
// then find no index left and never touch fn).
struct Batch {
  size_t n = 0;
  const std::function<void(size_t)>* fn = nullptr;
  std::atomic<size_t> next = 0;
  Mutex mu;
  CondVar cv;
  size_t done GUARDED_BY(mu) = 0;

  void Work() {
    size_t finished = 0;
    for (size_t i = next++; i < n; i = next++) {
      (*fn)(i);
      ++finished;
    }
    if (finished == 0) return;
    MutexLock lock(mu);
    done += finished;
    if (done == n) cv.NotifyAll();
  }
};

}  // namespace

WorkPool::WorkPool(int threads) {
  for (int i = 0; i < std::max(threads, 1); ++i) threads_.emplace_back([this] { Run(); });
}

WorkPool::~WorkPool() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.NotifyAll();
  for (std::thread& t : threads_) t.join();
}

void WorkPool::Run() {
  for (;;) {
    std::function<void()> task;
    {
      MutexLock lock(mu_);
      cv_.Wait(lock, [&]() REQUIRES(mu_) { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

void WorkPool::ParallelFor(size_t n, const std::function<void(size_t)>& fn, int max_helpers) {
  if (n == 0) return;
  auto batch = std::make_shared<Batch>();
  batch->n = n;
  batch->fn = &fn;
  size_t helpers =
      std::min<size_t>({n - 1, threads_.size(), static_cast<size_t>(std::max(max_helpers, 0))});
  if (helpers > 0) {
    {
      MutexLock lock(mu_);
      for (size_t h = 0; h < helpers; ++h) tasks_.push_back([batch] { batch->Work(); });
    }
    if (helpers == 1) {
      cv_.NotifyOne();
    } else {
      cv_.NotifyAll();
    }
  }
  batch->Work();
  MutexLock lock(batch->mu);
  ScopedBlocking blocking;
  batch->cv.Wait(lock, [&]() REQUIRES(batch->mu) { return batch->done == n; });
}

}  // namespace flotilla::runtime
