// The memory backend: the shared State and nothing underneath. A write is
// visible, and acknowledged, as soon as it is applied; nothing survives the
// process. For tests and `--storage memory`.

#include "base/mutex.h"
#include "storage/expiry.h"
#include "storage/state.h"
#include "storage/store.h"

namespace flotilla::storage {
namespace {

class MemoryStore final : public Store {
 public:
  explicit MemoryStore(const StoreOptions& opts)
      : clock_(opts.clock ? *opts.clock : RealClock()),
        state_(opts.history_events, opts.history_window, &clock_),
        expiry_(clock_, [this](const std::vector<Expiry::Due>& due) {
          for (const Expiry::Due& d : due) Delete(d.key, d.mod_revision).status().IgnoreError();
        }) {}

  StatusOr<KeyValue> Get(std::string_view key) override { return state_.Get(key); }

  StatusOr<ListResult> List(std::string_view prefix, const ListOptions& opts) override {
    return state_.List(prefix, opts);
  }

  StatusOr<int64_t> Count(std::string_view prefix) override { return state_.Count(prefix); }
  bool SharesObjects(std::string_view key) override { return state_.SharesObjects(key); }

  using Store::Create;
  StatusOr<KeyValue> Create(std::string_view key, const Mutation& mutation, Duration ttl) override {
    return Write({WriteKind::kCreate, key, 0, &mutation, Deadline(clock_, ttl)});
  }

  using Store::Update;
  StatusOr<KeyValue> Update(std::string_view key, int64_t expected_mod_revision,
                            const Mutation& mutation, Duration ttl) override {
    return Write(
        {WriteKind::kUpdate, key, expected_mod_revision, &mutation, Deadline(clock_, ttl)});
  }

  StatusOr<KeyValue> Delete(std::string_view key, int64_t expected_mod_revision) override {
    return Write({WriteKind::kDelete, key, expected_mod_revision, nullptr});
  }

  StatusOr<std::unique_ptr<Watcher>> Watch(std::string_view prefix, int64_t after_revision,
                                           WatchCallback callback) override {
    return state_.Watch(prefix, after_revision, std::move(callback));
  }
  StatusOr<std::unique_ptr<Watcher>> WatchWithObjects(std::string_view prefix,
                                                      int64_t after_revision,
                                                      WatchCallback callback) override {
    return state_.Watch(prefix, after_revision, std::move(callback), true);
  }

  int64_t CurrentRevision() override { return state_.revision(); }
  Status Compact(int64_t revision) override { return state_.Compact(revision); }
  int64_t CompactedRevision() override { return state_.compacted(); }

 private:
  StatusOr<KeyValue> Write(const WriteOp& op) {
    MutexLock lock(write_mu_);
    StatusOr<HistoryEntry> entry = PrepareWrite(op, state_.revision() + 1, state_.Find(op.key));
    if (!entry.ok()) return entry.status();
    KeyValue result = ResultOf(*entry);
    expiry_.Note(entry->key(), entry->revision, entry->expires, entry->is_delete());
    state_.Apply({std::move(entry).value()});
    return result;
  }

  Clock& clock_;
  // Serializes writes: read current value, prepare, apply.
  Mutex write_mu_;
  State state_;
  Expiry expiry_;  // last: its thread deletes through this store
};

}  // namespace

std::unique_ptr<Store> NewMemoryStore(const StoreOptions& opts) {
  return std::make_unique<MemoryStore>(opts);
}

}  // namespace flotilla::storage
