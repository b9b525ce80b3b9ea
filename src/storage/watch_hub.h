// Watch fan-out. Every watcher has its own queue of history entries; tasks
// on the process's server pool (base/io.h) drain the queues and call the
// callbacks, one batch at a time per watcher, so that a watcher's events
// arrive in order and a slow callback holds up neither writers (Publish only
// appends to queues) nor other watchers. The hub holds no thread: the 100
// API servers of a member process share the pool.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "storage/record.h"
#include "storage/store.h"

namespace flotilla::storage {

class WatchHub {
 public:
  // Most events handed to one callback invocation.
  static constexpr size_t kMaxBatch = 1000;

  WatchHub() = default;
  // Waits for the deliveries in progress; events still queued are dropped.
  // Watchers may outlive the hub (their Stop() keeps working).
  ~WatchHub();

  WatchHub(const WatchHub&) = delete;
  WatchHub& operator=(const WatchHub&) = delete;

  // Registers a watcher on keys starting with `prefix` that receives
  // `backlog` first, then every published entry with a revision above
  // `after_revision`. REQUIRES: `backlog` is in revision order and matches
  // the prefix; the caller serializes Add with Publish. With `objects`, the
  // watcher reads Event::object (WantsObjects).
  std::unique_ptr<Watcher> Add(std::string prefix, int64_t after_revision, WatchCallback callback,
                               std::vector<HistoryEntry> backlog, bool objects = false);

  // Whether a watcher added with `objects` watches `key` (a stopped one
  // may count until the next Publish forgets it).
  bool WantsObjects(std::string_view key);

  // Queues `entries` (in revision order) for every matching watcher.
  void Publish(std::span<const HistoryEntry> entries);

 private:
  struct Sink;
  class Handle;

  void Deliver(const std::shared_ptr<Sink>& sink);
  // Posts a delivery of `sink` to the pool.
  void ScheduleLocked(std::shared_ptr<Sink> sink) REQUIRES(mu_);

  Mutex mu_;
  CondVar idle_cv_;  // inflight_ reached zero
  std::vector<std::shared_ptr<Sink>> sinks_ GUARDED_BY(mu_);
  // How many of sinks_ want objects: WantsObjects answers most writes
  // without the lock.
  std::atomic<int> object_sinks_{0};
  size_t inflight_ GUARDED_BY(mu_) = 0;  // deliveries posted
  bool closing_ GUARDED_BY(mu_) = false;
};

}  // namespace flotilla::storage
