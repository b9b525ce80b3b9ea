// EventRecorder: writes v1 Events about objects, as client-go's
// tools/record does, so that `kubectl describe` shows what controllers did.
//
// An event names its object (involvedObject: kind, namespace, name, uid,
// apiVersion, resourceVersion), a type ("Normal" or "Warning"), a reason, a
// message and its source component. Repeats are aggregated as client-go's
// EventCorrelator does for identical events: the first occurrence creates an
// Event (count 1, firstTimestamp = lastTimestamp = now, named
// "<object>.<hex nanoseconds>" in the object's namespace, "default" for
// cluster-scoped objects); a repeat of the same (source, object, type,
// reason, message) PATCHes that Event's count and lastTimestamp instead, and
// creates it again (keeping the count) if it was deleted meanwhile. The
// recorder remembers the last 4096 distinct events (LRU), like client-go.
// (client-go's spam filter and its merging of similar events with different
// messages are not done.)
//
// Recording never blocks on the API server: events queue (up to
// `max_queued`, the excess dropped and counted) and a thread of the shared
// client pool (base/io.h) writes them, one at a time, while any are queued.
// A failed write is logged and dropped, as an event is best-effort.
//
// Thread-safe. Timestamps come from the injected Clock.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/clock.h"
#include "base/io.h"
#include "base/json.h"
#include "client/client.h"

namespace flotilla::runtime {

inline constexpr std::string_view kEventTypeNormal = "Normal";
inline constexpr std::string_view kEventTypeWarning = "Warning";

inline const client::ResourceRef kEvents{"", "v1", "events", true};

struct EventSource {
  std::string component;  // e.g. "federated-replicaset-controller"
  std::string host;       // optional
};

struct EventRecorderStats {
  uint64_t created = 0;
  uint64_t patched = 0;
  uint64_t dropped = 0;  // queue full
  uint64_t failed = 0;   // the API write failed
};

class EventRecorder {
 public:
  static constexpr size_t kCacheSize = 4096;

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
  // has failed).
  void Flush();
  EventRecorderStats Stats() const;

 private:
  struct Pending {
    json::object involved;  // the involvedObject reference
    std::string type, reason, message;
    TimePoint at;
  };
  struct Seen {
    std::string name, ns, first_timestamp;
    int64_t count = 0;
    std::list<std::string>::iterator lru;
  };

  // Runs on the shared client pool while events are queued.
  void WriteQueued();
  void Write(const Pending& p);
  bool CreateEvent(const Pending& p, const std::string& key, Seen seen);
  std::string EventName(const std::string& object_name, TimePoint at);
  void Remember(const std::string& key, Seen seen);

  client::Client& client_;
  Clock& clock_;
  const EventSource source_;
  const size_t max_queued_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;  // GUARDED_BY(mu_)
  uint64_t enqueued_ = 0;      // GUARDED_BY(mu_)
  uint64_t finished_ = 0;      // GUARDED_BY(mu_)
  bool stopping_ = false;      // GUARDED_BY(mu_)
  EventRecorderStats stats_;   // GUARDED_BY(mu_)

  // Owned by the running WriteQueued.
  std::unordered_map<std::string, Seen> seen_;
  std::list<std::string> lru_;  // most recent first

  // Last: it runs WriteQueued, which uses the members above.
  PoolTrigger writer_{SharedClientPool(), [this] { WriteQueued(); }};
};

}  // namespace flotilla::runtime
