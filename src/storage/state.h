// The in-memory half that every Store backend shares: the current state (one
// immutable record per live key, ordered by key), the bounded event history
// and watch registration. Backends decide what a write is (PrepareWrite) and
// when it becomes visible (Apply); the sqlite backend makes it durable first.
//
// Records are shared, immutable KeyValues: the index and the history point at
// the same record, so a create costs one copy of its value however many
// places refer to it, and superseded values live only while the history does.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/btree_set.h"
#include "base/mutex.h"
#include "storage/record.h"
#include "storage/store.h"
#include "storage/watch_hub.h"

namespace flotilla::storage {

// `key` in double quotes, as the backends' error messages name keys.
inline std::string QuotedKey(std::string_view key) { return "\"" + std::string(key) + "\""; }

enum class WriteKind { kCreate, kUpdate, kDelete };

// One write request as the caller gave it. The string_view and the mutation
// must outlive the write.
struct WriteOp {
  WriteKind kind = WriteKind::kCreate;
  std::string_view key;
  int64_t expected_mod_revision = 0;   // kUpdate, kDelete; 0 = unconditional
  const Mutation* mutation = nullptr;  // kCreate, kUpdate
  TimePoint expires{};                 // kCreate, kUpdate; the epoch: never
};

// When a write with `ttl` made now expires: the epoch (never) for a zero
// TTL.
TimePoint Deadline(Clock& clock, Duration ttl);

// Checks `op`'s precondition against `current` (null when the key does not
// exist): AlreadyExists, NotFound or Conflict, naming the key.
Status CheckPrecondition(const WriteOp& op, const RecordPtr& current);

// Runs `mutation`; one that throws is an InternalError naming the key.
StatusOr<Encoded> RunMutation(const Mutation& mutation, std::string_view key, int64_t revision,
                              const std::optional<KeyValue>& before);

// Checks `op` against `current` (null when the key does not exist) and
// computes the history entry it produces at `revision`, running the mutation.
// Errors: AlreadyExists, NotFound, Conflict naming the key, or the mutation's
// own error as is.
StatusOr<HistoryEntry> PrepareWrite(const WriteOp& op, int64_t revision, const RecordPtr& current);

// The KeyValue a write returns to its caller: the stored value, or for a
// delete the deleted value with mod_revision set to the deletion's revision.
KeyValue ResultOf(const HistoryEntry& entry);

// Thread safety: reads (Find, Get, List, Watch, revision, compacted) may run
// concurrently with everything. Apply and Seed must be serialized by the
// owner (one writer at a time).
class State {
 public:
  // Keeps at most `history_limit` events (at least one) and, with a
  // positive `history_window` and a clock, none applied longer than that
  // ago (as etcd compacted every few minutes keeps no older ones).
  explicit State(int64_t history_limit, Duration history_window = Duration::zero(),
                 Clock* clock = nullptr);

  State(const State&) = delete;
  State& operator=(const State&) = delete;

  // The live record for `key`, or null.
  RecordPtr Find(std::string_view key) const;
  StatusOr<KeyValue> Get(std::string_view key) const;
  ListResult List(std::string_view prefix, const ListOptions& opts) const;
  int64_t Count(std::string_view prefix) const;

  int64_t revision() const;
  int64_t compacted() const;

  // Makes `entries` visible, appends them to the history (compacting the
  // oldest past the limit) and queues them for the matching watchers.
  // REQUIRES: revisions strictly increase and exceed revision().
  void Apply(std::vector<HistoryEntry> entries);

  // Forgets history at or below `revision`. A revision at or below
  // compacted() is a no-op; one past revision() is BadRequest.
  Status Compact(int64_t revision);

  // See Store::Watch; with `objects`, Store::WatchWithObjects.
  StatusOr<std::unique_ptr<Watcher>> Watch(std::string_view prefix, int64_t after_revision,
                                           WatchCallback callback, bool objects = false);
  // See Store::SharesObjects.
  bool SharesObjects(std::string_view key) { return hub_.WantsObjects(key); }

  // Loading, before the state is shared. Start(r) sets both the revision and
  // the compacted revision to r; Seed sets `key` to `kv` (null removes it)
  // without an event, as the state at that compacted revision.
  void Start(int64_t revision);
  void Seed(std::string_view key, RecordPtr kv);

 private:
  // An index slot. Only `kv`'s pointer changes (to a record with the same key),
  // which keeps the set's order, hence `mutable`.
  struct Slot {
    mutable RecordPtr kv;
  };
  struct SlotLess {
    using is_transparent = void;
    static std::string_view KeyOf(const Slot& s) { return s.kv->key; }
    static std::string_view KeyOf(std::string_view k) { return k; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return KeyOf(a) < KeyOf(b);
    }
  };

  void SetLocked(std::string_view key, RecordPtr kv) REQUIRES(mu_);
  void TrimHistoryLocked(int64_t upto) REQUIRES(mu_);
  const size_t history_limit_;
  const Duration history_window_;
  Clock* const clock_;
  mutable SharedMutex mu_;
  absl::btree_set<Slot, SlotLess> index_ GUARDED_BY(mu_);
  std::deque<HistoryEntry> history_ GUARDED_BY(mu_);  // revisions ascending
  int64_t revision_ GUARDED_BY(mu_) = 0;
  int64_t compacted_ GUARDED_BY(mu_) = 0;
  // Publish and Add run under mu_ so that a watch's replay and its live
  // events neither overlap nor leave a gap.
  WatchHub hub_;
};

}  // namespace flotilla::storage
