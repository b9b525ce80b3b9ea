// The Store: a revisioned key-value store with watch (DESIGN §4).
//
// One global revision counter orders every write; an object's resourceVersion
// is the revision of its last write (mod_revision). Values are opaque bytes
// (the apiserver stores serialized JSON that already carries the
// resourceVersion, see Mutation). Keys are "/registry/<resource>/<ns>/<name>".
//
// Durability: a write's callback/return happens only once the write is durable
// for the backend (fsync'd for sqlite), and only then is it visible to reads
// and delivered to watchers. Concurrent writers share one commit (group
// commit).
//
// Expiry: a write may give its key a time to live, as an etcd lease does
// (kube-apiserver's --event-ttl). The key is deleted once the TTL has
// passed since the write, unless it was written again first: watchers see
// an ordinary delete at a new revision, lists stop returning it. A later
// write without a TTL takes the expiry away; one with a TTL replaces it.
// The memory and sqlite backends measure the TTL on StoreOptions::clock
// (sqlite keeps the deadline on disk, so it survives restarts); etcd on its
// own clock, through leases.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/json.h"
#include "base/status.h"

namespace flotilla::storage {

struct KeyValue {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
};

// What a mutation stores: the bytes, and, when the writer has it, the
// object they encode.
struct Encoded {
  Encoded(std::string v) : value(std::move(v)) {}  // NOLINT: implicit, a value alone
  Encoded(std::string v, std::shared_ptr<const json::object> o)
      : value(std::move(v)), object(std::move(o)) {}

  std::string value;
  // `value` parsed, never modified: it goes with this write's events
  // (Event::object) so that the watchers in this process need not parse
  // the bytes again, and is never kept in the state or the history.
  std::shared_ptr<const json::object> object;
};

// Computes the value to store given the revision the write will get and the
// current value (nullopt when the key does not exist). Returning an error
// aborts the write with that error; nothing is written. Runs under the
// store's write lock (for sqlite, on the store's commit thread while the
// caller waits): it must be quick and must not write to the store.
using Mutation =
    std::function<StatusOr<Encoded>(int64_t revision, const std::optional<KeyValue>& current)>;

struct ListOptions {
  // Keys strictly greater than this are returned (continue tokens).
  std::string start_after;
  // 0 = no limit.
  int64_t limit = 0;
  // Fill ListResult::shared_items (the stored records themselves, no copy)
  // instead of items.
  bool shared = false;
  // List as of this revision (a continue token's); 0 = the latest. The etcd
  // backend reads etcd at that revision (Expired once it is compacted); the
  // memory and sqlite backends keep no old values and list the latest.
  int64_t revision = 0;
};

struct ListResult {
  std::vector<KeyValue> items;                                // sorted by key
  std::vector<std::shared_ptr<const KeyValue>> shared_items;  // with ListOptions::shared
  int64_t revision = 0;                                       // store revision the list reflects
  bool more = false;                                          // more keys exist past the last item
  // With a limit, how many keys with the prefix follow the last one returned
  // (metadata.remainingItemCount); 0 otherwise.
  int64_t remaining = 0;
};

struct Event {
  enum class Type { kPut, kDelete };
  Type type = Type::kPut;
  // For kPut the new value; for kDelete the deleted value with mod_revision
  // set to the deletion's revision.
  KeyValue kv;
  // The value before this event (absent for a create).
  std::optional<KeyValue> prev;
  // For a kPut delivered as it was written (not replayed from the history,
  // not by etcd), kv.value as its writer's mutation parsed it
  // (Encoded::object); null otherwise. Shared by every watcher of the
  // write: read it, never modify it.
  std::shared_ptr<const json::object> object;
};

// A stream of events for a key prefix. Events arrive in revision order, one
// batch at a time. Destroying a Watcher stops it. A Watcher may outlive its
// Store.
class Watcher {
 public:
  virtual ~Watcher() = default;
  // Stops delivery; after it returns the callback is never called again.
  // From another thread it waits for a callback in progress; from inside the
  // callback it returns at once and no further batch follows. Idempotent.
  virtual void Stop() = 0;
};

using WatchCallback = std::function<void(const std::vector<Event>& batch)>;

class Store {
 public:
  virtual ~Store() = default;

  // NotFound when absent.
  virtual StatusOr<KeyValue> Get(std::string_view key) = 0;

  // All live keys with the prefix, from the current state.
  virtual StatusOr<ListResult> List(std::string_view prefix, const ListOptions& opts) = 0;

  // Creates `key`; AlreadyExists if it exists. Returns the stored KeyValue.
  // A positive `ttl` makes the key expire (see the top of this file).
  virtual StatusOr<KeyValue> Create(std::string_view key, const Mutation& mutation,
                                    Duration ttl) = 0;
  StatusOr<KeyValue> Create(std::string_view key, const Mutation& mutation) {
    return Create(key, mutation, Duration::zero());
  }

  // Replaces `key`'s value. NotFound if absent. If expected_mod_revision is
  // non-zero and differs from the current mod_revision: Conflict. The key
  // expires `ttl` from now when it is positive, never when it is zero.
  virtual StatusOr<KeyValue> Update(std::string_view key, int64_t expected_mod_revision,
                                    const Mutation& mutation, Duration ttl) = 0;
  StatusOr<KeyValue> Update(std::string_view key, int64_t expected_mod_revision,
                            const Mutation& mutation) {
    return Update(key, expected_mod_revision, mutation, Duration::zero());
  }

  // Deletes `key`; NotFound if absent; Conflict on a revision mismatch
  // (0 = unconditional). Returns the deleted KeyValue with mod_revision set to
  // the deletion's revision.
  virtual StatusOr<KeyValue> Delete(std::string_view key, int64_t expected_mod_revision) = 0;

  // Delivers every event on keys with `prefix` after `after_revision` (0 = from
  // now on), in order, batched. Expired (410) if `after_revision` is older than
  // the oldest revision still kept (see Compact). The callback runs on a store
  // thread and must not block for long; it must not call back into the store
  // for writes. A slow callback delays neither writes nor, as a rule, other
  // watchers. Note that an empty store's revision is 0, which here means
  // "from now": a List of an empty store followed by a Watch from its
  // revision can miss a write made in between.
  virtual StatusOr<std::unique_ptr<Watcher>> Watch(std::string_view prefix, int64_t after_revision,
                                                   WatchCallback callback) = 0;

  // The revision of the last durable write (0 for an empty store). Never
  // decreases, also across restarts of a durable backend.
  virtual int64_t CurrentRevision() = 0;

  // Forgets history at or below `revision` (latest values are kept); watches
  // from those revisions then get Expired. A no-op at or below
  // CompactedRevision(); BadRequest past CurrentRevision(). Durable for sqlite.
  virtual Status Compact(int64_t revision) = 0;

  // The oldest revision a Watch may start after.
  virtual int64_t CompactedRevision() = 0;

  // How many live keys have the prefix (apiserver_storage_objects).
  virtual StatusOr<int64_t> Count(std::string_view prefix) = 0;

  // Watch, for a watcher that reads Event::object (a watch in this process
  // whose reader takes the objects as they are): while it watches `key`,
  // SharesObjects(key) is true. By default, Watch.
  virtual StatusOr<std::unique_ptr<Watcher>> WatchWithObjects(std::string_view prefix,
                                                              int64_t after_revision,
                                                              WatchCallback callback) {
    return Watch(prefix, after_revision, std::move(callback));
  }

  // Whether a write to `key` is worth its Encoded::object: the store
  // passes it on with its events (Event::object) and a watcher started
  // with WatchWithObjects watches the key. Otherwise (no such watcher;
  // etcd, whose events come from etcd) a writer need not build one.
  virtual bool SharesObjects(std::string_view key) {
    (void)key;
    return false;
  }
};

struct StoreOptions {
  // Events kept in memory for watch resumption; older history is compacted.
  int64_t history_events = 100000;
  // Nor any older than this (memory and sqlite; etcd's history is bounded by
  // its compaction interval): under steady writes the superseded values the
  // history holds stay bounded in time, not only in number. Zero: no time
  // bound.
  Duration history_window = std::chrono::minutes(5);
  // The clock TTLs are measured on (memory and sqlite); null: the real one.
  Clock* clock = nullptr;
};

std::unique_ptr<Store> NewMemoryStore(const StoreOptions& opts = {});

// Opens (creating if needed) a SQLite-backed store at `path` in WAL mode with
// synchronous=FULL: every acknowledged write survives kill -9 and power loss.
StatusOr<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path,
                                                 const StoreOptions& opts = {});

}  // namespace flotilla::storage
