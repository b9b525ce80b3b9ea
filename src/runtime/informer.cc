#include "runtime/informer.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <utility>

#include "base/io.h"
#include "base/log.h"
#include "base/mutex.h"

namespace flotilla::runtime {

using client::WatchEvent;

namespace {

bool ParseRv(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

// resourceVersions are opaque in general; ours (and etcd's) are integers,
// which lets a replayed older event be recognized.
bool IsNewer(std::string_view a, std::string_view b) {
  int64_t x, y;
  if (ParseRv(a, &x) && ParseRv(b, &y)) return x > y;
  return a != b;
}

bool IsOlder(std::string_view a, std::string_view b) {
  int64_t x, y;
  return ParseRv(a, &x) && ParseRv(b, &y) && x < y;
}

std::string UidOf(const json::object& obj) {
  const json::value* uid = Find(obj, "metadata.uid");
  return uid != nullptr && uid->is_string() ? std::string(uid->as_string()) : std::string();
}

Status StatusFromObject(const json::object& obj) {
  int code = static_cast<int>(GetInt(obj, "code").value_or(500));
  std::string reason(GetString(obj, "reason").value_or(""));
  std::string message(GetString(obj, "message").value_or("watch error"));
  Reason r = ReasonFromString(reason, code);
  return Status(r == Reason::kOk ? Reason::kInternalError : r, message);
}

}  // namespace

Informer::Informer(client::Client& client, client::ResourceRef resource, Clock& clock,
                   InformerOptions options)
    : client_(client),
      resource_(std::move(resource)),
      clock_(clock),
      options_(std::move(options)),
      retry_timer_(clock,
                   [this] {
                     MutexLock lock(mu_);
                     PostLocked([this] { Step(); });
                   }),
      resync_timer_(clock, [this] {
        MutexLock lock(mu_);
        PostLocked([this] { Resync(); });
      }) {}

Informer::~Informer() { Stop(); }

Informer::HandlerId Informer::AddEventHandler(EventHandler handler) {
  MutexLock lock(deliver_mu_);
  if (handler.on_add) {
    for (const auto& obj : cache_.List()) Guard("add", [&] { handler.on_add(obj); });
  }
  if (handler.on_synced && HasSynced()) Guard("synced", handler.on_synced);
  handlers_.push_back(std::move(handler));
  handler_ids_.push_back(next_handler_id_);
  return next_handler_id_++;
}

void Informer::RemoveEventHandler(HandlerId id) {
  // Deliveries run under the lock: none of this handler's is under way.
  MutexLock lock(deliver_mu_);
  auto it = std::find(handler_ids_.begin(), handler_ids_.end(), id);
  if (it == handler_ids_.end()) return;
  handlers_.erase(handlers_.begin() + (it - handler_ids_.begin()));
  handler_ids_.erase(it);
}

void Informer::Start() {
  MutexLock lock(mu_);
  PostLocked([this] { Step(); });
}

void Informer::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  synced_cv_.NotifyAll();
  // Nothing is posted once stopping_ is set; wait for what was.
  retry_timer_.Cancel();
  resync_timer_.Cancel();
  MutexLock lock(mu_);
  ScopedBlocking blocking;
  idle_cv_.Wait(lock, [&]() REQUIRES(mu_) { return pending_ == 0; });
  std::unique_ptr<client::Watch> watch = std::move(watch_);
  lock.Unlock();
  if (watch != nullptr) watch->Stop();
}

bool Informer::HasSynced() const {
  MutexLock lock(mu_);
  return synced_;
}

bool Informer::Served() const {
  MutexLock lock(mu_);
  return served_;
}

bool Informer::WaitForSync() {
  MutexLock lock(mu_);
  ScopedBlocking blocking;
  synced_cv_.Wait(lock, [&]() REQUIRES(mu_) { return synced_ || stopping_; });
  return synced_;
}

InformerStats Informer::Stats() const {
  MutexLock lock(mu_);
  return stats_;
}

bool Informer::PostLocked(std::function<void()> work) {
  if (stopping_) return false;
  ++pending_;
  SharedClientPool().Submit([this, work = std::move(work)] {
    work();
    MutexLock lock(mu_);
    if (--pending_ == 0) idle_cv_.NotifyAll();
  });
  return true;
}

void Informer::RetryNotServed() {
  MutexLock lock(mu_);
  // Served as far as the informer knows, unless a list is under way: the
  // server may have answered it before it served the resource.
  if (stopping_ || (served_ && !listing_)) return;
  expect_served_until_ = clock_.Now() + options_.not_served_retry;
  expect_served_tries_ = 0;
  if (waiting_not_served_) {
    waiting_not_served_ = false;
    retry_timer_.ArmAfter(Duration::zero());
  } else {
    retry_soon_ = true;  // a list is under way: the next comes at once
  }
}

void Informer::Step() {
  std::unique_ptr<client::Watch> ended;
  bool need_list;
  {
    MutexLock lock(mu_);
    if (stopping_) return;
    waiting_not_served_ = false;
    retry_soon_ = false;
    ended = std::move(watch_);
    need_list = need_list_;
    listing_ = need_list;
  }
  if (ended != nullptr) ended->Stop();
  ended.reset();
  if (need_list) {
    bool listed = ListAndReplace();
    {
      MutexLock lock(mu_);
      listing_ = false;
      if (listed) need_list_ = false;
    }
    if (!listed) return Retry();
  }
  if (!StartWatch()) Retry();
}

void Informer::NotServed() {
  bool tell = false;
  {
    MutexLock lock(mu_);
    ++stats_.list_failures;
    if (served_) {
      spdlog::info(
          "informer {}: the server does not serve {} (list: NotFound); trying again in {}s",
          resource_.resource, resource_.ApiVersion(),
          std::chrono::duration_cast<std::chrono::seconds>(options_.not_served_retry).count());
    }
    served_ = false;
    failures_ = 0;
    tell = !synced_ && !told_synced_;
    told_synced_ = true;
  }
  if (tell) {
    MutexLock lock(deliver_mu_);
    for (const EventHandler& h : handlers_) {
      if (h.on_synced) Guard("synced", h.on_synced);
    }
  }
}

// Waits before the next list or watch: not at all after one failure, then
// backoff_initial doubling up to backoff_max; not_served_retry while the
// server does not serve the resource (backoff again for a while after
// RetryNotServed).
void Informer::Retry() {
  MutexLock lock(mu_);
  if (!served_) {
    if (stopping_) return;
    if (retry_soon_) {
      retry_soon_ = false;
      PostLocked([this] { Step(); });
      return;
    }
    waiting_not_served_ = true;
    if (clock_.Now() < expect_served_until_) {
      // Told it is served now: the server has not caught up yet.
      retry_timer_.ArmAfter(Backoff(expect_served_tries_++));
    } else {
      retry_timer_.ArmAfter(options_.not_served_retry);
    }
    return;
  }
  if (failures_ <= 1) {
    PostLocked([this] { Step(); });
    return;
  }
  if (!stopping_) retry_timer_.ArmAfter(Backoff(failures_ - 2));
}

Duration Informer::Backoff(int n) const {
  if (n >= 30) return options_.backoff_max;
  return std::min<Duration>(options_.backoff_max, options_.backoff_initial * (1 << n));
}

bool Informer::ListAndReplace() {
  client::ListOptions opts;
  opts.label_selector = options_.label_selector;
  opts.field_selector = options_.field_selector;
  // As long as a kube-apiserver lets a call last (--request-timeout): a
  // client's own timeout is sized for writes, and the list of a member's
  // 10,000 pods on a busy machine takes longer.
  opts.timeout_seconds = kListTimeoutSeconds;
  auto list = client_.List(resource_, options_.ns, opts);
  if (!list.ok() && list.status().Is(Reason::kNotFound)) {
    NotServed();
    return false;
  }
  if (!list.ok()) {
    spdlog::warn("informer {}: list failed: {}", resource_.resource, list.status().ToString());
    MutexLock lock(mu_);
    ++stats_.list_failures;
    ++failures_;
    return false;
  }
  bool became_served = false;  // its on_synced runs again: the cache has data now
  {
    MutexLock lock(mu_);
    ++stats_.lists;
    if (!served_) {
      spdlog::info("informer {}: the server serves {} now", resource_.resource,
                   resource_.ApiVersion());
      became_served = true;
    }
    served_ = true;
  }
  {
    MutexLock lock(deliver_mu_);
    Replace(std::move(list->items));
  }
  bool first = false;
  {
    MutexLock lock(mu_);
    stats_.resource_version = list->resource_version;
    if (!synced_) {
      synced_ = true;
      first = !told_synced_ || became_served;
      told_synced_ = true;
      if (options_.resync_period > Duration::zero() && !stopping_) {
        resync_timer_.ArmAfter(options_.resync_period);
      }
      synced_cv_.NotifyAll();
    }
  }
  if (first) {
    MutexLock lock(deliver_mu_);
    for (const EventHandler& h : handlers_) {
      if (h.on_synced) Guard("synced", h.on_synced);
    }
  }
  return true;
}

// What the cache keeps of `obj`: moved or copied as it came, or the
// transform's view of it.
template <typename Obj>
ObjectPtr Informer::Cached(Obj&& obj) const {
  if (options_.transform) return std::make_shared<const json::object>(options_.transform(obj));
  return std::make_shared<const json::object>(std::forward<Obj>(obj));
}

// Delivers the difference between the cache and a fresh list.
void Informer::Replace(std::vector<json::object> items) {
  std::set<std::string> listed;
  for (auto& item : items) {
    ObjectPtr obj = Cached(std::move(item));
    std::string key = ObjectKey(*obj);
    listed.insert(key);
    ObjectPtr cached = cache_.Get(key);
    if (cached != nullptr && ResourceVersionView(*cached) == ResourceVersionView(*obj)) continue;
    cache_.Upsert(key, obj);
    if (cached == nullptr) {
      NotifyAdd(obj);
    } else if (UidOf(*cached) != UidOf(*obj)) {
      NotifyDelete(cached);  // deleted and created again while we were not watching
      NotifyAdd(obj);
    } else {
      NotifyUpdate(cached, obj);
    }
  }
  for (const auto& key : cache_.Keys()) {
    if (listed.count(key) != 0) continue;
    NotifyDelete(cache_.Remove(key));
  }
}

bool Informer::StartWatch() {
  client::WatchOptions opts;
  opts.shared_objects = true;  // the cache keeps them as they are (ObjectPtr)
  opts.label_selector = options_.label_selector;
  opts.field_selector = options_.field_selector;
  uint64_t generation;
  {
    MutexLock lock(mu_);
    generation = ++watch_generation_;
    watch_ended_ = false;
    watch_saw_events_ = false;
    opts.resource_version = stats_.resource_version;
  }
  auto watch = client_.StartWatch(
      resource_, options_.ns, opts,
      [this, generation](WatchEvent ev) { OnWatchEvent(generation, std::move(ev)); },
      [this, generation](const Status& s) { OnWatchDone(generation, s); });
  MutexLock lock(mu_);
  if (!watch.ok()) {
    spdlog::warn("informer {}: watch failed: {}", resource_.resource, watch.status().ToString());
    ++stats_.watch_failures;
    ++failures_;
    return false;
  }
  ++stats_.watches;
  // When stopping, Stop() stops it once this step has returned. A watch
  // that another step started meanwhile is replaced, and stopped outside
  // the lock: stopping a watch may end it at once, and its end
  // (OnWatchDone) takes mu_. Destroyed under it, the old watch deadlocked
  // this thread on itself (seen once in a sanitizer run of
  // federation_sync).
  std::unique_ptr<client::Watch> replaced = std::exchange(watch_, std::move(watch).value());
  lock.Unlock();
  if (replaced != nullptr) replaced->Stop();
  return true;
}

void Informer::OnWatchEvent(uint64_t generation, WatchEvent event) {
  MutexLock deliver(deliver_mu_);
  MutexLock lock(mu_);
  if (generation != watch_generation_ || watch_ended_ || stopping_) return;
  if (event.type == WatchEvent::Type::kError) {
    spdlog::info("informer {}: watch ended: {}", resource_.resource,
                 StatusFromObject(event.object).ToString());
    watch_ended_ = true;
    need_list_ = true;
    ++stats_.watch_failures;
    ++failures_;
    PostLocked([this] { Step(); });  // lists again at once
    return;
  }
  watch_saw_events_ = true;
  failures_ = 0;
  std::string rv = ResourceVersionOf(event.Object());
  if (!rv.empty()) stats_.resource_version = rv;
  if (event.type == WatchEvent::Type::kBookmark) return;
  ++stats_.events;
  lock.Unlock();
  ObjectPtr obj;
  if (event.shared == nullptr) {
    obj = Cached(std::move(event.object));
  } else if (options_.transform) {
    obj = Cached(*event.shared);
  } else {
    obj = std::move(event.shared);  // immutable: the cache shares it with the server's watchers
  }
  ApplyLocked(event.type, std::move(obj));
}

// At once, the next Step: after a clean end (the server's timeout, a
// dropped slow watcher) it watches again from the last resourceVersion;
// after a failure it lists again. A watch that saw nothing counts towards
// the backoff of a list or watch start that fails next.
void Informer::OnWatchDone(uint64_t generation, const Status& status) {
  MutexLock lock(mu_);
  if (generation != watch_generation_ || watch_ended_) return;
  watch_ended_ = true;
  if (status.ok()) {
    if (!watch_saw_events_) ++failures_;
  } else {
    spdlog::info("informer {}: watch broken: {}", resource_.resource, status.ToString());
    need_list_ = true;
    ++stats_.watch_failures;
    ++failures_;
  }
  PostLocked([this] { Step(); });
}

void Informer::ApplyLocked(WatchEvent::Type type, ObjectPtr obj) {
  std::string key = ObjectKey(*obj);
  ObjectPtr cached = cache_.Get(key);
  if (type == WatchEvent::Type::kDeleted) {
    if (cached == nullptr || IsOlder(ResourceVersionView(*obj), ResourceVersionView(*cached))) {
      return;
    }
    cache_.Remove(key);
    NotifyDelete(obj);
    return;
  }
  if (cached != nullptr && !IsNewer(ResourceVersionView(*obj), ResourceVersionView(*cached))) {
    return;
  }
  cache_.Upsert(key, obj);
  if (cached == nullptr) {
    NotifyAdd(obj);
  } else {
    NotifyUpdate(cached, obj);
  }
}

void Informer::Resync() {
  {
    MutexLock lock(deliver_mu_);
    for (const auto& obj : cache_.List()) NotifyUpdate(obj, obj);
  }
  MutexLock lock(mu_);
  ++stats_.resyncs;
  if (!stopping_) resync_timer_.ArmAfter(options_.resync_period);
}

void Informer::NotifyAdd(const ObjectPtr& obj) {
  for (const auto& h : handlers_) {
    if (h.on_add) Guard("add", [&] { h.on_add(obj); });
  }
}

void Informer::NotifyUpdate(const ObjectPtr& old_obj, const ObjectPtr& new_obj) {
  for (const auto& h : handlers_) {
    if (h.on_update) Guard("update", [&] { h.on_update(old_obj, new_obj); });
  }
}

void Informer::NotifyDelete(const ObjectPtr& obj) {
  for (const auto& h : handlers_) {
    if (h.on_delete) Guard("delete", [&] { h.on_delete(obj); });
  }
}

// A handler that throws is logged; the informer carries on.
void Informer::Guard(const char* what, const std::function<void()>& call) {
  try {
    call();
  } catch (const std::exception& e) {
    spdlog::error("informer {}: {} handler threw: {}", resource_.resource, what, e.what());
  } catch (...) {
    spdlog::error("informer {}: {} handler threw", resource_.resource, what);
  }
}

}  // namespace flotilla::runtime
