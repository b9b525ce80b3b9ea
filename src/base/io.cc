#include "base/io.h"

#include <pthread.h>

#include <algorithm>
#include <memory>
#include <thread>

#include "base/log.h"

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

BlockingPool::BlockingPool(size_t max_threads, std::chrono::milliseconds idle_timeout)
    : max_threads_(std::max<size_t>(1, max_threads)), idle_timeout_(idle_timeout) {}

BlockingPool::~BlockingPool() {
  std::unique_lock lock(mu_);
  closing_ = true;
  queue_.clear();
  cv_.notify_all();
  cv_.wait(lock, [&] { return threads_ == 0; });
}

void BlockingPool::Submit(std::function<void()> work) {
  std::lock_guard lock(mu_);
  if (closing_) return;
  queue_.push_back(std::move(work));
  if (idle_ >= queue_.size()) {
    cv_.notify_one();
    return;
  }
  if (threads_ < max_threads_) {
    if (SpawnDetached([this] { Work(); })) {
      ++threads_;
    } else if (threads_ == 0) {
      spdlog::error("cannot start a thread for blocking work; it waits");
    }
  }
}

size_t BlockingPool::threads() const {
  std::lock_guard lock(mu_);
  return threads_;
}

void BlockingPool::Work() {
  std::unique_lock lock(mu_);
  while (true) {
    if (queue_.empty()) {
      ++idle_;
      bool woken = cv_.wait_for(lock, idle_timeout_, [&] { return !queue_.empty() || closing_; });
      --idle_;
      if (!woken || closing_) break;
    }
    auto work = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    work();
    work = nullptr;
    lock.lock();
  }
  --threads_;
  cv_.notify_all();
}

PoolTrigger::PoolTrigger(BlockingPool& pool, std::function<void()> fn)
    : pool_(pool), fn_(std::move(fn)) {}

PoolTrigger::~PoolTrigger() { Stop(); }

void PoolTrigger::Kick() {
  std::lock_guard lock(mu_);
  if (stopped_) return;
  if (posted_) {
    again_ = true;
    return;
  }
  posted_ = true;
  pool_.Submit([this] { Run(); });
}

void PoolTrigger::Stop() {
  std::unique_lock lock(mu_);
  stopped_ = true;
  if (runner_ == std::this_thread::get_id()) return;
  idle_cv_.wait(lock, [&] { return !posted_; });
}

void PoolTrigger::Run() {
  std::unique_lock lock(mu_);
  runner_ = std::this_thread::get_id();
  do {
    again_ = false;
    if (stopped_) break;
    lock.unlock();
    fn_();
    lock.lock();
  } while (again_);
  posted_ = false;
  runner_ = std::thread::id();
  idle_cv_.notify_all();  // under mu_: the owner may destroy this once it is released
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
