// FederationContext: what the federation's controllers share (DESIGN §2,
// modelled on member/context.h): the federation's client and clock, one
// controller manager, the registry of ready member clusters, informers on
// the federation (one per resource) and in every ready member (one per
// cluster and resource), one bounded pool for requests to members, the
// event recorders and one metrics registry.
//
// A controller is built with the context, registers its informers'
// handlers and its reconcilers in its constructor, and never starts
// anything itself; Start() then starts the member informers and the manager
// (which waits for every federation cache before any worker runs). Stop()
// stops everything in the order that lets nothing enqueue into a stopped
// queue.
//
// Thread-safe once started.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/metrics.h"
#include "base/mutex.h"
#include "base/token_bucket.h"
#include "client/client.h"
#include "federation/common/cluster_clients.h"
#include "federation/common/customizations.h"
#include "federation/common/dependencies.h"
#include "federation/common/member_informers.h"
#include "federation/common/names.h"
#include "federation/common/policies.h"
#include "federation/common/policy_status.h"
#include "federation/common/quotas.h"
#include "runtime/controller_manager.h"
#include "runtime/event_recorder.h"
#include "runtime/parallel.h"
#include "runtime/shared_informers.h"

namespace flotilla::federation {

class Reconciler;

struct ContextOptions {
  // Threads that send one check's requests to many members at once, shared
  // by every controller (the caller of a batch works too).
  int member_request_threads = 32;
  // Times requests to members for the latency metrics (a measurement, not
  // a decision); null: the real clock. Not owned.
  Clock* io_clock = nullptr;
  // --placement-move-qps and --placement-move-burst: how many objects per
  // second (beyond a burst) may begin to leave a ready cluster their
  // placement no longer admits (a policy, a cluster's labels or taints, or
  // the object's labels changed). 0: no limit.
  double move_qps = 0;
  int move_burst = 10;
};

class FederationContext {
 public:
  // `fed` (the federation's API, with rights to everything the controllers
  // manage) and `clock` must outlive the context.
  FederationContext(client::Client& fed, Clock& clock, ContextOptions options = {});
  // Stops.
  ~FederationContext();
  FederationContext(const FederationContext&) = delete;
  FederationContext& operator=(const FederationContext&) = delete;

  client::Client& fed() { return fed_; }
  Clock& clock() { return clock_; }
  Clock& io_clock() { return io_clock_; }
  runtime::ControllerManager& manager() { return manager_; }
  ClusterClients& clusters() { return clusters_; }
  // Informers on the federation's own objects. REQUIRES: For() only before
  // Start.
  runtime::SharedInformers& informers() { return informers_; }
  // The Cluster objects (labels for the cluster selector, present while a
  // cluster is joined).
  runtime::Informer& cluster_objects() { return informers_.For(kClusters); }
  // The propagation policies and where they place objects.
  const PropagationPolicies& policies() const { return policies_; }
  // The override policies and what they change in member copies.
  const OverridePolicies& overrides() const { return overrides_; }
  MemberInformers& members() { return members_; }
  // The interpreter's customizations, by the kind they target (a change
  // re-checks every object of that kind).
  const Customizations& customizations() const { return customizations_; }
  // What each propagation policy places: its status, its Events.
  PolicyStatuses& policy_statuses() { return *policy_statuses_; }
  // The federated resource quotas: their usage, the admission of writes.
  const FederatedQuotas& quotas() const { return quotas_; }
  // Where the objects that federated objects depend on are needed.
  Dependencies& dependencies() { return dependencies_; }
  runtime::WorkPool& pool() { return pool_; }
  // Paces the objects that begin to leave ready clusters (ContextOptions::
  // move_qps), across every controller.
  TokenBucket& moves() { return moves_; }
  metrics::Registry& metrics() { return metrics_; }
  // The recorder of events from `component` (their source), made on first
  // use.
  runtime::EventRecorder& Events(const std::string& component);

  // Calls `fn` whenever the set of clusters a controller may place on
  // changes: a cluster becomes ready, stops being ready or leaves, a
  // Cluster object is added, deleted, relabelled or moved (provider,
  // region, zones), or a propagation or override policy changes. `fn` only
  // enqueues. May be called once started (by a controller for a kind that
  // appeared). The id removes it (RemoveHook).
  using HookId = uint64_t;
  HookId OnClusterChange(std::function<void()> fn);
  // A controller that holds the objects of `resource` it `federates` with
  // the federation's finalizer says so, for FinalizesAtCreate. May be
  // called once started.
  using Federates = std::function<bool(const json::object&)>;
  HookId AddFinalizedResource(const client::ResourceRef& resource, Federates federates);
  // Removes what OnClusterChange or AddFinalizedResource added: it is not
  // called once this returns.
  void RemoveHook(HookId id);
  // True when a controller holds the new `obj` of group/plural with the
  // finalizer and a cluster is joined: the federation's admission then puts
  // the finalizer on in the create itself, instead of the controller
  // writing it before the first copy. Without a joined cluster there is
  // nothing to hold an object for, and a delete stays one write.
  bool FinalizesAtCreate(std::string_view group, std::string_view plural, const json::object& obj);

  // Every reconciler registers itself (reconciler.h), for the objects of
  // its kind to be re-checked from elsewhere: a changed customization, a
  // dependent that moved. May be called once started; a reconciler removes
  // itself before it goes.
  void AddReconciler(Reconciler& r);
  void RemoveReconciler(Reconciler& r);
  // Whether every reconciler registered before Start has checked each
  // object its informer held when it synced: until then the dependency
  // index may not know every dependent yet (it is built by the checks), and
  // a copy admitted only as someone's dependency is not deleted from a
  // cluster (a restart would otherwise take it away for a moment). Stays
  // true once true.
  bool DependentsKnown();
  // Re-checks every object of `api_version`/`kind`.
  void EnqueueKind(std::string_view api_version, std::string_view kind);
  // Re-checks the object `ns`/`name` of `api_version`/`kind` (`ns` is not
  // looked at for a cluster-scoped kind).
  void EnqueueObject(std::string_view api_version, std::string_view kind, const std::string& ns,
                     const std::string& name);
  // Whether a reconciler checks the cluster-scoped kind `api_version`/`kind`.
  bool ClusterScoped(std::string_view api_version, std::string_view kind) const;

  // When `cluster` last became ready; nullopt while it is not ready.
  std::optional<TimePoint> ReadySince(const std::string& cluster) const;
  // When Start() was called; nullopt before.
  std::optional<TimePoint> StartedAt() const;

  // Starts the member informers (subscribed to the registry before the
  // OnClusterChange callbacks, so that these find the member caches already
  // started or dropped), then the manager: returns once every
  // federation cache has synced and the workers run. Unavailable when Stop()
  // came first.
  Status Start();
  // Member informers first (they enqueue into the manager's queues), then
  // the manager, the federation's informers and the event recorders.
  // Idempotent.
  void Stop();

 private:
  client::Client& fed_;
  Clock& clock_;
  Clock& io_clock_;
  runtime::WorkPool pool_;
  TokenBucket moves_;
  metrics::Registry metrics_;
  ClusterClients clusters_;
  runtime::ControllerManager manager_;
  runtime::SharedInformers informers_;
  PropagationPolicies policies_;
  OverridePolicies overrides_;
  MemberInformers members_;
  Customizations customizations_;
  FederatedQuotas quotas_;
  std::optional<PolicyStatuses> policy_statuses_;  // made once the recorders can be
  Dependencies dependencies_;
  void ClustersChanged();
  // Re-checks the objects of the kind `customization` targets.
  void RecheckTarget(const json::object& customization);

  // Controllers added or removed once started change these: called under
  // the lock (they only enqueue or look at an object), so that a hook
  // removed is never called after.
  mutable Mutex hooks_mu_;
  std::vector<std::pair<HookId, std::function<void()>>> on_cluster_change_ GUARDED_BY(hooks_mu_);
  bool watching_clusters_ GUARDED_BY(hooks_mu_) = false;  // the Cluster handler is added
  struct Finalized {
    HookId id;
    client::ResourceRef resource;
    Federates federates;
  };
  std::vector<Finalized> finalized_ GUARDED_BY(hooks_mu_);
  HookId next_hook_ GUARDED_BY(hooks_mu_) = 1;
  // Enqueue calls under it (a reconciler's Enqueue only adds to a queue).
  std::vector<Reconciler*> reconcilers_ GUARDED_BY(hooks_mu_);
  // Those registered before Start, until their first pass is done.
  std::vector<Reconciler*> awaited_ GUARDED_BY(hooks_mu_);
  std::atomic<bool> dependents_known_ = false;
  int subscription_ = -1;
  mutable Mutex mu_;
  std::map<std::string, std::unique_ptr<runtime::EventRecorder>> events_ GUARDED_BY(mu_);
  std::map<std::string, TimePoint> ready_since_ GUARDED_BY(mu_);
  bool stopped_ GUARDED_BY(mu_) = false;
  std::optional<TimePoint> started_at_ GUARDED_BY(mu_);
};

}  // namespace flotilla::federation
