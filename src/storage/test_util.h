// Helpers for the storage tests: a temporary directory, a mutation that sets
// a fixed value, and a collector of watch events that tests can wait on.
#pragma once

#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "storage/store.h"

namespace flotilla::storage::testing {

// A fresh directory under $TEST_TMPDIR (or /tmp), removed on destruction.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/flotilla-storage-XXXXXX";
    path_ = mkdtemp(tmpl.data()) ? tmpl : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline Mutation SetValue(std::string value) {
  return [value = std::move(value)](int64_t, const std::optional<KeyValue>&) -> StatusOr<Encoded> {
    return value;
  };
}

// Collects the batches a watcher delivers. Thread-safe.
class EventLog {
 public:
  WatchCallback Callback() {
    return [this](const std::vector<Event>& batch) {
      MutexLock lock(mu_);
      events_.insert(events_.end(), batch.begin(), batch.end());
      ++batches_;
      cv_.NotifyAll();
    };
  }

  // Waits until at least `n` events have arrived, or a generous bound passes
  // so that a broken store fails the test instead of hanging it. Returns all
  // events so far.
  std::vector<Event> WaitFor(size_t n) {
    MutexLock lock(mu_);
    cv_.WaitFor(lock, std::chrono::seconds(60),
                [&]() REQUIRES(mu_) { return events_.size() >= n; });
    return events_;
  }

  std::vector<Event> events() {
    MutexLock lock(mu_);
    return events_;
  }

  size_t batches() {
    MutexLock lock(mu_);
    return batches_;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  std::vector<Event> events_ GUARDED_BY(mu_);
  size_t batches_ GUARDED_BY(mu_) = 0;
};

}  // namespace flotilla::storage::testing
