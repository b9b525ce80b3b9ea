// The controller manager: runs named level-based controllers, each a
// Reconcile(key) function with its own work queue and up to N workers (tasks
// on the shared client pool while keys are ready), on top of
// informers whose caches it fills before any worker starts (controller-
// runtime's Manager, client-go's sample-controller loop).
//
// A worker takes a key from the queue and calls Reconcile(key):
// - an error, or an exception thrown out of Reconcile (caught here, logged,
//   never fatal), re-queues the key with the queue's per-key backoff;
// - Result{requeue_after > 0} forgets the backoff and re-queues after that
//   delay (the seeds' "check again in 1 min");
// - Result{requeue = true} re-queues with backoff;
// - otherwise the key's backoff is forgotten.
// The queue guarantees that a key is never reconciled by two workers at
// once. Event handlers only enqueue keys (EnqueueHandler does exactly that).
//
// Metrics are plain counters read with Metrics(): reconciles, errors,
// exceptions, a histogram of reconcile durations on the injected Clock, and
// the queue's depth.
//
// Thread-safe. Stop() (wired to SIGTERM by the caller) shuts the queues
// down, waits for reconciles in progress and stops the informers.
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/metrics.h"
#include "base/mutex.h"
#include "base/status.h"
#include "runtime/informer.h"
#include "runtime/work_queue.h"

namespace flotilla::runtime {

struct Result {
  // Check the key again this long after the reconcile began (not after it
  // returned). Zero: no scheduled check.
  Duration requeue_after = Duration::zero();
  bool requeue = false;
};

using ReconcileFunc = std::function<StatusOr<Result>(const std::string& key)>;

// Upper bounds of the reconcile-duration histogram buckets, in seconds
// (controller-runtime's), and one more bucket for anything longer.
inline constexpr std::array<double, 11> kDurationBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                            0.5,   1,    2.5,   5,    10};

struct ControllerMetrics {
  uint64_t reconciles = 0;  // finished, whatever the outcome
  uint64_t errors = 0;      // returned an error (exceptions included)
  uint64_t exceptions = 0;  // threw
  uint64_t requeues_after = 0;
  Duration reconcile_time_total = Duration::zero();
  Duration reconcile_time_max = Duration::zero();
  std::array<uint64_t, kDurationBuckets.size() + 1> duration_buckets{};  // not cumulative
  int workers = 0;
  int busy_workers = 0;
  WorkQueueStats queue;
};

class Controller {
 public:
  Controller(std::string name, int workers, ReconcileFunc reconcile, Clock& clock,
             const RateLimiterOptions& limits);
  ~Controller();

  const std::string& name() const { return name_; }
  WorkQueue& queue() { return queue_; }
  // A handler that enqueues ObjectKey(obj) on every add, update and delete.
  EventHandler EnqueueHandler();
  // A handler that enqueues the object's namespace on every add, update and
  // delete (a controller keyed by namespace).
  EventHandler EnqueueNamespaceHandler();
  ControllerMetrics Metrics() const;

  // Used by the manager.
  void StartWorkers();
  void ShutDown();

 private:
  void Kick();
  void Work();
  void ProcessOne(const std::string& key);
  StatusOr<Result> CallReconcile(const std::string& key, bool* threw);
  void Observe(Duration took, bool failed, bool threw);

  const std::string name_;
  const int workers_;
  const ReconcileFunc reconcile_;
  Clock& clock_;
  WorkQueue queue_;
  std::atomic<int> busy_ = 0;
  // Workers run on the shared client pool (base/io.h), up to workers_ at
  // once, while keys are ready.
  Mutex run_mu_;
  CondVar run_cv_;  // running_ went down
  bool started_ GUARDED_BY(run_mu_) = false;
  int running_ GUARDED_BY(run_mu_) = 0;
  // A Kick found every worker running: one of them looks again before it
  // stops counting as running.
  bool missed_kick_ GUARDED_BY(run_mu_) = false;

  mutable Mutex mu_;
  ControllerMetrics metrics_ GUARDED_BY(mu_);  // queue fields filled on read
};

class ControllerManager {
 public:
  explicit ControllerManager(Clock& clock) : clock_(clock) {}
  // Stops everything.
  ~ControllerManager();
  ControllerManager(const ControllerManager&) = delete;
  ControllerManager& operator=(const ControllerManager&) = delete;

  // Registers an informer to start with the manager; one added once the
  // manager has started starts at once (nothing waits for its cache). It
  // outlives the manager or is removed by it stopping.
  void AddInformer(Informer* informer);
  // Registers a controller. One added once the workers run starts its own
  // at once: its reconciles may then run before the caches it reads have
  // synced (a controller added late, for a kind that appeared, must allow
  // for that). REQUIRES: workers >= 1.
  Controller& AddController(std::string name, int workers, ReconcileFunc reconcile,
                            const RateLimiterOptions& limits = {});

  // Unregisters a controller and stops its workers (waiting for a
  // reconcile under way); adds to its queue are dropped from then on. It
  // stays valid while the result is held. Null once the manager is
  // stopping (Stop() stops it; it stays the manager's). Not from one of its
  // own reconciles.
  std::unique_ptr<Controller> RemoveController(Controller& controller);

  // Starts the informers, waits until every cache has synced, then starts
  // every controller's workers. Returns Unavailable when Stop() came first.
  Status Start();
  // Idempotent; safe from any thread, including during Start().
  void Stop();

  Controller* Find(const std::string& name);
  std::vector<std::pair<std::string, ControllerMetrics>> Metrics() const;

 private:
  Clock& clock_;
  mutable Mutex mu_;
  std::vector<Informer*> informers_ GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Controller>> controllers_ GUARDED_BY(mu_);
  bool started_ GUARDED_BY(mu_) = false;
  bool workers_started_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  Mutex stop_mu_;  // serializes Stop()
};

// Controllers' metrics in the Prometheus text format, with the names
// controller-runtime uses: controller_runtime_reconcile_total{controller,
// result}, controller_runtime_reconcile_errors_total,
// controller_runtime_reconcile_time_seconds (histogram), workqueue_depth
// and workqueue_adds_total{name}, controller_runtime_active_workers.
std::string RenderControllerMetrics(
    const std::vector<std::pair<std::string, ControllerMetrics>>& controllers);
void WriteControllerMetrics(
    metrics::TextWriter& w,
    const std::vector<std::pair<std::string, ControllerMetrics>>& controllers);

}  // namespace flotilla::runtime
