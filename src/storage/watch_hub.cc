#include "storage/watch_hub.h"

#include <algorithm>
#include <utility>

#include "base/io.h"
#include "base/mutex.h"

namespace flotilla::storage {

// One watcher's queue and delivery state. The callback is called only by the
// delivery thread that set `running`, so one watcher never sees two batches at
// once and its batches keep their order.
struct WatchHub::Sink {
  Sink(std::string p, int64_t after, WatchCallback cb, std::vector<HistoryEntry> backlog,
       bool objects)
      : prefix(std::move(p)),
        after_revision(after),
        wants_objects(objects),
        callback(std::move(cb)),
        queue(std::make_move_iterator(backlog.begin()), std::make_move_iterator(backlog.end())),
        scheduled(!queue.empty()) {}

  const std::string prefix;
  const int64_t after_revision;
  const bool wants_objects;
  Mutex mu;
  CondVar idle;  // signalled when `running` turns false
  // Called only by the thread that set `running`; emptied under mu once
  // stopped and not running. Not GUARDED_BY: `running` guards it.
  WatchCallback callback;
  std::deque<HistoryEntry> queue GUARDED_BY(mu);
  bool scheduled GUARDED_BY(mu) = false;  // in ready_ or being delivered
  bool running GUARDED_BY(mu) = false;    // the callback is executing
  std::thread::id runner GUARDED_BY(mu);  // the thread running it
  bool stopped GUARDED_BY(mu) = false;
};

// The Watcher handed to callers. It holds only its Sink, so it may outlive
// the hub.
class WatchHub::Handle final : public Watcher {
 public:
  explicit Handle(std::shared_ptr<Sink> sink) : sink_(std::move(sink)) {}
  ~Handle() override { Stop(); }

  void Stop() override {
    WatchCallback doomed;  // destroyed after the lock is released
    MutexLock lock(sink_->mu);
    sink_->stopped = true;
    sink_->queue.clear();
    if (sink_->running && sink_->runner == std::this_thread::get_id()) {
      return;  // Called from the callback: Deliver releases it on return.
    }
    ScopedBlocking blocking;
    sink_->idle.Wait(lock, [this]() REQUIRES(sink_->mu) { return !sink_->running; });
    doomed = std::move(sink_->callback);
  }

 private:
  std::shared_ptr<Sink> sink_;
};

WatchHub::~WatchHub() {
  MutexLock lock(mu_);
  closing_ = true;
  ScopedBlocking blocking;
  idle_cv_.Wait(lock, [this]() REQUIRES(mu_) { return inflight_ == 0; });
}

std::unique_ptr<Watcher> WatchHub::Add(std::string prefix, int64_t after_revision,
                                       WatchCallback callback, std::vector<HistoryEntry> backlog,
                                       bool objects) {
  bool scheduled = !backlog.empty();
  auto sink = std::make_shared<Sink>(std::move(prefix), after_revision, std::move(callback),
                                     std::move(backlog), objects);
  MutexLock lock(mu_);
  sinks_.push_back(sink);
  if (objects) ++object_sinks_;
  if (scheduled) ScheduleLocked(sink);
  return std::make_unique<Handle>(std::move(sink));
}

void WatchHub::Publish(std::span<const HistoryEntry> entries) {
  MutexLock lock(mu_);
  for (size_t i = 0; i < sinks_.size();) {
    Sink& sink = *sinks_[i];
    MutexLock sink_lock(sink.mu);
    if (sink.stopped) {  // Forget stopped watchers as we pass by.
      // Unlocked first: this may drop the last reference, and the mutex
      // with it (ThreadSanitizer saw the unlock of a freed mutex).
      sink_lock.Unlock();
      if (sinks_[i]->wants_objects) --object_sinks_;
      std::swap(sinks_[i], sinks_.back());
      sinks_.pop_back();
      continue;
    }
    bool added = false;
    for (const HistoryEntry& e : entries) {
      if (e.revision > sink.after_revision && e.key().starts_with(sink.prefix)) {
        sink.queue.push_back(e);
        added = true;
      }
    }
    if (added && !sink.scheduled) {
      sink.scheduled = true;
      ScheduleLocked(sinks_[i]);
    }
    ++i;
  }
}

bool WatchHub::WantsObjects(std::string_view key) {
  if (object_sinks_ == 0) return false;
  MutexLock lock(mu_);
  return std::any_of(sinks_.begin(), sinks_.end(), [&](const std::shared_ptr<Sink>& sink) {
    return sink->wants_objects && key.starts_with(sink->prefix);
  });
}

void WatchHub::Deliver(const std::shared_ptr<Sink>& sink) {
  std::vector<HistoryEntry> batch;
  {
    MutexLock lock(sink->mu);
    if (sink->stopped || sink->queue.empty()) {
      sink->scheduled = false;
      return;
    }
    auto end = sink->queue.begin() + std::min(kMaxBatch, sink->queue.size());
    batch.assign(std::make_move_iterator(sink->queue.begin()), std::make_move_iterator(end));
    sink->queue.erase(sink->queue.begin(), end);
    sink->running = true;
    sink->runner = std::this_thread::get_id();
  }
  // Values are copied outside the lock so that Publish never waits on it.
  std::vector<Event> events;
  events.reserve(batch.size());
  for (const HistoryEntry& e : batch) events.push_back(ToEvent(e));
  batch.clear();
  // Only this thread calls or replaces the callback while `running` is set.
  sink->callback(events);
  WatchCallback doomed;
  bool again = false;
  {
    MutexLock lock(sink->mu);
    sink->running = false;
    if (sink->stopped) {
      doomed = std::move(sink->callback);
      sink->scheduled = false;
    } else if (!sink->queue.empty()) {
      again = true;  // stays scheduled
    } else {
      sink->scheduled = false;
    }
  }
  sink->idle.NotifyAll();
  if (!again) return;
  MutexLock lock(mu_);
  ScheduleLocked(sink);
}

void WatchHub::ScheduleLocked(std::shared_ptr<Sink> sink) {
  ++inflight_;
  // Deferred when a pool task publishes (a commit's leader): its thread
  // delivers once the task returns, and no other is woken for it.
  SharedBlockingPool().SubmitNext([this, sink = std::move(sink)] {
    bool closing;
    {
      MutexLock lock(mu_);
      closing = closing_;
    }
    if (!closing) Deliver(sink);
    MutexLock lock(mu_);
    if (--inflight_ == 0) idle_cv_.NotifyAll();
  });
}

}  // namespace flotilla::storage
