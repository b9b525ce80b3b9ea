#include "runtime/controller_manager.h"

#include <algorithm>
#include <sstream>

#include "base/io.h"
#include "base/log.h"
#include "base/mutex.h"
#include "runtime/parallel.h"

namespace flotilla::runtime {

Controller::Controller(std::string name, int workers, ReconcileFunc reconcile, Clock& clock,
                       const RateLimiterOptions& limits)
    : name_(std::move(name)),
      workers_(std::max(1, workers)),
      reconcile_(std::move(reconcile)),
      clock_(clock),
      queue_(clock, NewControllerRateLimiter(clock, limits)) {}

Controller::~Controller() { ShutDown(); }

EventHandler Controller::EnqueueHandler() {
  auto enqueue = [this](const ObjectPtr& obj) { queue_.Add(ObjectKey(*obj)); };
  return {enqueue, [enqueue](const ObjectPtr&, const ObjectPtr& obj) { enqueue(obj); }, enqueue};
}

EventHandler Controller::EnqueueNamespaceHandler() {
  auto enqueue = [this](const ObjectPtr& obj) {
    queue_.Add(std::string(StringViewAt(*obj, "metadata.namespace")));
  };
  return {enqueue, [enqueue](const ObjectPtr&, const ObjectPtr& obj) { enqueue(obj); }, enqueue};
}

void Controller::StartWorkers() {
  {
    MutexLock lock(run_mu_);
    started_ = true;
  }
  queue_.SetOnReady([this] { Kick(); });
  for (int i = 0; i < workers_; ++i) Kick();
}

void Controller::ShutDown() {
  queue_.ShutDown();
  MutexLock lock(run_mu_);
  started_ = false;
  ScopedBlocking blocking;
  run_cv_.Wait(lock, [&]() REQUIRES(run_mu_) { return running_ == 0; });
}

// Posts a worker when one may start: a key may be ready and fewer than
// workers_ run. Called under the queue's lock.
void Controller::Kick() {
  MutexLock lock(run_mu_);
  if (!started_) return;
  if (running_ >= workers_) {
    missed_kick_ = true;
    return;
  }
  ++running_;
  SharedClientPool().Submit([this] { Work(); });
}

// One worker: reconciles ready keys until there are none. A key that
// became ready after TryGet found none, while this worker still counted as
// running, posted no worker (missed_kick_): it looks again. Nothing of the
// controller is touched once running_ is down, as ShutDown may then return
// and the controller be destroyed.
void Controller::Work() {
  for (;;) {
    while (auto key = queue_.TryGet()) {
      ++busy_;
      ProcessOne(*key);
      --busy_;
      queue_.Done(*key);
    }
    MutexLock lock(run_mu_);
    if (started_ && missed_kick_) {
      missed_kick_ = false;
      continue;
    }
    --running_;
    run_cv_.NotifyAll();
    return;
  }
}

void Controller::ProcessOne(const std::string& key) {
  TimePoint start = clock_.Now();
  bool threw = false;
  StatusOr<Result> result = CallReconcile(key, &threw);
  Observe(clock_.Now() - start, !result.ok(), threw);
  if (!result.ok()) {
    spdlog::warn("controller {}: reconcile {} failed (retry {}): {}", name_, key,
                 queue_.NumRequeues(key) + 1, result.status().ToString());
    queue_.AddRateLimited(key);
  } else if (result->requeue_after > Duration::zero()) {
    {
      MutexLock lock(mu_);
      ++metrics_.requeues_after;
    }
    queue_.Forget(key);
    // Counted from when the reconcile began: what it saw then is what
    // becomes due, however long the reconcile took (or however far a test
    // moved the clock meanwhile). Earlier is always safe; later is not.
    queue_.AddAfter(key, result->requeue_after - (clock_.Now() - start));
  } else if (result->requeue) {
    queue_.AddRateLimited(key);
  } else {
    queue_.Forget(key);
  }
}

// Exceptions stop here: a reconcile that throws is an error like any other.
StatusOr<Result> Controller::CallReconcile(const std::string& key, bool* threw) {
  try {
    return reconcile_(key);
  } catch (const std::exception& e) {
    *threw = true;
    return Status::Internal(std::string("reconcile threw: ") + e.what());
  } catch (...) {
    *threw = true;
    return Status::Internal("reconcile threw a non-standard exception");
  }
}

void Controller::Observe(Duration took, bool failed, bool threw) {
  double seconds = std::chrono::duration<double>(took).count();
  size_t bucket = 0;
  while (bucket < kDurationBuckets.size() && seconds > kDurationBuckets[bucket]) ++bucket;
  MutexLock lock(mu_);
  ++metrics_.reconciles;
  metrics_.errors += failed;
  metrics_.exceptions += threw;
  metrics_.reconcile_time_total += took;
  metrics_.reconcile_time_max = std::max(metrics_.reconcile_time_max, took);
  ++metrics_.duration_buckets[bucket];
}

ControllerMetrics Controller::Metrics() const {
  ControllerMetrics m;
  {
    MutexLock lock(mu_);
    m = metrics_;
  }
  m.workers = workers_;
  m.busy_workers = busy_;
  m.queue = queue_.Stats();
  return m;
}

ControllerManager::~ControllerManager() { Stop(); }

void ControllerManager::AddInformer(Informer* informer) {
  {
    MutexLock lock(mu_);
    if (stopping_) return;  // never started; its owner stops it
    informers_.push_back(informer);
    if (!started_) return;
  }
  informer->Start();
}

Controller& ControllerManager::AddController(std::string name, int workers, ReconcileFunc reconcile,
                                             const RateLimiterOptions& limits) {
  MutexLock lock(mu_);
  controllers_.push_back(
      std::make_unique<Controller>(std::move(name), workers, std::move(reconcile), clock_, limits));
  if (workers_started_ && !stopping_) controllers_.back()->StartWorkers();
  return *controllers_.back();
}

std::unique_ptr<Controller> ControllerManager::RemoveController(Controller& controller) {
  std::unique_ptr<Controller> out;
  {
    MutexLock lock(mu_);
    if (stopping_) return nullptr;
    auto it =
        std::find_if(controllers_.begin(), controllers_.end(),
                     [&](const std::unique_ptr<Controller>& c) { return c.get() == &controller; });
    if (it == controllers_.end()) return nullptr;
    out = std::move(*it);
    controllers_.erase(it);
  }
  out->ShutDown();
  return out;
}

Status ControllerManager::Start() {
  std::vector<Informer*> informers;
  {
    MutexLock lock(mu_);
    if (stopping_) return Status::Unavailable("controller manager stopped");
    if (started_) return Status::Internal("controller manager started twice");
    started_ = true;
    informers = informers_;
  }
  for (Informer* informer : informers) informer->Start();
  for (Informer* informer : informers) {
    if (!informer->WaitForSync()) {
      return Status::Unavailable("stopped before the " + informer->resource().resource +
                                 " cache synced");
    }
  }
  MutexLock lock(mu_);
  if (stopping_) return Status::Unavailable("controller manager stopped");
  for (auto& controller : controllers_) controller->StartWorkers();
  workers_started_ = true;
  spdlog::info("controller manager: {} informers synced, {} controllers started", informers.size(),
               controllers_.size());
  return Status::Ok();
}

void ControllerManager::Stop() {
  MutexLock stop_lock(stop_mu_);
  std::vector<Informer*> informers;
  {
    MutexLock lock(mu_);
    stopping_ = true;
    // Forgotten once stopped: their owners may destroy them after Stop().
    informers.swap(informers_);
  }
  // Workers first, so that no reconcile runs against a stopped informer's
  // cache; then the informers (which releases a Start() waiting on them).
  // controllers_ no longer changes once stopping_ is set.
  std::vector<Controller*> controllers;
  {
    MutexLock lock(mu_);
    for (auto& controller : controllers_) controllers.push_back(controller.get());
  }
  for (Controller* controller : controllers) controller->ShutDown();
  ParallelFor(informers.size(), static_cast<int>(informers.size()),
              [&](size_t i) { informers[i]->Stop(); });
}

Controller* ControllerManager::Find(const std::string& name) {
  MutexLock lock(mu_);
  for (auto& c : controllers_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

std::vector<std::pair<std::string, ControllerMetrics>> ControllerManager::Metrics() const {
  MutexLock lock(mu_);
  std::vector<std::pair<std::string, ControllerMetrics>> out;
  for (const auto& c : controllers_) out.emplace_back(c->name(), c->Metrics());
  return out;
}

void WriteControllerMetrics(
    metrics::TextWriter& w,
    const std::vector<std::pair<std::string, ControllerMetrics>>& controllers) {
  auto each = [&](const char* name, const char* type, const char* help, const char* label,
                  auto value) {
    w.Family(name, type, help);
    for (const auto& [controller, m] : controllers) {
      w.Sample(name, {{label, controller}}, static_cast<double>(value(m)));
    }
  };
  w.Family("controller_runtime_reconcile_total", "counter",
           "Reconciles per controller and result.");
  for (const auto& [name, m] : controllers) {
    const char* name_label = "controller";
    w.Sample("controller_runtime_reconcile_total", {{name_label, name}, {"result", "error"}},
             static_cast<double>(m.errors));
    w.Sample("controller_runtime_reconcile_total",
             {{name_label, name}, {"result", "requeue_after"}},
             static_cast<double>(m.requeues_after));
    w.Sample("controller_runtime_reconcile_total", {{name_label, name}, {"result", "success"}},
             static_cast<double>(m.reconciles - m.errors - m.requeues_after));
  }
  each("controller_runtime_reconcile_errors_total", "counter", "Reconciles that failed.",
       "controller", [](const ControllerMetrics& m) { return m.errors; });
  w.Family("controller_runtime_reconcile_time_seconds", "histogram", "Time per reconcile.");
  for (const auto& [name, m] : controllers) {
    w.Histogram("controller_runtime_reconcile_time_seconds", {{"controller", name}},
                kDurationBuckets, m.duration_buckets,
                std::chrono::duration<double>(m.reconcile_time_total).count());
  }
  each("controller_runtime_active_workers", "gauge", "Workers reconciling now.", "controller",
       [](const ControllerMetrics& m) { return m.busy_workers; });
  each("workqueue_depth", "gauge", "Keys ready to be reconciled.", "name",
       [](const ControllerMetrics& m) { return m.queue.depth; });
  each("workqueue_adds_total", "counter", "Keys added to the work queue.", "name",
       [](const ControllerMetrics& m) { return m.queue.adds; });
}

std::string RenderControllerMetrics(
    const std::vector<std::pair<std::string, ControllerMetrics>>& controllers) {
  metrics::TextWriter w;
  WriteControllerMetrics(w, controllers);
  return w.text();
}

}  // namespace flotilla::runtime
