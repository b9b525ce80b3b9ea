#include "base/io.h"

#include <pthread.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>

#include "base/log.h"
#include "base/mutex.h"

namespace flotilla {
namespace {

constexpr size_t kThreadStack = 512 * 1024;

// Starts `fn` on a detached thread with a small stack; false if it could not.
bool SpawnDetached(std::function<void()> fn) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kThreadStack);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  auto* heap_fn = new std::function<void()>(std::move(fn));
  pthread_t tid;
  int rc = pthread_create(
      &tid, &attr,
      [](void* arg) -> void* {
        std::unique_ptr<std::function<void()>> f(static_cast<std::function<void()>*>(arg));
        (*f)();
        return nullptr;
      },
      heap_fn);
  pthread_attr_destroy(&attr);
  if (rc != 0) delete heap_fn;
  return rc == 0;
}

struct SharedIo {
  SharedIo() : threads(std::max<size_t>(2, std::thread::hardware_concurrency())) {
    for (size_t i = 0; i < threads; ++i) {
      std::thread([this] { io.run(); }).detach();
    }
  }
  boost::asio::io_context io;
  // Keeps run() going while there is no work.
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard{io.get_executor()};
  const size_t threads;
};

// Never destroyed: its threads run until the process exits.
SharedIo& Shared() {
  static SharedIo* shared = new SharedIo();
  return *shared;
}

}  // namespace

boost::asio::io_context& SharedIoContext() { return Shared().io; }
size_t SharedIoThreads() { return Shared().threads; }

void ExitProcess(int code) {
  spdlog::apply_all([](const std::shared_ptr<spdlog::logger>& logger) { logger->flush(); });
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(code);
}

namespace {
// The pool whose thread this is, and how deep its ScopedBlocking nest.
thread_local BlockingPool* tls_pool = nullptr;
thread_local int tls_blocking_depth = 0;
}  // namespace

thread_local BlockingPool::Deferred* BlockingPool::tls_deferred_ = nullptr;

size_t BlockingPool::DefaultRunningTarget() {
  return std::max<size_t>(4, 2 * std::thread::hardware_concurrency());
}

BlockingPool::BlockingPool(size_t max_threads, std::chrono::milliseconds idle_timeout,
                           size_t running_target, std::chrono::milliseconds starvation_check)
    : max_threads_(std::max<size_t>(1, max_threads)),
      idle_timeout_(idle_timeout),
      running_target_(std::max<size_t>(1, running_target)),
      starvation_check_(starvation_check) {}

BlockingPool::~BlockingPool() {
  MutexLock lock(mu_);
  closing_ = true;
  queue_.clear();
  for (Idle* idle : idle_) idle->cv.NotifyOne();
  monitor_cv_.NotifyAll();
  exited_.Wait(lock, [&]() REQUIRES(mu_) { return threads_ == 0; });
  lock.Unlock();
  if (monitor_.joinable()) monitor_.join();
}

void BlockingPool::Submit(std::function<void()> work) {
  MutexLock lock(mu_);
  if (closing_) return;
  queue_.push_back(std::move(work));
  if (running_ < running_target_) {
    DispatchLocked();
    return;
  }
  // It waits for a running thread: the monitor watches that one finishes.
  if (!monitor_.joinable()) {
    monitor_ = std::thread([this] { Monitor(); });
  } else if (monitor_asleep_) {
    monitor_asleep_ = false;
    monitor_cv_.NotifyOne();
  }
}

void BlockingPool::DispatchLocked() {
  if (!idle_.empty()) {
    Idle* idle = idle_.back();
    idle_.pop_back();
    idle->woken = true;
    ++running_;  // from now: a burst wakes no more threads than it needs
    idle->cv.NotifyOne();
    return;
  }
  if (threads_ >= max_threads_) return;
  if (SpawnDetached([this] { Work(); })) {
    ++threads_;
    ++running_;
  } else if (threads_ == 0) {
    spdlog::error("cannot start a thread for blocking work; it waits");
  }
}

bool BlockingPool::TryDefer(std::function<void()>& work) {
  if (tls_pool != this || tls_deferred_ == nullptr || tls_blocking_depth > 0) return false;
  Deferred& mine = *tls_deferred_;
  MutexLock lock(mu_);
  if (closing_) return true;  // dropped, as queued work is
  if (mine.work.empty()) mine.since_tick = ticks_;
  mine.work.push_back(std::move(work));
  ++defers_;
  if (!monitor_.joinable()) {
    monitor_ = std::thread([this] { Monitor(); });
  } else if (monitor_asleep_) {
    monitor_asleep_ = false;
    monitor_cv_.NotifyOne();
  }
  return true;
}

void BlockingPool::SubmitNext(std::function<void()> work) {
  if (!TryDefer(work)) Submit(std::move(work));
}

size_t BlockingPool::ReleaseLocked(Deferred& d) {
  size_t n = d.work.size();
  for (auto& work : d.work) queue_.push_back(std::move(work));
  d.work.clear();
  return n;
}

size_t BlockingPool::threads() const {
  MutexLock lock(mu_);
  return threads_;
}

void BlockingPool::Work() {
  tls_pool = this;
  Deferred mine;
  MutexLock lock(mu_);
  deferred_.push_back(&mine);
  while (!closing_) {
    if (queue_.empty()) {
      --running_;
      Idle self;
      idle_.push_back(&self);
      self.cv.WaitFor(lock, idle_timeout_, [&]() REQUIRES(mu_) { return self.woken || closing_; });
      if (!self.woken) {  // timed out, or closing
        idle_.erase(std::find(idle_.begin(), idle_.end(), &self));
        break;
      }
      if (closing_) break;
      // Another thread may have taken the work this wake was for.
      if (queue_.empty()) continue;
    }
    auto work = std::move(queue_.front());
    queue_.pop_front();
    ++started_;
    lock.Unlock();
    tls_deferred_ = &mine;
    work();
    work = nullptr;
    lock.Lock();
    // What it deferred, in order, each item free to defer more.
    while (!mine.work.empty() && !closing_) {
      work = std::move(mine.work.front());
      mine.work.pop_front();
      lock.Unlock();
      work();
      work = nullptr;
      lock.Lock();
    }
    tls_deferred_ = nullptr;
  }
  deferred_.erase(std::find(deferred_.begin(), deferred_.end(), &mine));
  --threads_;
  exited_.NotifyAll();
  tls_pool = nullptr;
}

void BlockingPool::Monitor() {
  MutexLock lock(mu_);
  uint64_t seen = started_;
  uint64_t defers = defers_;
  auto deferring = [&]() REQUIRES(mu_) {
    return defers_ != defers || std::any_of(deferred_.begin(), deferred_.end(),
                                            [](const Deferred* d) { return !d->work.empty(); });
  };
  while (!closing_) {
    if (queue_.empty() && !deferring()) {
      monitor_asleep_ = true;
      monitor_cv_.Wait(lock, [&]() REQUIRES(mu_) { return closing_ || !monitor_asleep_; });
      seen = started_;
      defers = defers_;
      continue;
    }
    defers = defers_;
    monitor_cv_.WaitFor(lock, starvation_check_, [&]() REQUIRES(mu_) { return closing_; });
    if (closing_) break;
    ++ticks_;
    // Deferred a whole tick ago, and its thread still runs on: the pool's.
    for (Deferred* d : deferred_) {
      if (d->work.empty() || d->since_tick + 2 > ticks_) continue;
      for (size_t n = ReleaseLocked(*d); n > 0 && running_ < running_target_; --n) {
        DispatchLocked();
      }
    }
    // Queued work and none started: whatever runs waits without saying so.
    if (!queue_.empty() && started_ == seen) DispatchLocked();
    seen = started_;
  }
}

void BlockingPool::EnterBlocking() {
  MutexLock lock(mu_);
  --running_;
  // What this thread deferred would wait for the wait to end: the pool's.
  size_t released = tls_deferred_ ? ReleaseLocked(*tls_deferred_) : 0;
  for (size_t n = std::max<size_t>(1, released); n > 0 && !queue_.empty(); --n) {
    if (running_ >= running_target_) break;
    DispatchLocked();
  }
}

void BlockingPool::LeaveBlocking() {
  MutexLock lock(mu_);
  ++running_;
}

ScopedBlocking::ScopedBlocking() {
  if (tls_pool == nullptr || tls_blocking_depth++ > 0) return;
  pool_ = tls_pool;
  pool_->EnterBlocking();
}

ScopedBlocking::~ScopedBlocking() {
  if (tls_pool == nullptr) return;
  --tls_blocking_depth;
  if (pool_ != nullptr) pool_->LeaveBlocking();
}

PoolTrigger::PoolTrigger(BlockingPool& pool, std::function<void()> fn)
    : pool_(pool), fn_(std::move(fn)) {}

PoolTrigger::~PoolTrigger() { Stop(); }

void PoolTrigger::Kick() {
  MutexLock lock(mu_);
  if (stopped_) return;
  if (posted_) {
    again_ = true;
    return;
  }
  posted_ = true;
  pool_.SubmitNext([this] { Run(); });
}

void PoolTrigger::Stop() {
  MutexLock lock(mu_);
  stopped_ = true;
  if (runner_ == std::this_thread::get_id()) return;
  ScopedBlocking blocking;
  idle_cv_.Wait(lock, [&]() REQUIRES(mu_) { return !posted_; });
}

void PoolTrigger::Run() {
  MutexLock lock(mu_);
  runner_ = std::this_thread::get_id();
  do {
    again_ = false;
    if (stopped_) break;
    lock.Unlock();
    fn_();
    lock.Lock();
  } while (again_);
  posted_ = false;
  runner_ = std::thread::id();
  idle_cv_.NotifyAll();  // under mu_: the owner may destroy this once it is released
}

BlockingPool& SharedBlockingPool() {
  static BlockingPool* pool = new BlockingPool(256, std::chrono::seconds(30));
  return *pool;
}

BlockingPool& SharedClientPool() {
  static BlockingPool* pool = new BlockingPool(256, std::chrono::seconds(30));
  return *pool;
}

}  // namespace flotilla
