#include "runtime/event_recorder.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <utility>

#include "base/io.h"
#include "base/log.h"
#include "base/mutex.h"

namespace flotilla::runtime {
namespace {

// An ObjectReference to `obj`, with the fields it has.
json::object Reference(const json::object& obj) {
  json::object ref;
  auto put = [&](const char* key, std::string value) {
    if (!value.empty()) ref[key] = std::move(value);
  };
  put("kind", StringAt(obj, "kind"));
  put("namespace", StringAt(obj, "metadata.namespace"));
  put("name", StringAt(obj, "metadata.name"));
  put("uid", StringAt(obj, "metadata.uid"));
  put("apiVersion", StringAt(obj, "apiVersion"));
  put("resourceVersion", StringAt(obj, "metadata.resourceVersion"));
  return ref;
}

}  // namespace

EventRecorder::EventRecorder(client::Client& client, Clock& clock, EventSource source,
                             size_t max_queued)
    : client_(client), clock_(clock), source_(std::move(source)), max_queued_(max_queued) {}

EventRecorder::~EventRecorder() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  Flush();
  writer_.Stop();
}

void EventRecorder::Event(const json::object& object, std::string_view type,
                          std::string_view reason, std::string_view message) {
  Pending p{Reference(object), std::string(type), std::string(reason), std::string(message),
            clock_.Now()};
  MutexLock lock(mu_);
  if (stopping_) return;
  if (queue_.size() >= max_queued_) {
    ++stats_.dropped;
    spdlog::warn("event recorder: queue full, dropping {} event on {}", p.reason,
                 StringAt(p.involved, "name"));
    return;
  }
  queue_.push_back(std::move(p));
  ++enqueued_;
  writer_.Kick();
}

void EventRecorder::Flush() {
  MutexLock lock(mu_);
  uint64_t target = enqueued_;
  if (finished_ < target) {
    write_held_ = true;
    writer_.Kick();
  }
  ScopedBlocking blocking;
  cv_.Wait(lock, [&]() REQUIRES(mu_) { return finished_ >= target; });
}

EventRecorderStats EventRecorder::Stats() const {
  MutexLock lock(mu_);
  return stats_;
}

void EventRecorder::WriteQueued() {
  MutexLock lock(mu_);
  for (;;) {
    bool all = std::exchange(write_held_, false);
    std::deque<Pending> batch;
    batch.swap(queue_);
    lock.Unlock();
    uint64_t written = 0;
    for (Occurrences& o : Correlate(std::move(batch))) {
      if (Hold(o)) continue;
      Write(o);
      written += o.count;
    }
    written += WriteHeld(all);
    lock.Lock();
    finished_ += written;
    cv_.NotifyAll();
    if (queue_.empty() && !write_held_) return;
  }
}

bool EventRecorder::Hold(Occurrences& o) {
  if (auto held = held_.find(o.key); held != held_.end()) {
    held->second.count += o.count;
    held->second.last = std::move(o.last);
    return true;
  }
  const Seen* seen = seen_.Find(o.key);
  if (seen == nullptr || clock_.Now() - seen->written_at >= kRepeatPace) return false;
  held_.emplace(o.key, std::move(o));
  return true;
}

uint64_t EventRecorder::WriteHeld(bool all) {
  uint64_t written = 0;
  TimePoint now = clock_.Now();
  TimePoint next = TimePoint::max();
  for (auto it = held_.begin(); it != held_.end();) {
    const Seen* seen = seen_.Find(it->first);
    TimePoint due = seen != nullptr ? seen->written_at + kRepeatPace : now;
    if (!all && due > now) {
      next = std::min(next, due);
      ++it;
      continue;
    }
    Write(it->second);
    written += it->second.count;
    it = held_.erase(it);
  }
  if (next != TimePoint::max()) held_due_.ArmAt(next);
  return written;
}

std::vector<EventRecorder::Occurrences> EventRecorder::Correlate(std::deque<Pending> batch) {
  std::vector<Occurrences> out;
  std::unordered_map<std::string, size_t> index;  // event key -> out
  for (Pending& p : batch) {
    const json::object& ref = p.involved;
    std::string key;
    for (const std::string& part :
         {source_.component, source_.host, StringAt(ref, "kind"), StringAt(ref, "namespace"),
          StringAt(ref, "name"), StringAt(ref, "uid"), StringAt(ref, "apiVersion"), p.type,
          p.reason}) {
      key.append(part).push_back('\x1f');
    }
    // Similar events: the same but for the message.
    Similar* similar = similar_.Find(key);
    if (similar == nullptr || p.at - similar->last > kSimilarWindow) {
      similar = &similar_.Put(key, Similar{{}, p.at});
    }
    similar->last = p.at;
    auto& messages = similar->messages;
    if (std::find(messages.begin(), messages.end(), p.message) == messages.end()) {
      messages.push_back(p.message);
    }
    if (messages.size() >= kSimilarMessages) {
      messages.erase(messages.begin());  // keeps the set below the threshold
      p.message = "(combined from similar events): " + p.message;
      key.push_back('\x1e');  // the combined event's key: no message
    } else {
      key.append(p.message).push_back('\x1f');
    }
    auto [it, first] = index.emplace(key, out.size());
    if (first) out.push_back(Occurrences{key, {}, p.at, 0});
    Occurrences& o = out[it->second];
    o.last = std::move(p);
    ++o.count;
  }
  return out;
}

void EventRecorder::Write(const Occurrences& o) {
  if (o.count > 1) {
    MutexLock lock(mu_);
    stats_.combined += o.count - 1;
  }
  Seen* found = seen_.Find(o.key);
  if (found == nullptr) {
    std::string ns = StringAt(o.last.involved, "namespace");
    CreateEvent(o, Seen{EventName(StringAt(o.last.involved, "name"), o.first_at),
                        ns.empty() ? "default" : ns, FormatRfc3339(o.first_at), o.count});
    return;
  }
  Seen seen = *found;
  seen.count += o.count;
  json::object patch{{"count", seen.count},
                     {"lastTimestamp", FormatRfc3339(o.last.at)},
                     {"message", o.last.message}};
  auto patched =
      client_.Patch(kEvents, seen.ns, seen.name, client::PatchType::kMerge, ToJson(patch));
  if (patched.ok()) {
    seen.written_at = clock_.Now();
    seen_.Put(o.key, std::move(seen));
    MutexLock lock(mu_);
    ++stats_.patched;
    return;
  }
  if (patched.status().Is(Reason::kNotFound)) {
    CreateEvent(o, std::move(seen));  // deleted meanwhile
    return;
  }
  spdlog::warn("event recorder: updating event {}/{}: {}", seen.ns, seen.name,
               patched.status().ToString());
  MutexLock lock(mu_);
  ++stats_.failed;
}

void EventRecorder::CreateEvent(const Occurrences& o, Seen seen) {
  const Pending& p = o.last;
  json::object source{{"component", source_.component}};
  if (!source_.host.empty()) source["host"] = source_.host;
  json::object event{{"apiVersion", "v1"},
                     {"kind", "Event"},
                     {"metadata", {{"name", seen.name}, {"namespace", seen.ns}}},
                     {"involvedObject", p.involved},
                     {"reason", p.reason},
                     {"message", p.message},
                     {"source", std::move(source)},
                     {"firstTimestamp", seen.first_timestamp},
                     {"lastTimestamp", FormatRfc3339(p.at)},
                     {"count", seen.count},
                     {"type", p.type}};
  auto created = client_.Create(kEvents, seen.ns, event);
  if (!created.ok() && created.status().Is(Reason::kAlreadyExists) && seen.count == o.count) {
    // Another recorder picked the same name in the same nanosecond.
    seen.name = EventName(StringAt(p.involved, "name"), o.first_at);
    event["metadata"].as_object()["name"] = seen.name;
    created = client_.Create(kEvents, seen.ns, event);
  }
  if (!created.ok()) {
    spdlog::warn("event recorder: creating event {}/{}: {}", seen.ns, seen.name,
                 created.status().ToString());
    MutexLock lock(mu_);
    ++stats_.failed;
    return;
  }
  seen.written_at = clock_.Now();
  seen_.Put(o.key, std::move(seen));
  MutexLock lock(mu_);
  ++stats_.created;
}

// "<object name>.<hex nanoseconds>", as client-go names events, kept
// unique within the process (every recorder in it) when the clock has not
// moved: the controllers of one process share an API server and often a
// clock.
std::string EventRecorder::EventName(const std::string& object_name, TimePoint at) {
  static std::atomic<int64_t> last_nanos{0};
  int64_t nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
  int64_t last = last_nanos.load();
  do {
    nanos = std::max(nanos, last + 1);
  } while (!last_nanos.compare_exchange_weak(last, nanos));
  char hex[32];
  std::snprintf(hex, sizeof(hex), "%llx", static_cast<unsigned long long>(nanos));
  return object_name + "." + hex;
}

}  // namespace flotilla::runtime
