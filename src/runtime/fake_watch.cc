// FakeClient's watches: a Sink per watch (its filter and queue of events) and
// one delivery thread per watch, fed by PublishLocked and steered by the
// pause, expire and break controls.
#include <thread>

#include "base/mutex.h"
#include "runtime/fake_client.h"
#include "runtime/fake_client_internal.h"

namespace flotilla::runtime {

using client::WatchEvent;

namespace {

json::object StatusObject(const Status& s) {
  return {{"kind", "Status"},    {"apiVersion", "v1"},     {"metadata", json::object()},
          {"status", "Failure"}, {"message", s.message()}, {"reason", s.reason_string()},
          {"code", s.code()}};
}

std::string NamespaceOf(const json::object& obj) {
  const json::value* v = Find(obj, "metadata.namespace");
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

}  // namespace

struct FakeClient::Sink {
  Sink(std::string resource, std::string ns, fake_internal::Filter filter,
       client::WatchCallback on_event, client::WatchDone on_done)
      : resource(std::move(resource)),
        ns(std::move(ns)),
        filter(std::move(filter)),
        on_event(std::move(on_event)),
        on_done(std::move(on_done)) {}

  bool Sees(const json::object* obj) const {
    return obj != nullptr && (ns.empty() || NamespaceOf(*obj) == ns) && filter.Matches(*obj);
  }

  // What this watch sees of a write: objects entering its selector are
  // ADDED, leaving it DELETED, as the API server sends them.
  std::optional<WatchEvent::Type> Translate(WatchEvent::Type type, const json::object* old,
                                            const json::object& obj) const {
    bool before = Sees(old);
    if (type == WatchEvent::Type::kDeleted) {
      return before ? std::optional(type) : std::nullopt;
    }
    bool now = Sees(&obj);
    if (before && now) return WatchEvent::Type::kModified;
    if (now) return WatchEvent::Type::kAdded;
    if (before) return WatchEvent::Type::kDeleted;
    return std::nullopt;
  }

  void PushLocked(WatchEvent::Type type, json::object object) REQUIRES(mu) {
    if (ending || stopped) return;
    events.push_back({type, std::move(object)});
    cv.NotifyAll();
  }

  // Ends the stream: what was not delivered is dropped; `last` (if any) is
  // delivered before `done` gets `status`.
  void End(Status status, std::optional<WatchEvent> last) {
    MutexLock lock(mu);
    if (ending || stopped) return;
    events.clear();
    if (last) events.push_back(std::move(*last));
    ending = true;
    end_status = std::move(status);
    cv.NotifyAll();
  }

  void Run() {
    MutexLock lock(mu);
    for (;;) {
      cv.Wait(lock, [&]() REQUIRES(mu) {
        return stopped || (!events.empty() && (!paused || ending)) || ending;
      });
      if (stopped || events.empty()) break;
      WatchEvent ev = std::move(events.front());
      events.pop_front();
      if (ev.type != WatchEvent::Type::kError) {
        const json::value* rv = Find(ev.object, "metadata.resourceVersion");
        if (rv != nullptr && rv->is_string()) last_rv = rv->as_string();
      }
      lock.Unlock();
      on_event(std::move(ev));
      lock.Lock();
    }
    Status status = stopped ? Status::Ok() : end_status;
    finished = true;
    lock.Unlock();
    if (on_done) on_done(status);
  }

  const std::string resource;
  const std::string ns;
  const fake_internal::Filter filter;
  const client::WatchCallback on_event;
  const client::WatchDone on_done;
  Mutex mu;
  CondVar cv;
  std::deque<WatchEvent> events GUARDED_BY(mu);
  std::string last_rv GUARDED_BY(mu);
  Status end_status GUARDED_BY(mu);
  bool paused GUARDED_BY(mu) = false;
  bool ending GUARDED_BY(mu) = false;
  bool stopped GUARDED_BY(mu) = false;
  bool finished GUARDED_BY(mu) = false;
};

// Stop() joins the delivery thread, so no callback runs after it returns;
// called from inside a callback it cannot join, and `done` then follows the
// callback on the same thread.
class FakeClient::FakeWatch : public client::Watch {
 public:
  explicit FakeWatch(std::shared_ptr<Sink> sink) : sink_(sink), thread_([sink] { sink->Run(); }) {}
  ~FakeWatch() override {
    Stop();
    if (thread_.joinable()) thread_.detach();
  }
  void Stop() override {
    {
      MutexLock lock(sink_->mu);
      sink_->stopped = true;
      sink_->cv.NotifyAll();
    }
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  }
  std::string LastResourceVersion() const override {
    MutexLock lock(sink_->mu);
    return sink_->last_rv;
  }

 private:
  const std::shared_ptr<Sink> sink_;
  std::thread thread_;
};

StatusOr<std::unique_ptr<client::Watch>> FakeClient::StartWatch(const client::ResourceRef& res,
                                                                const std::string& ns,
                                                                const client::WatchOptions& opts,
                                                                client::WatchCallback on_event,
                                                                client::WatchDone on_done) {
  Record(Verb::kWatch, res, ns, "", "");
  FLOTILLA_RETURN_IF_ERROR(TakeInjected(Verb::kWatch));
  FLOTILLA_ASSIGN_OR_RETURN(auto filter,
                            fake_internal::Filter::Make(opts.label_selector, opts.field_selector));
  const std::string& rv_param = opts.resource_version;
  int64_t from = 0;
  if (!rv_param.empty() && rv_param != "0") {
    char* end = nullptr;
    from = std::strtoll(rv_param.c_str(), &end, 10);
    if (*end != '\0' || from < 0)
      return Status::BadRequest("invalid resource version: " + rv_param);
  }
  std::string resource = ResourceKey(res);
  auto sink = std::make_shared<Sink>(resource, res.namespaced ? ns : "", std::move(filter),
                                     std::move(on_event), std::move(on_done));
  MutexLock lock(mu_);
  MutexLock sink_lock(sink->mu);
  sink->paused = paused_;
  if (from == 0) {
    for (const auto& [key, obj] : objects_[resource]) {
      if (sink->Sees(&obj)) sink->PushLocked(WatchEvent::Type::kAdded, obj);
    }
  } else if (from < compacted_rv_) {
    Status expired = Status::Expired("too old resource version: " + rv_param + " (" +
                                     std::to_string(compacted_rv_) + ")");
    sink->PushLocked(WatchEvent::Type::kError, StatusObject(expired));
    sink->ending = true;
    sink->end_status = expired;
  } else {
    for (const HistoryEntry& h : history_) {
      if (h.rv <= from || h.resource != resource) continue;
      auto type = sink->Translate(h.type, h.old ? &*h.old : nullptr, h.object);
      if (type) sink->PushLocked(*type, h.object);
    }
  }
  sinks_.push_back(sink);
  return std::unique_ptr<client::Watch>(std::make_unique<FakeWatch>(sink));
}

void FakeClient::PublishLocked(const std::string& resource, WatchEvent::Type type,
                               const json::object* old, const json::object& object) {
  history_.push_back({rv_, resource, type, old ? std::optional(*old) : std::nullopt, object});
  while (history_.size() > history_limit_) {
    compacted_rv_ = history_.front().rv;
    history_.pop_front();
  }
  for (const auto& sink : LiveSinksLocked()) {
    if (sink->resource != resource) continue;
    auto seen = sink->Translate(type, old, object);
    if (!seen) continue;
    MutexLock sink_lock(sink->mu);
    sink->PushLocked(*seen, object);
  }
}

std::vector<std::shared_ptr<FakeClient::Sink>> FakeClient::LiveSinksLocked() {
  std::vector<std::shared_ptr<Sink>> live;
  std::vector<std::weak_ptr<Sink>> kept;
  for (const auto& weak : sinks_) {
    auto sink = weak.lock();
    if (sink == nullptr) continue;
    {
      MutexLock sink_lock(sink->mu);
      if (sink->finished || sink->stopped) continue;
    }
    kept.push_back(weak);
    live.push_back(std::move(sink));
  }
  sinks_ = std::move(kept);
  return live;
}

void FakeClient::PauseWatches() {
  MutexLock lock(mu_);
  paused_ = true;
  for (const auto& sink : LiveSinksLocked()) {
    MutexLock sink_lock(sink->mu);
    sink->paused = true;
  }
}

void FakeClient::ResumeWatches() {
  MutexLock lock(mu_);
  paused_ = false;
  for (const auto& sink : LiveSinksLocked()) {
    MutexLock sink_lock(sink->mu);
    sink->paused = false;
    sink->cv.NotifyAll();
  }
}

void FakeClient::ExpireWatches() {
  MutexLock lock(mu_);
  compacted_rv_ = rv_;
  history_.clear();
  Status expired = Status::Expired("The resourceVersion for the provided watch is too old.");
  for (const auto& sink : LiveSinksLocked()) {
    sink->End(expired, WatchEvent{WatchEvent::Type::kError, StatusObject(expired)});
  }
}

void FakeClient::BreakWatches() {
  MutexLock lock(mu_);
  for (const auto& sink : LiveSinksLocked()) {
    sink->End(Status::Unavailable("watch stream broken"), std::nullopt);
  }
}

void FakeClient::CloseWatches() {
  MutexLock lock(mu_);
  for (const auto& sink : LiveSinksLocked()) sink->End(Status::Ok(), std::nullopt);
}

void FakeClient::Compact() {
  MutexLock lock(mu_);
  compacted_rv_ = rv_;
  history_.clear();
}

int FakeClient::OpenWatches() const {
  MutexLock lock(mu_);
  int open = 0;
  for (const auto& weak : sinks_) {
    auto sink = weak.lock();
    if (sink == nullptr) continue;
    MutexLock sink_lock(sink->mu);
    if (!sink->finished && !sink->stopped) ++open;
  }
  return open;
}

}  // namespace flotilla::runtime
