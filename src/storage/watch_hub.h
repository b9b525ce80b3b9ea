// Watch fan-out. Every watcher has its own queue of history entries; a small
// pool of delivery threads drains the queues and calls the callbacks, one
// batch at a time per watcher, so that a watcher's events arrive in order and
// a slow callback holds up neither writers (Publish only appends to queues)
// nor, unless every delivery thread is busy with a slow one, other watchers.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "storage/record.h"
#include "storage/store.h"

namespace flotilla::storage {

class WatchHub {
 public:
  static constexpr int kDefaultThreads = 4;
  // Most events handed to one callback invocation.
  static constexpr size_t kMaxBatch = 1000;

  explicit WatchHub(int threads = kDefaultThreads);
  // Joins the delivery threads; events still queued are dropped. Watchers may
  // outlive the hub (their Stop() keeps working).
  ~WatchHub();

  WatchHub(const WatchHub&) = delete;
  WatchHub& operator=(const WatchHub&) = delete;

  // Registers a watcher on keys starting with `prefix` that receives
  // `backlog` first, then every published entry with a revision above
  // `after_revision`. REQUIRES: `backlog` is in revision order and matches
  // the prefix; the caller serializes Add with Publish.
  std::unique_ptr<Watcher> Add(std::string prefix, int64_t after_revision, WatchCallback callback,
                               std::vector<HistoryEntry> backlog);

  // Queues `entries` (in revision order) for every matching watcher.
  void Publish(std::span<const HistoryEntry> entries);

 private:
  struct Sink;
  class Handle;

  void Run();
  void Deliver(const std::shared_ptr<Sink>& sink);
  void Schedule(std::shared_ptr<Sink> sink);

  std::mutex mu_;
  std::condition_variable ready_cv_;
  std::vector<std::shared_ptr<Sink>> sinks_;  // GUARDED_BY(mu_)
  std::deque<std::shared_ptr<Sink>> ready_;   // GUARDED_BY(mu_)
  bool closing_ = false;                      // GUARDED_BY(mu_)
  std::vector<std::thread> threads_;
};

}  // namespace flotilla::storage
