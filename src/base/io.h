// The process's shared event loop and its pool for blocking work. Servers
// and clients in one process (the 100 simulated clusters of a member
// process included) share them, so that open connections and streams cost
// no thread: only work that runs holds one.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace flotilla {

// An io_context run by one thread per core (at least two), started on first
// use and kept for the life of the process. Handlers on it must not block
// for long: hand blocking work to SharedBlockingPool().
boost::asio::io_context& SharedIoContext();
// How many threads run SharedIoContext().
size_t SharedIoThreads();

// Threads for work that may block (a request handler waiting for its group
// commit). It grows by one thread whenever work arrives and none is idle, up
// to max_threads (beyond that, work waits its turn), and a thread idle for
// idle_timeout exits. Thread-safe.
class BlockingPool {
 public:
  BlockingPool(size_t max_threads, std::chrono::milliseconds idle_timeout);
  BlockingPool(const BlockingPool&) = delete;
  BlockingPool& operator=(const BlockingPool&) = delete;
  // Waits for the threads to finish what they run; queued work is dropped.
  ~BlockingPool();

  void Submit(std::function<void()> work);
  size_t threads() const;

 private:
  void Work();

  const size_t max_threads_;
  const std::chrono::milliseconds idle_timeout_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // GUARDED_BY(mu_)
  size_t threads_ = 0;                       // GUARDED_BY(mu_)
  size_t idle_ = 0;                          // GUARDED_BY(mu_)
  bool closing_ = false;                     // GUARDED_BY(mu_)
};

// A function run on a pool whenever it is kicked, never twice at once: a
// Kick() while it runs makes it run once more afterwards. It holds no
// thread while idle, in place of a thread that waits for work. Thread-safe.
class PoolTrigger {
 public:
  PoolTrigger(BlockingPool& pool, std::function<void()> fn);
  // Stop().
  ~PoolTrigger();
  PoolTrigger(const PoolTrigger&) = delete;
  PoolTrigger& operator=(const PoolTrigger&) = delete;

  void Kick();
  // Waits for a run in progress (unless called from it); later kicks do
  // nothing. Idempotent.
  void Stop();

 private:
  void Run();

  BlockingPool& pool_;
  const std::function<void()> fn_;
  std::mutex mu_;
  std::condition_variable idle_cv_;
  bool posted_ = false;     // GUARDED_BY(mu_) a Run is queued or running
  bool again_ = false;      // GUARDED_BY(mu_) kicked while running
  bool stopped_ = false;    // GUARDED_BY(mu_)
  std::thread::id runner_;  // GUARDED_BY(mu_)
};

// The process's pool for servers (their request handlers): up to 256
// threads, idle ones exit after 30 s.
BlockingPool& SharedBlockingPool();
// The process's pool for the client side (informers' lists, controllers'
// workers, event writers), sized as the servers' one. It is apart from it
// so that clients waiting on a server of the same process (tests, the
// members of a member process) never hold the threads that server needs to
// answer them.
BlockingPool& SharedClientPool();

}  // namespace flotilla
