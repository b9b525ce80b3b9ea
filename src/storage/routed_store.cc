// The routed store (routed_store.h).
#include "storage/routed_store.h"

#include <utility>

namespace flotilla::storage {
namespace {

class RoutedStore final : public Store {
 public:
  RoutedStore(std::unique_ptr<Store> main, std::string prefix, std::shared_ptr<Store> side)
      : main_(std::move(main)), prefix_(std::move(prefix)), side_(std::move(side)) {}

  StatusOr<KeyValue> Get(std::string_view key) override { return For(key).Get(key); }
  StatusOr<ListResult> List(std::string_view prefix, const ListOptions& opts) override {
    return For(prefix).List(prefix, opts);
  }
  using Store::Create;
  StatusOr<KeyValue> Create(std::string_view key, const Mutation& mutation, Duration ttl) override {
    return For(key).Create(key, mutation, ttl);
  }
  using Store::Update;
  StatusOr<KeyValue> Update(std::string_view key, int64_t expected_mod_revision,
                            const Mutation& mutation, Duration ttl) override {
    return For(key).Update(key, expected_mod_revision, mutation, ttl);
  }
  StatusOr<KeyValue> Delete(std::string_view key, int64_t expected_mod_revision) override {
    return For(key).Delete(key, expected_mod_revision);
  }
  StatusOr<std::unique_ptr<Watcher>> Watch(std::string_view prefix, int64_t after_revision,
                                           WatchCallback callback) override {
    return For(prefix).Watch(prefix, after_revision, std::move(callback));
  }
  int64_t CurrentRevision() override { return main_->CurrentRevision(); }
  Status Compact(int64_t revision) override { return main_->Compact(revision); }
  int64_t CompactedRevision() override { return main_->CompactedRevision(); }
  StatusOr<int64_t> Count(std::string_view prefix) override { return For(prefix).Count(prefix); }
  StatusOr<std::unique_ptr<Watcher>> WatchWithObjects(std::string_view prefix,
                                                      int64_t after_revision,
                                                      WatchCallback callback) override {
    return For(prefix).WatchWithObjects(prefix, after_revision, std::move(callback));
  }
  bool SharesObjects(std::string_view key) override { return For(key).SharesObjects(key); }

 private:
  Store& For(std::string_view key) const {
    return key.substr(0, prefix_.size()) == prefix_ ? *side_ : *main_;
  }

  const std::unique_ptr<Store> main_;
  const std::string prefix_;
  const std::shared_ptr<Store> side_;
};

}  // namespace

std::unique_ptr<Store> NewRoutedStore(std::unique_ptr<Store> main, std::string prefix,
                                      std::shared_ptr<Store> side) {
  return std::make_unique<RoutedStore>(std::move(main), std::move(prefix), std::move(side));
}

}  // namespace flotilla::storage
