#include "runtime/leader_election.h"

#include "base/log.h"
#include "base/mutex.h"

namespace flotilla::runtime {
namespace {

void Guard(const char* what, const std::function<void()>& call) {
  try {
    call();
  } catch (const std::exception& e) {
    spdlog::error("leader election: {} callback threw: {}", what, e.what());
  } catch (...) {
    spdlog::error("leader election: {} callback threw", what);
  }
}

}  // namespace

json::object LeaderElectionRecord::ToLeaseSpec() const {
  return {{"holderIdentity", holder_identity},
          {"leaseDurationSeconds", lease_duration_seconds},
          {"acquireTime", acquire_time},
          {"renewTime", renew_time},
          {"leaseTransitions", leader_transitions}};
}

LeaderElectionRecord LeaderElectionRecord::FromLeaseSpec(const json::object* spec) {
  LeaderElectionRecord r;
  if (spec == nullptr) return r;
  r.holder_identity = GetString(*spec, "holderIdentity").value_or("");
  r.lease_duration_seconds = GetInt(*spec, "leaseDurationSeconds").value_or(0);
  r.acquire_time = GetString(*spec, "acquireTime").value_or("");
  r.renew_time = GetString(*spec, "renewTime").value_or("");
  r.leader_transitions = GetInt(*spec, "leaseTransitions").value_or(0);
  return r;
}

StatusOr<std::unique_ptr<LeaderElector>> LeaderElector::Create(client::Client& client, Clock& clock,
                                                               LeaderElectionConfig config,
                                                               LeaderCallbacks callbacks) {
  if (config.identity.empty()) return Status::BadRequest("leader election: identity is required");
  if (config.lease_name.empty() || config.lease_namespace.empty()) {
    return Status::BadRequest("leader election: lease namespace and name are required");
  }
  if (config.lease_duration < std::chrono::seconds(1)) {
    return Status::BadRequest("leader election: leaseDuration must be at least 1s");
  }
  if (config.lease_duration <= config.renew_deadline) {
    return Status::BadRequest("leader election: leaseDuration must be greater than renewDeadline");
  }
  if (config.retry_period <= Duration::zero() ||
      config.renew_deadline <= config.retry_period * 12 / 10) {
    return Status::BadRequest(
        "leader election: renewDeadline must be greater than retryPeriod*JitterFactor");
  }
  return std::unique_ptr<LeaderElector>(
      new LeaderElector(client, clock, std::move(config), std::move(callbacks)));
}

LeaderElector::LeaderElector(client::Client& client, Clock& clock, LeaderElectionConfig config,
                             LeaderCallbacks callbacks)
    : client_(client),
      clock_(clock),
      config_(std::move(config)),
      callbacks_(std::move(callbacks)),
      alarm_(clock),
      watchdog_alarm_(clock) {}

LeaderElector::~LeaderElector() { Stop(); }

void LeaderElector::Start() {
  MutexLock lock(join_mu_);
  thread_ = std::thread([this] { Run(); });
  watchdog_ = std::thread([this] { Watchdog(); });
}

void LeaderElector::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  alarm_.Stop();
  MutexLock lock(join_mu_);
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  // After the elector's thread: its last EndTerm happens before the watchdog
  // stops watching.
  watchdog_alarm_.Stop();
  if (watchdog_.joinable() && watchdog_.get_id() != std::this_thread::get_id()) watchdog_.join();
}

bool LeaderElector::IsLeading() const {
  MutexLock lock(mu_);
  return leading_;
}

std::string LeaderElector::Leader() const {
  MutexLock lock(mu_);
  return leader_;
}

bool LeaderElector::Stopping() const {
  MutexLock lock(mu_);
  return stopping_;
}

void LeaderElector::Run() {
  while (Acquire()) {
    {
      MutexLock term(term_mu_);
      {
        MutexLock lock(mu_);
        leading_ = true;
        term_over_ = false;
      }
      spdlog::info("leader election: {} leads {}/{}", config_.identity, config_.lease_namespace,
                   config_.lease_name);
      if (callbacks_.on_started_leading) Guard("started leading", callbacks_.on_started_leading);
    }
    // The first renewal round starts a retry period from now.
    RenewBy(clock_.Now() + config_.retry_period + config_.renew_deadline);
    Renew();
    const bool released = Stopping() && config_.release_on_stop;
    EndTerm(Stopping() ? "stopped" : "lost the lease");
    if (released) Release();
  }
}

void LeaderElector::RenewBy(TimePoint deadline) {
  {
    MutexLock lock(mu_);
    renew_by_ = deadline;
  }
  watchdog_alarm_.Kick();
}

bool LeaderElector::TermOver() const {
  MutexLock lock(mu_);
  return term_over_;
}

void LeaderElector::EndTerm(const char* why) {
  MutexLock term(term_mu_);
  {
    MutexLock lock(mu_);
    renew_by_ = TimePoint::max();
    if (term_over_) return;
    term_over_ = true;
    leading_ = false;
  }
  spdlog::info("leader election: {} stopped leading {}/{} ({})", config_.identity,
               config_.lease_namespace, config_.lease_name, why);
  if (callbacks_.on_stopped_leading) Guard("stopped leading", callbacks_.on_stopped_leading);
}

// Ends the term at the renew deadline even while the elector's thread is
// blocked in a call that has not returned.
void LeaderElector::Watchdog() {
  while (!watchdog_alarm_.stopped()) {
    TimePoint by;
    {
      MutexLock lock(mu_);
      by = renew_by_;
    }
    TimePoint now = clock_.Now();
    if (by != TimePoint::max() && now >= by) {
      spdlog::warn(
          "leader election: {} did not renew {}/{} within {}s", config_.identity,
          config_.lease_namespace, config_.lease_name,
          std::chrono::duration_cast<std::chrono::seconds>(config_.renew_deadline).count());
      EndTerm("renew deadline passed");
      continue;
    }
    // Idle (not leading): wake at a Kick; an hour stands for "never".
    watchdog_alarm_.Wait(by == TimePoint::max() ? now + std::chrono::hours(1) : by);
  }
}

// Tries every retry_period until the lease is ours (true) or Stop() (false).
// When the holder's lease runs out before the next try, it tries right then:
// a dead leader is replaced lease_duration after its last renewal was seen,
// not up to a retry_period later.
bool LeaderElector::Acquire() {
  while (!Stopping()) {
    bool acquired = TryAcquireOrRenew();
    MaybeReportTransition();
    if (acquired) return true;
    TimePoint now = clock_.Now();
    TimePoint next = now + config_.retry_period;
    TimePoint expiry = observed_time_ + std::chrono::seconds(observed_.lease_duration_seconds);
    if (!observed_.holder_identity.empty() && expiry > now && expiry < next) next = expiry;
    if (!SleepUntil(next)) return false;
  }
  return false;
}

// Renews every retry_period; returns when a renewal has not succeeded within
// renew_deadline (tries every retry_period until then) or on Stop().
void LeaderElector::Renew() {
  while (SleepUntil(clock_.Now() + config_.retry_period)) {
    if (TermOver()) return;
    TimePoint deadline = clock_.Now() + config_.renew_deadline;
    RenewBy(deadline);
    for (;;) {
      bool renewed = TryAcquireOrRenew();
      MaybeReportTransition();
      // The watchdog ended the term while the call was blocked: a renewal
      // that succeeded late does not bring it back (the elector acquires
      // again, as a candidate).
      if (TermOver()) return;
      if (renewed) {
        RenewBy(clock_.Now() + config_.retry_period + config_.renew_deadline);
        break;
      }
      if (!SleepUntil(std::min(clock_.Now() + config_.retry_period, deadline))) return;
      if (clock_.Now() >= deadline) {
        spdlog::warn(
            "leader election: {} failed to renew {}/{} within {}s", config_.identity,
            config_.lease_namespace, config_.lease_name,
            std::chrono::duration_cast<std::chrono::seconds>(config_.renew_deadline).count());
        return;
      }
    }
  }
}

// client-go's tryAcquireOrRenew.
bool LeaderElector::TryAcquireOrRenew() {
  TimePoint now = clock_.Now();
  LeaderElectionRecord record = Record(now);
  // Fast path: the leader updates the lease it last wrote.
  if (ObservedIsUs() && LeaseValid(now) && lease_) {
    record.acquire_time = observed_.acquire_time;
    record.leader_transitions = observed_.leader_transitions;
    if (UpdateLease(*lease_, record)) return true;
  }
  auto got = client_.Get(kLeases, config_.lease_namespace, config_.lease_name);
  if (!got.ok()) {
    if (!got.status().Is(Reason::kNotFound)) {
      spdlog::warn("leader election: reading {}/{}: {}", config_.lease_namespace,
                   config_.lease_name, got.status().ToString());
      return false;
    }
    json::object lease{
        {"apiVersion", "coordination.k8s.io/v1"},
        {"kind", "Lease"},
        {"metadata", {{"name", config_.lease_name}, {"namespace", config_.lease_namespace}}},
        {"spec", record.ToLeaseSpec()}};
    auto created = client_.Create(kLeases, config_.lease_namespace, lease);
    if (!created.ok()) return false;
    lease_ = std::move(created).value();
    SetObserved(record);
    return true;
  }
  lease_ = std::move(got).value();
  const json::object* spec = GetObject(*lease_, "spec");
  json::value raw = spec != nullptr ? json::value(*spec) : json::value(json::object());
  LeaderElectionRecord old = LeaderElectionRecord::FromLeaseSpec(spec);
  if (raw != observed_raw_) {
    SetObserved(old);
    observed_raw_ = std::move(raw);
  }
  if (!old.holder_identity.empty() && LeaseValid(now) && !ObservedIsUs()) return false;
  if (ObservedIsUs()) {
    record.acquire_time = old.acquire_time;
    record.leader_transitions = old.leader_transitions;
  } else {
    record.leader_transitions = old.leader_transitions + 1;
  }
  return UpdateLease(*lease_, record);
}

// Writes `record` into `lease`, guarded by the lease's resourceVersion.
bool LeaderElector::UpdateLease(json::object lease, const LeaderElectionRecord& record) {
  lease["spec"] = record.ToLeaseSpec();
  auto updated = client_.Update(kLeases, config_.lease_namespace, lease);
  if (!updated.ok()) {
    spdlog::debug("leader election: updating {}/{}: {}", config_.lease_namespace,
                  config_.lease_name, updated.status().ToString());
    return false;
  }
  lease_ = std::move(updated).value();
  SetObserved(record);
  return true;
}

void LeaderElector::Release() {
  if (!ObservedIsUs() || !lease_) return;
  LeaderElectionRecord record;
  record.lease_duration_seconds = 1;
  record.leader_transitions = observed_.leader_transitions;
  record.acquire_time = record.renew_time = FormatRfc3339Micro(clock_.Now());
  if (!UpdateLease(*lease_, record)) {
    spdlog::warn("leader election: {} could not release {}/{}", config_.identity,
                 config_.lease_namespace, config_.lease_name);
  }
}

void LeaderElector::SetObserved(const LeaderElectionRecord& record) {
  observed_ = record;
  observed_raw_ = record.ToLeaseSpec();
  observed_time_ = clock_.Now();
  MutexLock lock(mu_);
  leader_ = record.holder_identity;
}

bool LeaderElector::ObservedIsUs() const { return observed_.holder_identity == config_.identity; }

bool LeaderElector::LeaseValid(TimePoint now) const {
  return observed_time_ + std::chrono::seconds(observed_.lease_duration_seconds) > now;
}

void LeaderElector::MaybeReportTransition() {
  if (observed_.holder_identity == reported_leader_) return;
  reported_leader_ = observed_.holder_identity;
  if (callbacks_.on_new_leader) {
    Guard("new leader", [&] { callbacks_.on_new_leader(reported_leader_); });
  }
}

// Sleeps until `deadline`; false when stopped first.
bool LeaderElector::SleepUntil(TimePoint deadline) {
  while (!Stopping() && clock_.Now() < deadline) alarm_.Wait(deadline);
  return !Stopping();
}

LeaderElectionRecord LeaderElector::Record(TimePoint now) const {
  LeaderElectionRecord r;
  r.holder_identity = config_.identity;
  r.lease_duration_seconds =
      std::chrono::duration_cast<std::chrono::seconds>(config_.lease_duration).count();
  r.acquire_time = r.renew_time = FormatRfc3339Micro(now);
  return r;
}

}  // namespace flotilla::runtime
