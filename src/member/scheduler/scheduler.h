// The simulated member's scheduler, in the manner of kube-scheduler's
// default profile: binds each pending pod (no spec.nodeName, schedulerName
// "default-scheduler" or empty, no schedulingGates, not being deleted) to a
// node that passes NodeUnschedulable, TaintToleration, NodeAffinity
// (nodeSelector and required terms) and NodeResourcesFit (cpu, memory, ephemeral storage and
// pod count against allocatable minus what the node's non-terminal pods
// request), choosing the best by least-allocated and balanced-allocation
// scores (ties: the first node by name, so runs are reproducible). It binds
// through the pods/binding subresource and records a "Scheduled" event.
//
// As kube-scheduler with percentageOfNodesToScore unset, it stops looking
// once it has found enough feasible nodes: in a cluster of 100 nodes or
// more, 50% of them less 1% per 125 nodes, at least 5% and at least 100
// (500 of 5,000), searching from where the previous pod's search ended so
// that every node gets its turn. Under 100 nodes every node is looked at,
// in name order.
//
// A pod that fits nowhere gets PodScheduled=False, reason Unschedulable,
// with kube-scheduler's message ("0/3 nodes are available: 3 Insufficient
// cpu. preemption: ...") and a FailedScheduling event, and is tried again
// when capacity may have appeared (a node added or its allocatable, labels,
// taints, schedulability or readiness changed; a bound pod deleted or
// finished) and every kRetryPeriod.
//
// Before the filters, VolumeBinding's PreFilter (filters.h): a pod whose
// claim is missing, being deleted or not yet bound under an Immediate class
// is unschedulable with kube's message, and tried again when a claim or
// class comes or changes.
//
// One worker, so two pods are never placed on the same free capacity; the
// pods it bound but the informer has not shown bound yet are counted on
// their node ("assumed", as kube-scheduler's cache does).
#pragma once

#include <map>
#include <set>
#include <string>

#include "api/resources.h"
#include "base/mutex.h"
#include "member/context.h"
#include "runtime/event_recorder.h"

namespace flotilla::member {

class Scheduler : public Component {
 public:
  static constexpr Duration kRetryPeriod = std::chrono::seconds(60);

  explicit Scheduler(ControllerContext& ctx);

 private:
  struct Assumed {
    std::string uid;
    std::string node;
    api::Resources requested;
    api::Resources non_zero;
  };
  struct Choice;
  struct Requests {
    api::Resources requested;
    api::Resources non_zero;
  };
  // A pod bound in the cache, counted on its node.
  struct Counted {
    std::string uid;
    std::string node;
    Requests requests;
  };

  StatusOr<runtime::Result> Reconcile(const std::string& key);
  Choice Choose(const json::object& pod);
  // Counts `pod` on its node while it occupies it (and no longer once it
  // does not), from the pod events.
  void Count(const json::object& pod);
  void Uncount(const std::string& key) REQUIRES(mu_);
  Status Bind(const json::object& pod, const std::string& node, const Choice& choice);
  Status MarkUnschedulable(const json::object& pod, const std::string& message,
                           uint64_t changes_seen);
  void PruneAssumed();
  void RetryUnschedulable();
  void Forget(const std::string& key);

  void OnPodUpdate(const runtime::ObjectPtr& old_pod, const runtime::ObjectPtr& new_pod);
  void OnPodDelete(const runtime::ObjectPtr& pod);

  client::Client& client_;
  Clock& clock_;
  runtime::Informer& pods_;
  runtime::Informer& nodes_;
  runtime::Informer& claims_;
  runtime::Informer& classes_;
  runtime::EventRecorder events_;
  runtime::Controller* controller_ = nullptr;

  Mutex mu_;
  std::set<std::string> unschedulable_ GUARDED_BY(mu_);  // pod keys
  // Counts the changes that may free capacity, so that a pod found not to
  // fit while one happened is tried again (kube-scheduler's move request
  // cycle).
  uint64_t capacity_changes_ GUARDED_BY(mu_) = 0;
  std::map<std::string, Assumed> assumed_ GUARDED_BY(mu_);  // by pod key
  // What the pods bound in the cache request, by node, kept by the pod
  // events as kube-scheduler's node cache is: a placement reads one sum per
  // node, not every pod (a pod's requests do not change once it is bound:
  // no in-place resize).
  std::map<std::string, Counted> counted_ GUARDED_BY(mu_);  // by pod key
  std::map<std::string, Requests> usage_ GUARDED_BY(mu_);   // by node
  // Where the next search for feasible nodes starts (an index into the
  // nodes in name order).
  size_t next_start_ GUARDED_BY(mu_) = 0;
};

}  // namespace flotilla::member
