// EventRecorder: writes v1 Events about objects, as client-go's
// tools/record does, so that `kubectl describe` shows what controllers did.
//
// An event names its object (involvedObject: kind, namespace, name, uid,
// apiVersion, resourceVersion), a type ("Normal" or "Warning"), a reason, a
// message and its source component. Events are correlated as client-go's
// EventCorrelator does:
// - Similar events are combined. Once an object has had events of the same
//   (source, type, reason) with kSimilarMessages distinct messages within
//   kSimilarWindow of each other, further ones with yet another message
//   become one event, "(combined from similar events): <latest message>",
//   counted like a repeat. (A federated object written to 1,000 clusters
//   has 9 "CreateInCluster" events naming a cluster and one combined.)
// - Repeats are aggregated: the first occurrence creates an Event (count 1,
//   firstTimestamp = lastTimestamp = now, named "<object>.<hex
//   nanoseconds>" in the object's namespace, "default" for cluster-scoped
//   objects); a repeat of the same (source, object, type, reason, message),
//   or of the same combined event, PATCHes that Event's count,
//   lastTimestamp and message instead, and creates it again (keeping the
//   count) if it was deleted meanwhile.
// The recorder remembers the last kCacheSize distinct events and kinds of
// similar events (LRU), like client-go. client-go's spam filter (25 events
// per object, then one per 5 minutes, the rest dropped) is not done: no
// occurrence is dropped here while the queue has room. What bounds the
// writes instead is that they are made one at a time, and what queued
// meanwhile is written together: repeats of one event queued together are
// one write (count += n), so a burst costs the API server a write per
// distinct event, not per occurrence. A repeat of an event written less
// than kRepeatPace ago is held until that much has passed, and what
// repeats meanwhile joins it: one event is written at most once per
// kRepeatPace (a federated object written to 1,000 clusters patches its
// combined event about once a second, not once per cluster), its count
// exact once the hold ends. Flush writes what is held at once.
//
// Recording never blocks on the API server: events queue (up to
// `max_queued`, the excess dropped and counted) and a thread of the shared
// client pool (base/io.h) writes them while any are queued.
// A failed write is logged and dropped, as an event is best-effort.
//
// Thread-safe. Timestamps come from the injected Clock.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/io.h"
#include "base/json.h"
#include "base/mutex.h"
#include "base/timer.h"
#include "client/client.h"
#include "client/resources.h"

namespace flotilla::runtime {

inline constexpr std::string_view kEventTypeNormal = "Normal";
inline constexpr std::string_view kEventTypeWarning = "Warning";

using client::kEvents;

struct EventSource {
  std::string component;  // e.g. "federated-replicaset-controller"
  std::string host;       // optional
};

struct EventRecorderStats {
  uint64_t created = 0;
  uint64_t patched = 0;
  uint64_t combined = 0;  // occurrences written together with another of the same event
  uint64_t dropped = 0;   // queue full
  uint64_t failed = 0;    // the API write failed
};

// A map of at most `capacity` entries that forgets the least recently used.
template <typename V>
class Lru {
 public:
  explicit Lru(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}
  // The entry for `key`, now the most recently used; nullptr if none.
  V* Find(const std::string& key) {
    auto it = map_.find(key);
    if (it == map_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second.second);
    return &it->second.first;
  }
  // Stores `value` for `key`, the most recently used; returns the entry
  // (capacity_ >= 1, so the entry evicted is never this one).
  V& Put(const std::string& key, V value) {
    if (V* v = Find(key)) {
      *v = std::move(value);
      return *v;
    }
    order_.push_front(key);
    auto it = map_.emplace(key, std::make_pair(std::move(value), order_.begin())).first;
    if (map_.size() > capacity_) {
      map_.erase(order_.back());
      order_.pop_back();
    }
    return it->second.first;
  }
  void Erase(const std::string& key) {
    auto it = map_.find(key);
    if (it == map_.end()) return;
    order_.erase(it->second.second);
    map_.erase(it);
  }

 private:
  size_t capacity_;
  std::list<std::string> order_;  // most recent first
  std::unordered_map<std::string, std::pair<V, std::list<std::string>::iterator>> map_;
};

class EventRecorder {
 public:
  static constexpr size_t kCacheSize = 4096;
  static constexpr size_t kSimilarMessages = 10;
  static constexpr Duration kSimilarWindow = std::chrono::minutes(10);
  static constexpr Duration kRepeatPace = std::chrono::seconds(1);

  EventRecorder(client::Client& client, Clock& clock, EventSource source, size_t max_queued = 1000);
  // Writes what is queued, then stops.
  ~EventRecorder();
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // Records an event about `object` (which has apiVersion, kind and
  // metadata). `type` is kEventTypeNormal or kEventTypeWarning.
  void Event(const json::object& object, std::string_view type, std::string_view reason,
             std::string_view message);

  // Blocks until every event recorded before the call has been written (or
  // has failed), the repeats held for kRepeatPace included.
  void Flush();
  EventRecorderStats Stats() const;

 private:
  struct Pending {
    json::object involved;  // the involvedObject reference
    std::string type, reason, message;
    TimePoint at;
  };
  // One write of an event: the occurrences of one event key in a batch.
  struct Occurrences {
    std::string key;
    Pending last;  // the latest, with the message to write
    TimePoint first_at;
    int64_t count = 0;
  };
  struct Seen {
    std::string name, ns, first_timestamp;
    int64_t count = 0;
    TimePoint written_at;  // the last write of it
  };
  // The distinct messages of similar events, and when the last was seen.
  struct Similar {
    std::vector<std::string> messages;
    TimePoint last;
  };

  // Runs on the shared client pool while events are queued, and when a
  // held repeat is due.
  void WriteQueued();
  // The batch's occurrences by event key, in the order each key first came.
  std::vector<Occurrences> Correlate(std::deque<Pending> batch);
  // Holds `o` when its event was written less than kRepeatPace ago (or a
  // repeat of it is held already); true if so.
  bool Hold(Occurrences& o);
  // Writes the held repeats that are due (all of them when `all`) and arms
  // the timer for the next; returns how many occurrences were written.
  uint64_t WriteHeld(bool all);
  void Write(const Occurrences& o);
  void CreateEvent(const Occurrences& o, Seen seen);
  std::string EventName(const std::string& object_name, TimePoint at);

  client::Client& client_;
  Clock& clock_;
  const EventSource source_;
  const size_t max_queued_;

  mutable Mutex mu_;
  CondVar cv_;
  std::deque<Pending> queue_ GUARDED_BY(mu_);
  uint64_t enqueued_ GUARDED_BY(mu_) = 0;
  uint64_t finished_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;
  bool write_held_ GUARDED_BY(mu_) = false;  // a Flush waits for the held repeats
  EventRecorderStats stats_ GUARDED_BY(mu_);

  // Owned by the running WriteQueued.
  Lru<Seen> seen_{kCacheSize};        // by event key
  Lru<Similar> similar_{kCacheSize};  // by key without the message
  // The repeats held, by event key, each written at its Seen's
  // written_at + kRepeatPace.
  std::unordered_map<std::string, Occurrences> held_;

  // It runs WriteQueued, which uses the members above.
  PoolTrigger writer_{SharedClientPool(), [this] { WriteQueued(); }};
  // Last, so that it is cancelled first: it kicks the writer when the
  // earliest held repeat is due.
  Timer held_due_{clock_, [this] { writer_.Kick(); }};
};

}  // namespace flotilla::runtime
