// The process's shared event loop and its pool for blocking work. Servers
// and clients in one process (the 100 simulated clusters of a member
// process included) share them, so that open connections and streams cost
// no thread: only work that runs holds one.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace flotilla {

// An io_context run by one thread per core (at least two), started on first
// use and kept for the life of the process. Handlers on it must not block
// for long: hand blocking work to SharedBlockingPool().
boost::asio::io_context& SharedIoContext();
// How many threads run SharedIoContext().
size_t SharedIoThreads();

// Ends the process with `code` once its output is flushed (stdout, stderr,
// the loggers), without running static destructors or atexit handlers. A
// process that used SharedIoContext() must end this way: its threads never
// stop, and may be closing a connection (a client's pool retires its
// connections when the client goes) while exit() frees what they use,
// OpenSSL's global state and the loggers among it.
[[noreturn]] void ExitProcess(int code);

// Threads for work that may block (a request handler waiting for its group
// commit, a client waiting for a response).
//
// It aims at `running_target` threads running work at once: work that
// arrives while fewer run wakes an idle thread or starts one (up to
// max_threads); otherwise it waits for a running thread to finish. Work
// that waits declares it with a ScopedBlocking, and its thread no longer
// counts as running, so that queued work does not wait behind it (Go's
// hand-off at a system call; ForkJoin's managed blocking). A wait nobody
// declared is caught by a monitor: while work is queued and none was
// started for `starvation_check` (kStarvationCheck), it adds one thread. A
// thread idle for idle_timeout exits. Thread-safe.
//
// Without the target, a burst of CPU-bound work (100 simulated clusters
// reconciling at once) started a thread per task, and the cores spent half
// their time switching between them (docs/benchmarks.md).
class BlockingPool {
 public:
  static constexpr std::chrono::milliseconds kStarvationCheck{10};

  BlockingPool(size_t max_threads, std::chrono::milliseconds idle_timeout,
               size_t running_target = DefaultRunningTarget(),
               std::chrono::milliseconds starvation_check = kStarvationCheck);
  BlockingPool(const BlockingPool&) = delete;
  BlockingPool& operator=(const BlockingPool&) = delete;
  // Waits for the threads to finish what they run; queued work is dropped.
  ~BlockingPool();

  void Submit(std::function<void()> work);
  // Work that a task hands on (a watcher's delivery after a commit, the
  // next stage of a stream): called on one of this pool's threads, outside
  // any ScopedBlocking, `work` runs on the same thread once the task it
  // runs returns, in the order deferred, and wakes no thread; true. A
  // thread that then blocks (ScopedBlocking) first gives what it deferred
  // to the pool, and so does the monitor what waited a whole
  // starvation_check, so a task that runs on does not hold it up for long.
  // Anywhere else: false, and `work` is left as it was.
  bool TryDefer(std::function<void()>& work);
  // TryDefer, or else Submit.
  void SubmitNext(std::function<void()> work);
  size_t threads() const;

  // Twice the cores, at least 4.
  static size_t DefaultRunningTarget();

 private:
  friend class ScopedBlocking;
  void Work();
  void Monitor();
  // Gives queued work a thread: wakes an idle one or starts one.
  void DispatchLocked() REQUIRES(mu_);
  void EnterBlocking();
  void LeaveBlocking();

  const size_t max_threads_;
  const std::chrono::milliseconds idle_timeout_;
  const size_t running_target_;
  const std::chrono::milliseconds starvation_check_;
  // An idle thread, waiting for a wake (on its own stack).
  struct Idle {
    CondVar cv;
    // Under the pool's mu_ (which the analysis cannot name from here).
    bool woken = false;
  };
  // A thread's work deferred to the end of its task (on its stack; under
  // the pool's mu_, as for Idle).
  struct Deferred {
    std::deque<std::function<void()>> work;
    uint64_t since_tick = 0;  // the monitor's tick when `work` last filled
  };
  // Moves `d`'s work to the queue; how many items.
  size_t ReleaseLocked(Deferred& d) REQUIRES(mu_);
  // What the thread's current task deferred (TryDefer); set while a pool
  // thread runs one.
  static thread_local Deferred* tls_deferred_;

  mutable Mutex mu_;
  CondVar exited_;      // a thread exited (the destructor waits)
  CondVar monitor_cv_;  // the monitor waits for queued work
  std::deque<std::function<void()>> queue_ GUARDED_BY(mu_);
  size_t threads_ GUARDED_BY(mu_) = 0;
  size_t running_ GUARDED_BY(mu_) = 0;  // threads not idle and not in a ScopedBlocking
  // Idle threads, the most recently idle last: it is woken first, so that
  // threads a burst started and no longer needed stay idle and time out
  // (a condition variable wakes them in turn and none would).
  std::vector<Idle*> idle_ GUARDED_BY(mu_);
  uint64_t started_ GUARDED_BY(mu_) = 0;             // work items taken off the queue
  std::vector<Deferred*> deferred_ GUARDED_BY(mu_);  // every thread's
  uint64_t defers_ GUARDED_BY(mu_) = 0;              // TryDefer calls that deferred
  uint64_t ticks_ GUARDED_BY(mu_) = 0;               // the monitor's
  bool monitor_asleep_ GUARDED_BY(mu_) = false;      // until work is queued or deferred
  bool closing_ GUARDED_BY(mu_) = false;
  std::thread monitor_;  // started with the first work that has to wait
};

// Declares that the calling thread waits while the object lives (for the
// network, a commit, a timer, another task). On a BlockingPool's thread the
// pool may give queued work another thread meanwhile; elsewhere it does
// nothing. Nested declarations count once. On a pool's thread it costs a
// lock of the pool at either end.
class ScopedBlocking {
 public:
  ScopedBlocking();
  ~ScopedBlocking();
  ScopedBlocking(const ScopedBlocking&) = delete;
  ScopedBlocking& operator=(const ScopedBlocking&) = delete;

 private:
  BlockingPool* pool_ = nullptr;  // the pool told, or null
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
  Mutex mu_;
  CondVar idle_cv_;
  bool posted_ GUARDED_BY(mu_) = false;  // a Run is queued or running
  bool again_ GUARDED_BY(mu_) = false;   // kicked while running
  bool stopped_ GUARDED_BY(mu_) = false;
  std::thread::id runner_ GUARDED_BY(mu_);
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
