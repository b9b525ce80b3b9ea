// Informer: keeps a Cache in step with one resource on an API server and
// tells event handlers about every change, as client-go's shared informer
// (reflector + indexer + handlers) does.
//
// It lists, then watches from the list's resourceVersion. When the watch
// ends cleanly (server timeout, dropped slow watcher) it watches again from
// the last resourceVersion seen; when the watch fails (410 Expired/Gone, a
// broken stream, an error event) it lists again and delivers the difference
// between the cache and the new list: adds for new objects, updates for
// objects whose resourceVersion changed, deletes for objects that are gone.
// So a handler never misses a change (it may see several changes merged into
// one update) and never sees the same change twice: an event whose
// resourceVersion is not newer than the cached object's is dropped.
//
// Handlers run one at a time, in order: for a watch event on the thread
// that delivers it (the process's shared loop for a REST or in-process
// watch), for a list on a thread of the shared client pool. They must be
// quick (enqueue keys) and must not call back into the informer. They get
// read-only objects. Every `resync_period` each cached object is
// re-delivered to OnUpdate(obj, obj), so level-based controllers re-check
// the world. Failed lists and watches are retried at once, then with backoff
// (`backoff_initial` doubling to `backoff_max`) while they keep failing.
//
// An informer holds no thread of its own: lists and watch starts run on the
// shared client pool (base/io.h), resync and backoff on Timers of the
// injected Clock. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/timer.h"
#include "client/client.h"
#include "runtime/cache.h"

namespace flotilla::runtime {

struct EventHandler {
  std::function<void(const ObjectPtr& obj)> on_add;
  std::function<void(const ObjectPtr& old_obj, const ObjectPtr& new_obj)> on_update;
  // `obj` is the last state seen (for a delete found by a relist, the cached
  // one).
  std::function<void(const ObjectPtr& obj)> on_delete;
  // Once, after the first list's objects were delivered (the cache has
  // synced), or when the first list found that the server does not serve
  // the resource (the cache is as complete as it gets: empty); and once
  // more when a resource not served is served after all: a controller that
  // waits for a new cache re-checks then.
  std::function<void()> on_synced;
};

// What the cache keeps of an object the server sent, as client-go's
// TransformFunc: a reader's view that drops fields none of its readers use,
// so a cache of many objects costs less memory. It must keep the metadata the
// informer reads (name, namespace, uid, resourceVersion) and be idempotent.
using Transform = std::function<json::object(const json::object& obj)>;

struct InformerOptions {
  std::string ns;  // "" = all namespaces
  std::string label_selector;
  std::string field_selector;
  Duration resync_period = Duration::zero();  // zero: no resync
  Duration backoff_initial = std::chrono::milliseconds(800);
  Duration backoff_max = std::chrono::seconds(30);
  // A list answered NotFound (an API group, version or resource the server
  // does not serve, e.g. an older Kubernetes) is tried again after this,
  // not in a backoff loop.
  Duration not_served_retry = std::chrono::minutes(5);
  // Applied to every listed and watched object before it is cached and
  // handed to the handlers; none: the object as sent.
  Transform transform;
};

struct InformerStats {
  uint64_t lists = 0;           // successful lists
  uint64_t watches = 0;         // watches started
  uint64_t list_failures = 0;   // failed lists
  uint64_t watch_failures = 0;  // watches that failed to start or ended in error
  uint64_t events = 0;          // watch events applied (not counting dropped ones)
  uint64_t resyncs = 0;
  std::string resource_version;  // of the last list or event
};

class Informer {
 public:
  // The timeoutSeconds of its lists, which the client then waits for.
  static constexpr int64_t kListTimeoutSeconds = 60;

  Informer(client::Client& client, client::ResourceRef resource, Clock& clock,
           InformerOptions options = {});
  // Stops the informer.
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Registers a handler. One added after the cache has data first gets
  // on_add for every cached object. The id removes it.
  using HandlerId = uint64_t;
  HandlerId AddEventHandler(EventHandler handler);
  // Unregisters a handler: it is not running and is not called once this
  // returns. Not from a handler of this informer.
  void RemoveEventHandler(HandlerId id);

  // Starts listing and watching. Call once.
  void Start();
  // Stops watching; no handler runs after it returns. Idempotent. The cache
  // keeps its last contents. Not from a handler.
  void Stop();

  // True once the first list has been delivered.
  bool HasSynced() const;
  // False while the server says it does not serve the resource (the last
  // list was answered NotFound); true before the first list.
  bool Served() const;
  // While the resource is not served: lists again now instead of after
  // not_served_retry (the server was just told to serve it, e.g. a
  // CustomResourceDefinition was established). Also during a list, which
  // the server may have answered before it was told: if that list finds
  // the resource not served, the next comes at once. A server publishes
  // what it was told to serve a moment later, longer on a busy machine: lists
  // still answered NotFound are tried again with the usual backoff
  // (backoff_initial doubling to backoff_max), for not_served_retry after
  // this call, before the informer falls back to not_served_retry. Once
  // served the informer tells on_synced again, after the first list that
  // has data.
  void RetryNotServed();
  // Blocks until HasSynced() (true) or Stop() (false).
  bool WaitForSync();

  // Read-only, as client-go's indexer is to controllers; an index is added
  // with AddIndex.
  const Cache& cache() const { return cache_; }
  void AddIndex(const std::string& name, IndexFunc fn) { cache_.AddIndex(name, std::move(fn)); }
  Lister lister() const { return Lister(cache_); }
  const client::ResourceRef& resource() const { return resource_; }
  InformerStats Stats() const;

 private:
  // Runs on the shared pool: lists if needed, then starts a watch.
  void Step();
  // Queues a Step on the pool; false once stopping.
  bool PostLocked(std::function<void()> work) REQUIRES(mu_);
  // The next Step: at once after one failure, else after the backoff.
  void Retry();
  bool ListAndReplace();
  // The list said the server does not serve the resource.
  void NotServed();
  // backoff_initial doubled `n` times, at most backoff_max.
  Duration Backoff(int n) const;
  void Replace(std::vector<json::object> items) REQUIRES(deliver_mu_);
  template <typename Obj>
  ObjectPtr Cached(Obj&& obj) const;
  bool StartWatch();
  void OnWatchEvent(uint64_t generation, client::WatchEvent event);
  void OnWatchDone(uint64_t generation, const Status& status);
  void ApplyLocked(client::WatchEvent::Type type, ObjectPtr obj) REQUIRES(deliver_mu_);
  void Resync();

  void NotifyAdd(const ObjectPtr& obj) REQUIRES(deliver_mu_);
  void NotifyUpdate(const ObjectPtr& old_obj, const ObjectPtr& new_obj) REQUIRES(deliver_mu_);
  void NotifyDelete(const ObjectPtr& obj) REQUIRES(deliver_mu_);
  void Guard(const char* what, const std::function<void()>& call);

  client::Client& client_;
  const client::ResourceRef resource_;
  Clock& clock_;
  const InformerOptions options_;
  Cache cache_;

  // Serializes cache changes with handler calls. Taken before mu_.
  Mutex deliver_mu_;
  std::vector<EventHandler> handlers_ GUARDED_BY(deliver_mu_);
  std::vector<HandlerId> handler_ids_ GUARDED_BY(deliver_mu_);  // of handlers_, by index
  HandlerId next_handler_id_ GUARDED_BY(deliver_mu_) = 1;

  mutable Mutex mu_;
  CondVar synced_cv_;
  CondVar idle_cv_;  // pending_ reached zero
  bool synced_ GUARDED_BY(mu_) = false;
  bool served_ GUARDED_BY(mu_) = true;
  bool told_synced_ GUARDED_BY(mu_) = false;  // on_synced ran
  bool stopping_ GUARDED_BY(mu_) = false;
  int pending_ GUARDED_BY(mu_) = 0;  // work posted, not finished
  bool need_list_ GUARDED_BY(mu_) = true;
  uint64_t watch_generation_ GUARDED_BY(mu_) = 0;
  bool watch_ended_ GUARDED_BY(mu_) = false;  // the current watch's
  bool watch_saw_events_ GUARDED_BY(mu_) = false;
  int failures_ GUARDED_BY(mu_) = 0;  // consecutive
  // The retry timer waits not_served_retry (no Step runs); RetryNotServed
  // during a Step makes the next one come at once.
  bool waiting_not_served_ GUARDED_BY(mu_) = false;
  // A Step's list is under way: RetryNotServed counts even while served_
  // (the list may yet find the resource not served).
  bool listing_ GUARDED_BY(mu_) = false;
  // Until when a NotFound is retried with backoff, after RetryNotServed,
  // and how many such retries there were.
  TimePoint expect_served_until_ GUARDED_BY(mu_){};
  int expect_served_tries_ GUARDED_BY(mu_) = 0;
  bool retry_soon_ GUARDED_BY(mu_) = false;
  InformerStats stats_ GUARDED_BY(mu_);
  std::unique_ptr<client::Watch> watch_ GUARDED_BY(mu_);  // stopped outside it

  // Last: their callbacks use the members above.
  Timer retry_timer_;
  Timer resync_timer_;
};

}  // namespace flotilla::runtime
