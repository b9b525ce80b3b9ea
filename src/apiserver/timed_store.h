// A Store decorator that records each operation's latency in Metrics
// (flotilla_storage_operation_duration_seconds by operation).
#pragma once

#include <chrono>

#include "apiserver/metrics.h"
#include "storage/store.h"

namespace flotilla::apiserver {

class TimedStore : public storage::Store {
 private:
  template <typename Fn>
  auto Timed(const char* op, Fn&& fn) {
    auto start = std::chrono::steady_clock::now();
    auto result = fn();
    metrics_.ObserveStorage(
        op, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return result;
  }

 public:
  // `inner` and `metrics` must outlive this.
  TimedStore(storage::Store& inner, Metrics& metrics) : inner_(inner), metrics_(metrics) {}

  StatusOr<storage::KeyValue> Get(std::string_view key) override {
    return Timed("get", [&] { return inner_.Get(key); });
  }
  StatusOr<storage::ListResult> List(std::string_view prefix,
                                     const storage::ListOptions& opts) override {
    return Timed("list", [&] { return inner_.List(prefix, opts); });
  }
  using storage::Store::Create;
  StatusOr<storage::KeyValue> Create(std::string_view key, const storage::Mutation& mutation,
                                     Duration ttl) override {
    return Timed("create", [&] { return inner_.Create(key, mutation, ttl); });
  }
  using storage::Store::Update;
  StatusOr<storage::KeyValue> Update(std::string_view key, int64_t expected,
                                     const storage::Mutation& mutation, Duration ttl) override {
    return Timed("update", [&] { return inner_.Update(key, expected, mutation, ttl); });
  }
  StatusOr<storage::KeyValue> Delete(std::string_view key, int64_t expected) override {
    return Timed("delete", [&] { return inner_.Delete(key, expected); });
  }
  StatusOr<std::unique_ptr<storage::Watcher>> Watch(std::string_view prefix, int64_t after,
                                                    storage::WatchCallback cb) override {
    return inner_.Watch(prefix, after, std::move(cb));
  }
  int64_t CurrentRevision() override { return inner_.CurrentRevision(); }
  Status Compact(int64_t revision) override { return inner_.Compact(revision); }
  int64_t CompactedRevision() override { return inner_.CompactedRevision(); }
  StatusOr<int64_t> Count(std::string_view prefix) override { return inner_.Count(prefix); }
  StatusOr<std::unique_ptr<storage::Watcher>> WatchWithObjects(
      std::string_view prefix, int64_t after_revision, storage::WatchCallback callback) override {
    return inner_.WatchWithObjects(prefix, after_revision, std::move(callback));
  }
  bool SharesObjects(std::string_view key) override { return inner_.SharesObjects(key); }

 private:
  storage::Store& inner_;
  Metrics& metrics_;
};

}  // namespace flotilla::apiserver
