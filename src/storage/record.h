// Records and history entries: the in-memory form of stored values and of the
// events between them, shared by the state index, the history and the watch
// queues so that a value is held once however many of them refer to it.
#pragma once

#include <cstdint>
#include <memory>

#include "base/clock.h"
#include "storage/store.h"

namespace flotilla::storage {

// An immutable stored value. Shared; never modified after creation.
using RecordPtr = std::shared_ptr<const KeyValue>;

// One applied write. A put has `kv` (the new value); a delete has a null `kv`
// and its event value is `prev` with mod_revision set to `revision`. `prev` is
// the value before the write, null for a create. A put with a TTL has the
// time its key expires in `expires` (the epoch when it does not expire);
// `applied` is when the state applied it (for the history's time bound).
struct HistoryEntry {
  int64_t revision = 0;
  RecordPtr kv;
  RecordPtr prev;
  TimePoint expires{};
  TimePoint applied{};
  // The put's value parsed, from its writer (Encoded::object), while the
  // entry is on its way to the watchers; the history's copy drops it.
  std::shared_ptr<const json::object> object;

  bool is_delete() const { return kv == nullptr; }
  // The key written. REQUIRES: kv or prev is set.
  const std::string& key() const { return kv ? kv->key : prev->key; }
};

// The Event a watcher receives for `entry`.
Event ToEvent(const HistoryEntry& entry);

}  // namespace flotilla::storage
