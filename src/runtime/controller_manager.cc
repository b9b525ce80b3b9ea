#include "runtime/controller_manager.h"

#include <algorithm>
#include <sstream>

#include "base/log.h"
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

void Controller::StartWorkers() {
  for (int i = 0; i < workers_; ++i) threads_.emplace_back([this] { Work(); });
}

void Controller::ShutDown() {
  queue_.ShutDown();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void Controller::Work() {
  while (auto key = queue_.Get()) {
    ++busy_;
    ProcessOne(*key);
    --busy_;
    queue_.Done(*key);
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
      std::lock_guard lock(mu_);
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
  std::lock_guard lock(mu_);
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
    std::lock_guard lock(mu_);
    m = metrics_;
  }
  m.workers = workers_;
  m.busy_workers = busy_;
  m.queue = queue_.Stats();
  return m;
}

ControllerManager::~ControllerManager() { Stop(); }

void ControllerManager::AddInformer(Informer* informer) {
  std::lock_guard lock(mu_);
  informers_.push_back(informer);
}

Controller& ControllerManager::AddController(std::string name, int workers, ReconcileFunc reconcile,
                                             const RateLimiterOptions& limits) {
  std::lock_guard lock(mu_);
  controllers_.push_back(
      std::make_unique<Controller>(std::move(name), workers, std::move(reconcile), clock_, limits));
  return *controllers_.back();
}

Status ControllerManager::Start() {
  std::vector<Informer*> informers;
  {
    std::lock_guard lock(mu_);
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
  std::lock_guard lock(mu_);
  if (stopping_) return Status::Unavailable("controller manager stopped");
  for (auto& controller : controllers_) controller->StartWorkers();
  workers_started_ = true;
  spdlog::info("controller manager: {} informers synced, {} controllers started", informers.size(),
               controllers_.size());
  return Status::Ok();
}

void ControllerManager::Stop() {
  std::lock_guard stop_lock(stop_mu_);
  std::vector<Informer*> informers;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    // Forgotten once stopped: their owners may destroy them after Stop().
    informers.swap(informers_);
  }
  // Workers first, so that no reconcile runs against a stopped informer's
  // cache; then the informers (which releases a Start() waiting on them).
  // controllers_ no longer changes once stopping_ is set.
  for (auto& controller : controllers_) controller->ShutDown();
  ParallelFor(informers.size(), static_cast<int>(informers.size()),
              [&](size_t i) { informers[i]->Stop(); });
}

Controller* ControllerManager::Find(const std::string& name) {
  std::lock_guard lock(mu_);
  for (auto& c : controllers_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

std::vector<std::pair<std::string, ControllerMetrics>> ControllerManager::Metrics() const {
  std::lock_guard lock(mu_);
  std::vector<std::pair<std::string, ControllerMetrics>> out;
  for (const auto& c : controllers_) out.emplace_back(c->name(), c->Metrics());
  return out;
}

std::string RenderControllerMetrics(
    const std::vector<std::pair<std::string, ControllerMetrics>>& controllers) {
  std::ostringstream out;
  auto header = [&](const char* name, const char* type, const char* help) {
    out << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
  };
  header("controller_runtime_reconcile_total", "counter", "Reconciles per controller and result.");
  for (const auto& [name, m] : controllers) {
    out << "controller_runtime_reconcile_total{controller=\"" << name << "\",result=\"error\"} "
        << m.errors << "\n"
        << "controller_runtime_reconcile_total{controller=\"" << name
        << "\",result=\"requeue_after\"} " << m.requeues_after << "\n"
        << "controller_runtime_reconcile_total{controller=\"" << name << "\",result=\"success\"} "
        << m.reconciles - m.errors - m.requeues_after << "\n";
  }
  header("controller_runtime_reconcile_errors_total", "counter", "Reconciles that failed.");
  for (const auto& [name, m] : controllers) {
    out << "controller_runtime_reconcile_errors_total{controller=\"" << name << "\"} " << m.errors
        << "\n";
  }
  header("controller_runtime_reconcile_time_seconds", "histogram", "Time per reconcile.");
  for (const auto& [name, m] : controllers) {
    uint64_t cumulative = 0;
    for (size_t b = 0; b < kDurationBuckets.size(); ++b) {
      cumulative += m.duration_buckets[b];
      out << "controller_runtime_reconcile_time_seconds_bucket{controller=\"" << name << "\",le=\""
          << kDurationBuckets[b] << "\"} " << cumulative << "\n";
    }
    out << "controller_runtime_reconcile_time_seconds_bucket{controller=\"" << name
        << "\",le=\"+Inf\"} " << m.reconciles << "\n"
        << "controller_runtime_reconcile_time_seconds_sum{controller=\"" << name << "\"} "
        << std::chrono::duration<double>(m.reconcile_time_total).count() << "\n"
        << "controller_runtime_reconcile_time_seconds_count{controller=\"" << name << "\"} "
        << m.reconciles << "\n";
  }
  header("controller_runtime_active_workers", "gauge", "Workers reconciling now.");
  for (const auto& [name, m] : controllers) {
    out << "controller_runtime_active_workers{controller=\"" << name << "\"} " << m.busy_workers
        << "\n";
  }
  header("workqueue_depth", "gauge", "Keys ready to be reconciled.");
  for (const auto& [name, m] : controllers) {
    out << "workqueue_depth{name=\"" << name << "\"} " << m.queue.depth << "\n";
  }
  header("workqueue_adds_total", "counter", "Keys added to the work queue.");
  for (const auto& [name, m] : controllers) {
    out << "workqueue_adds_total{name=\"" << name << "\"} " << m.queue.adds << "\n";
  }
  return out.str();
}

}  // namespace flotilla::runtime
