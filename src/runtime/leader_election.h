// Leader election on a coordination.k8s.io/v1 Lease, with client-go's
// tools/leaderelection semantics, so that of several processes sharing one
// API server only one runs the controllers at a time.
//
// The Lease's spec is the election record: holderIdentity,
// leaseDurationSeconds, acquireTime, renewTime, leaseTransitions. Every
// write carries the resourceVersion last read (optimistic concurrency), so
// of two candidates racing for a free lease one gets a Conflict and loses.
//
// A candidate tries every retry_period. It takes the lease when nobody
// holds it, or when the record it observes has not changed for a full
// lease duration measured on its own clock from when it first saw that
// record (clocks are never compared across processes; renewTime is
// informational). When that lease duration ends before its next try, it
// tries at that moment instead: a dead leader is replaced lease_duration
// after its last renewal was observed, at most lease_duration +
// retry_period after it died. The leader renews every retry_period; if it cannot renew
// within renew_deadline it stops leading. Because renew_deadline <
// lease_duration, a leader cut off from the server stops before anyone else
// can take over. After losing the lease the elector becomes a candidate
// again; the caller decides what losing means (the federation server exits).
//
// A renewal blocked in a call (an API server or store that does not answer)
// must not keep a leader leading past its deadline: a watchdog thread ends
// the term when the renew deadline of the current round passes, whatever the
// elector's thread is doing, and the elector starts over as a candidate once
// its call returns.
//
// Callbacks run in order: on_new_leader(identity) whenever the observed
// holder changes (including to ourselves), on_started_leading when we
// acquire, on_stopped_leading when we lose the lease or are stopped while
// leading (not when never leading, unlike client-go). They run on the
// elector's thread, except on_stopped_leading at a missed renew deadline,
// which runs on the watchdog's; the two leading callbacks never overlap.
// on_stopped_leading must stop the work the lease guards before it returns:
// with release_on_stop, the lease is released right after it.
//
// Thread-safe. Times run on the injected Clock.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/json.h"
#include "base/mutex.h"
#include "client/client.h"
#include "client/resources.h"
#include "runtime/alarm.h"

namespace flotilla::runtime {

using client::kLeases;

struct LeaderElectionConfig {
  std::string lease_namespace;
  std::string lease_name;
  std::string identity;  // unique per candidate, e.g. hostname + "_" + a random id
  Duration lease_duration = std::chrono::seconds(15);
  Duration renew_deadline = std::chrono::seconds(10);
  Duration retry_period = std::chrono::seconds(2);
  // On Stop() while leading, write an empty holder (duration 1 s) so that a
  // candidate takes over at its next try instead of after lease_duration.
  bool release_on_stop = true;
};

struct LeaderCallbacks {
  std::function<void()> on_started_leading;
  std::function<void()> on_stopped_leading;
  std::function<void(const std::string& identity)> on_new_leader;
};

// The election record as stored in the Lease's spec.
struct LeaderElectionRecord {
  std::string holder_identity;
  int64_t lease_duration_seconds = 0;
  std::string acquire_time;  // metav1.MicroTime
  std::string renew_time;
  int64_t leader_transitions = 0;

  json::object ToLeaseSpec() const;
  static LeaderElectionRecord FromLeaseSpec(const json::object* spec);
};

class LeaderElector {
 public:
  // InvalidArgument-style BadRequest unless identity, namespace and name are
  // set and lease_duration > renew_deadline > 1.2 * retry_period > 0 (as
  // client-go requires).
  static StatusOr<std::unique_ptr<LeaderElector>> Create(client::Client& client, Clock& clock,
                                                         LeaderElectionConfig config,
                                                         LeaderCallbacks callbacks);
  // Stops the elector.
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Starts campaigning on a thread of its own. Call once.
  void Start();
  // Stops campaigning; if leading, calls on_stopped_leading and (with
  // release_on_stop) releases the lease. Idempotent.
  void Stop();

  // True between on_started_leading and on_stopped_leading.
  bool IsLeading() const;
  // The holder last observed ("" when none).
  std::string Leader() const;
  // See Alarm::SleepingUntil.
  TimePoint SleepingUntil() const { return alarm_.SleepingUntil(); }
  // The watchdog's: the renew deadline it waits for while leading.
  TimePoint WatchdogSleepingUntil() const { return watchdog_alarm_.SleepingUntil(); }

 private:
  LeaderElector(client::Client& client, Clock& clock, LeaderElectionConfig config,
                LeaderCallbacks callbacks);

  void Run();
  bool Acquire();
  void Renew();
  bool TryAcquireOrRenew();
  bool UpdateLease(json::object lease, const LeaderElectionRecord& record);
  void Release();
  void SetObserved(const LeaderElectionRecord& record);
  bool ObservedIsUs() const;
  bool LeaseValid(TimePoint now) const;
  void MaybeReportTransition();
  bool SleepUntil(TimePoint deadline);
  void Watchdog();
  // Sets the deadline of the next renewal and wakes the watchdog.
  void RenewBy(TimePoint deadline);
  // Ends the term once: leading_ false and on_stopped_leading called.
  void EndTerm(const char* why);
  bool TermOver() const;
  bool Stopping() const;
  LeaderElectionRecord Record(TimePoint now) const;

  client::Client& client_;
  Clock& clock_;
  const LeaderElectionConfig config_;
  const LeaderCallbacks callbacks_;
  Alarm alarm_;
  Alarm watchdog_alarm_;

  // Owned by the elector thread.
  LeaderElectionRecord observed_;
  json::value observed_raw_;  // the Lease spec it came from
  TimePoint observed_time_;
  std::optional<json::object> lease_;  // as last read or written
  std::string reported_leader_;

  mutable Mutex mu_;
  bool leading_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::string leader_ GUARDED_BY(mu_);

  // While leading: the term ends if no renewal succeeds by then.
  TimePoint renew_by_ GUARDED_BY(mu_) = TimePoint::max();
  bool term_over_ GUARDED_BY(mu_) = true;  // on_stopped_leading is due or done
  // Held while a leading callback runs, so that they never overlap.
  Mutex term_mu_;

  Mutex join_mu_;
  std::thread thread_ GUARDED_BY(join_mu_);    // once started
  std::thread watchdog_ GUARDED_BY(join_mu_);  // once started
};

}  // namespace flotilla::runtime
