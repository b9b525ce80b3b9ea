// The reconciler every propagating federation controller runs (DESIGN §2):
// one level-based Reconcile(key) per federated object, driven by a per-kind
// Strategy that says what the copy in each member cluster should be, when
// an existing copy is up to date, and what the federated object's status
// becomes. A federated kind is then a Strategy and its tests.
//
// One check of one federated object, over the ready clusters whose caches
// have synced (fanout.h: ReadyTargets):
//  1. An object being deleted is finalized: while it holds
//     api::kDeleteFromUnderlyingClustersFinalizer, the policy the API server
//     recorded decides (deletion.h): Orphan keeps the copies, as does a
//     propagation policy's preserveResourcesOnDeletion; Background and
//     Foreground delete the managed copies (asking a member whose cache
//     shows none, so that a copy created a moment ago is not left behind)
//     and wait until they are gone. Then Strategy::Finalize, then the
//     finalizer goes.
//  2. The cluster selector splits the clusters into admitted and not (a
//     cluster where an object that depends on this one has its copy is
//     admitted too: dependencies.h); a cluster without a
//     Cluster object (being unjoined) is neither: what it holds stays as it
//     is. An object without placement annotations takes
//     its selector from the propagation policy that places it (policies.h):
//     its cluster affinity, or the first of its cluster-affinity groups
//     whose ready clusters have room for it. An object about to leave a
//     ready cluster that holds its copy waits for its turn (the context's
//     move pace, --placement-move-qps) before anything of it is done.
//  3. Before the first write to a member the object gets the finalizer; the
//     policy that places it is recorded in its annotations (with an Event,
//     and Matched/Unmatched Events on the policies) when it changed, and
//     told to the policies' status (policy_status.h).
//  4. Strategy::Plan sets the copy each admitted cluster should have; the
//     override policies that apply there change it (a copy whose overrides
//     cannot apply is left as it is, with a Warning
//     ApplyOverridePolicyFailed, and listed in the policy's status); the
//     object's api::kOverridesAnnotation names them per cluster, written
//     when it changed. When the kind's interpreter customization
//     (customizations.h) defines GetDependencies, the objects it names are
//     recorded as needed where the copies go, and re-checked when that
//     changes.
//  5. Missing copies are created, all clusters at once; when some creates
//     fail, Strategy::Replan may plan again without those clusters and the
//     new creates follow ([E1] of seed 000).
//  6. Copies that are not up to date are updated; what the kind's Retain
//     script keeps of a member's copy is part of what the copy should be
//     (it is kept in each update, and a copy that differs only there is up
//     to date). A same-named member
//     object the federation did not create is left alone (with a Warning
//     NotManagedInCluster unless the strategy keeps quiet) or taken over
//     (Warning OverwriteInCluster), replacing it when it cannot be updated
//     into what is wanted; for an object a policy places, the policy's
//     conflictResolution decides (Overwrite takes over, Abort leaves).
//  7. Managed copies in ready clusters the selector no longer admits (unless
//     the strategy keeps them a while), and those the strategy marked
//     `remove`, are deleted (Background).
//  8. Strategy::Finish writes the status and says when to check again; a
//     write that lost a race with a member brings the check back soon.
//
// Metrics (registry of the context): flotilla_federation_replica_count_writes_total
// {kind, cluster} counts the updates that changed a copy's spec.replicas
// (none while a federated HPA scales a workload).
//
// Triggers: the federated object's own events (at once); a change of a
// copy in a member, found by its federated-object annotation or its name,
// after `member_change_delay`; a member cache that has just synced, and any
// change of the set of clusters, re-check every object. A strategy adds
// its own triggers with Enqueue.
//
// Thread-safe. A key is never reconciled by two workers at once.
#pragma once

#include <any>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "client/client.h"
#include "federation/common/cluster_selector.h"
#include "federation/common/context.h"
#include "federation/common/copy_versions.h"
#include "federation/common/customizations.h"
#include "federation/common/fanout.h"
#include "federation/common/rollout.h"
#include "federation/common/write_expectations.h"
#include "planner/preferences.h"
#include "runtime/controller_manager.h"

namespace flotilla::federation {

// The copy of the federated object in one admitted cluster.
struct Copy {
  Target target;
  std::string name;                     // its name there
  runtime::ObjectPtr existing;          // as the member's cache has it; null: none
  std::optional<json::object> written;  // as this check created or updated it
  // What the strategy wants there; nullopt: nothing (an existing copy is
  // left as it is). The reconciler stamps it with its hash
  // (copy_versions.h) before it compares or writes.
  std::optional<json::object> desired;
  uint64_t desired_hash = 0;
  // Create `desired` when there is no copy (false: only update one).
  bool create = true;
  // The strategy wants no copy here: a managed one is deleted (Background).
  bool remove = false;
  bool create_failed = false;  // this check's create failed

  const std::string& cluster() const { return target.cluster; }
  // The copy after this check's writes: written, else existing; null: none.
  const json::object* Current() const;
  // Current() exists, carries the managed-by label and is not being deleted.
  bool Managed() const;
};

// A breakdown annotation's value for a kind listed beside the workloads
// (api/federated.h): {"clusters": {name: {"planned", "ready"}}} for each
// copy the strategy wants, `cell` giving planned and ready from its
// managed copy (null: none yet).
struct BreakdownCell {
  int64_t planned = 0, ready = 0;
};
std::string CopyBreakdown(const std::vector<Copy>& copies,
                          const std::function<BreakdownCell(const json::object* current)>& cell);

// One check of one federated object.
struct Check {
  std::string key, ns, name;
  // The object as cached, with apiVersion and kind (and the finalizer once
  // held). Shared, with the cache where the cached object had both, so a
  // check copies no object it only reads; SetObj replaces it.
  const json::object& obj() const { return *obj_; }
  void SetObj(runtime::ObjectPtr obj) { obj_ = std::move(obj); }
  void SetObj(json::object obj) { obj_ = std::make_shared<const json::object>(std::move(obj)); }
  TimePoint now;
  std::vector<Copy> copies;  // the admitted ready clusters, by name
  // Ready clusters that do not serve the kind (MemberTargets::not_served),
  // admitted or not: they get no copy.
  std::vector<std::string> not_served;
  // Ready clusters the placement does not admit (they get no copy).
  std::vector<std::string> not_admitted;
  // The clusters the placement admits, ready or not (the annotations', or
  // the policy's chosen cluster-affinity group; spread constraints and
  // taints, which judge ready clusters only, are in `copies`).
  ClusterSelector selector;
  // A write lost a race with a member: check again soon.
  std::atomic<bool> retry = false;
  // A cluster-affinity group before the chosen one lacked room: check again
  // after ReconcilerOptions::room_recheck (its room is not an event).
  bool waiting_for_room = false;
  // A taint the policy tolerates for a while stops being tolerated then:
  // check again at that time.
  std::optional<TimePoint> taints_change_at;
  // A write failed: the check is retried with backoff once Finish has run.
  void Fail(const Status& s);
  void ClearError();
  Status error() const;
  // The propagation policy that places the object; null: its annotations,
  // or no policy, do (policies.h).
  PolicyPtr policy;
  // The kind's interpreter customization; null: none.
  CustomizationPtr custom;
  // What api::kOverridesAnnotation on the object should be ("": none),
  // once ApplyOverrides ran; RecordOverrides writes it when it differs.
  std::optional<std::string> overrides_annotation;
  // The strategy's own state between Plan and Finish.
  std::any state;

 private:
  runtime::ObjectPtr obj_ = std::make_shared<const json::object>();
  mutable Mutex mu_;
  Status error_ GUARDED_BY(mu_);  // the first failure
};

// What a same-named member object the federation did not create gets.
enum class Unmanaged { kLeaveQuietly, kWarn, kTakeOver };

class Strategy {
 public:
  virtual ~Strategy() = default;

  // The federated resource and kind; the copies are of the same resource.
  virtual const client::ResourceRef& resource() const = 0;
  virtual std::string kind() const = 0;
  // Member resources a check reads besides the copies'; a cluster is a
  // target only once their caches have synced.
  virtual std::vector<client::ResourceRef> MemberReads() const { return {}; }
  // False for objects the controller leaves on the federation.
  virtual bool Federates(const json::object& obj) const { return true; }
  // The copy's name in `cluster`.
  virtual std::string CopyName(const json::object& obj, const std::string& cluster) const;
  // The annotation that holds the kind's replica preferences; empty for
  // kinds without replicas. An object that has it is not placed by
  // policies.
  virtual std::string_view PreferencesAnnotation() const { return ""; }
  // What a workload asks of the clusters, for a policy's cluster-affinity
  // groups to tell whether a group can hold it; none for kinds without
  // replicas (any group with a ready cluster holds them).
  struct Demand {
    int64_t replicas = 0;
    const json::object* pod_template = nullptr;  // points into the object
  };
  virtual std::optional<Demand> DemandOf(const json::object& obj) const { return std::nullopt; }
  // False for kinds whose copies do not take override policies yet (their
  // controller compares copies' templates with the federation's).
  virtual bool TakesOverrides() const { return true; }

  // Sets desired (and create) of every copy. An error fails the check
  // (retried with backoff).
  virtual Status Plan(Check& check) = 0;
  // After creates failed in the copies marked create_failed: true to plan
  // again (their clusters are then planned without), create what the new
  // plan adds, and count the failures as handled (no backoff).
  virtual bool Replan(Check& check) { return false; }
  virtual bool UpToDate(const Copy& c) const = 0;
  // The existing copy with what the federation sets taken from desired.
  virtual json::object Updated(const Copy& c) const = 0;
  virtual Unmanaged OnUnmanaged(const Copy& c) const { return Unmanaged::kWarn; }
  // A take-over, or an update of a managed copy, that cannot be an update
  // (a field that cannot change differs): the object is deleted (its
  // dependents orphaned) and created anew.
  virtual bool MustReplace(const Copy& c) const { return false; }
  // True for a kind that nothing but its dependents (dependencies.h) places
  // when neither its annotations nor a policy do; false: such an object
  // goes to every cluster.
  virtual bool FollowsDependentsOnly() const { return false; }
  // After Plan: true keeps the managed copy in `cluster`, which the cluster
  // selector no longer admits, for now (a move off it is not done yet, or
  // it is in use there).
  virtual bool KeepNotAdmitted(const Check& check, const std::string& cluster) const {
    return false;
  }
  // Ends the events' messages about a write of `c` ("with 16 replicas").
  virtual std::string Detail(const Copy& c) const { return ""; }
  // Writes the status; returns when to check again (a failed write of the
  // check makes it come back with backoff instead).
  virtual StatusOr<runtime::Result> Finish(Check& check) = 0;

  // Deletion: more to do before the finalizer goes (e.g. objects the
  // controller made on the federation); false: not done, check again.
  virtual StatusOr<bool> Finalize(const json::object& obj) { return true; }
  // The object is gone: drop what was remembered of it.
  virtual void Forget(const std::string& key) {}
};

struct ReconcilerOptions {
  std::string name;  // the controller's
  int workers = 2;
  // How long after a change of a copy its federated object is checked.
  Duration member_change_delay = Duration::zero();
  // How long a ready cluster whose caches have not synced holds the checks
  // back before it is left out; zero: left out at once (its caches' sync
  // brings every object back).
  Duration sync_grace = Duration::zero();
  // A check whose write lost a race, or a deletion whose copies are still
  // going, comes back after this (member events often bring it sooner).
  Duration retry_soon = std::chrono::milliseconds(100);
  // How soon an object placed in a later cluster-affinity group, because an
  // earlier one lacked room, is checked again to see whether it fits there
  // now.
  Duration room_recheck = std::chrono::minutes(1);
  // How long a check waits at most for a member cache to show a write of
  // an earlier check (write_expectations.h); their events end the wait.
  Duration expectation_ttl = std::chrono::seconds(30);
  runtime::RateLimiterOptions backoff{.base_delay = std::chrono::milliseconds(100),
                                      .max_delay = std::chrono::seconds(30)};
};

class Reconciler {
 public:
  // Registers the controller, the federated informer's handler and the
  // member handlers with `ctx`. `ctx` and `strategy` must outlive it.
  Reconciler(FederationContext& ctx, Strategy& strategy, ReconcilerOptions options);
  // Unregisters all of it and stops the controller's workers (a kind that
  // went away: its CustomResourceDefinition was deleted). Not from one of
  // its own checks or handlers.
  ~Reconciler();
  Reconciler(const Reconciler&) = delete;
  Reconciler& operator=(const Reconciler&) = delete;

  runtime::Informer& objects() { return objects_; }
  runtime::Controller& controller() { return *controller_; }
  MemberWriter& writer() { return writer_; }
  runtime::EventRecorder& events() { return writer_.events(); }
  const ReconcilerOptions& options() const { return options_; }

  // Whether it checks the objects of `api_version`/`kind`.
  bool Reconciles(std::string_view api_version, std::string_view kind) const;
  const client::ResourceRef& resource() const { return strategy_.resource(); }
  // Checks `key` after `delay` (if it is a federated object of this kind).
  void Enqueue(const std::string& key, Duration delay = Duration::zero());
  void EnqueueAll();
  // Whether every object its informer held when it synced has been checked
  // (FederationContext::DependentsKnown); false before the informer syncs.
  bool FirstPassDone();

  // Whether c.Current(), a managed copy, is as c.desired wants it, on what
  // the federation owns and what the member made of its last write
  // (copy_versions.h); Strategy::UpToDate decides for a copy this process
  // has not written, or one whose kind retains fields a member changed.
  // REQUIRES: c.desired, stamped (true after Plan).
  bool CopyUpToDate(const Check& check, const Copy& c);
  // `s`, the outcome of one of the kind's scripts; a failure is also a
  // Warning event InterpreterFailed on the object.
  Status Interpreted(const Check& check, Status s);

  // Applies the override policies to every desired copy (step 4); a copy
  // whose overrides cannot apply is left as it is (a Warning Event
  // ApplyOverridePolicyFailed says so). For kinds that roll templates out
  // (their strategy's TakesOverrides is false and they call this from
  // Plan): a copy whose `new_template` entry is false keeps the template it
  // runs, as it is (it was overridden when it was written).
  void ApplyOverrides(Check& check, const std::vector<bool>* new_template = nullptr);
  // `tmpl` (the federation's pod template, or an older one) as the copy
  // `c`'s cluster gets it: the override policies that apply there applied;
  // `tmpl` itself when they cannot apply.
  json::object TemplateFor(const Check& check, const Copy& c, const json::object& tmpl) const;
  // The rollout of the federation's pod template over `check`'s copies
  // (rollout.h), for kinds whose copies carry it whole: a managed copy
  // exists, runs the template as overridden for its cluster (TemplateFor;
  // the plan's cluster_templates) or not, and is mid-update as `busy` says.
  RolloutPlan PlanTemplateRollout(const Check& check, RolloutMode mode,
                                  const std::function<bool(const json::object&)>& busy) const;
  // The planner preferences of the policy that places `check`'s object and
  // divides its `replicas` (DivisionPreferences over the admitted ready
  // clusters, their room for `pod_template`); nullopt for a Duplicated
  // policy. REQUIRES: check.policy.
  std::optional<planner::Preferences> PolicyDivision(const Check& check, int64_t replicas,
                                                     const json::object* pod_template) const;

 private:
  StatusOr<runtime::Result> Reconcile(const std::string& key);
  // The check of `key`; `deferred` is set when it stopped before deciding
  // (caches behind, clusters not synced, a write of the object failed).
  StatusOr<runtime::Result> CheckKey(const std::string& key, bool& deferred);
  StatusOr<runtime::Result> Delete(const json::object& obj);
  void Create(Check& check, std::vector<size_t> which);
  void CreateAll(Check& check);
  void UpdateAll(Check& check);
  void DeleteUnwanted(Check& check, const std::vector<Target>& not_admitted);
  // Updates `c`, or deletes and creates it when the strategy says it
  // MustReplace.
  StatusOr<json::object> Replace(Check& check, const Copy& c);
  // The copy of `check`'s object in `cluster` as its cache holds it.
  // The selector of the first of the policy's cluster-affinity groups that
  // can hold the object, among the `ready` clusters; the first group with
  // a ready cluster when none can, the first group when none has one.
  // Sets check.waiting_for_room when an earlier group lacked room.
  ClusterSelector ChooseAffinityGroup(Check& check, const std::vector<Target>& ready) const;
  // Each ready cluster as the object sees it through the cluster's taints
  // and its policy's tolerations: an untolerated NoSchedule taint cordons
  // the cluster for it, an untolerated NoExecute one drains it, a tolerated
  // cordon taint lifts the cordon (not a drain). The targets' Cluster
  // objects are replaced by the views.
  void SeeTaints(Check& check, std::vector<Target>& ready) const;
  // The policy's spread constraints choose among the copies `selector`
  // admits (those admitted only as a dependency stay); the others join
  // `not_admitted`. When they cannot be met, only the clusters that hold
  // the object keep it (a Warning Event says why).
  void Spread(Check& check, const ClusterSelector& selector, std::vector<Target>& not_admitted);
  // Records the policy that places the object in its annotations, when it
  // changed, and with `finalize` the federation's finalizer, when missing,
  // in the same write; true when the policy's annotations changed.
  StatusOr<bool> RecordPolicy(Check& check, bool finalize);
  // Writes check.overrides_annotation onto the object, when set and not
  // there yet.
  Status RecordOverrides(Check& check);
  // What a same-named member object the federation did not create gets: the
  // strategy's answer, except that an object placed by a policy is taken
  // over only when the policy's conflictResolution is Overwrite.
  Unmanaged OnUnmanaged(const Check& check, const Copy& c) const;
  // The policy that placed `obj` keeps its copies when it is deleted
  // (preserveResourcesOnDeletion).
  bool PreservedByPolicy(const json::object& obj) const;
  runtime::ObjectPtr Cached(const Check& check, const std::string& cluster,
                            const std::string& name) const;
  runtime::EventHandler MemberHandler(const std::string& cluster);
  void Forget(const std::string& key);
  // Zero when `check` may go on: it moves nothing out of a ready cluster,
  // or its move already began, or the context's move pace gave it a turn
  // now. Otherwise how long until its turn; nothing of it is done
  // meanwhile (its copies stay as they are).
  Duration PaceMove(const Check& check, const std::vector<Target>& not_admitted);
  // The objects that `check`'s names with GetDependencies are needed where
  // its copies go (step 4).
  Status RecordDependencies(const Check& check);
  // Whether an object that depends on `check`'s has its copy in `cluster`.
  bool NeededIn(const Check& check, const std::string& cluster) const;
  // The dependencies index's name of the object of `key`.
  std::string DependentId(const std::string& key) const;
  void EnqueueDependencies(const std::vector<DependencyRef>& refs);
  // Stamps every desired copy with its hash.
  static void StampAll(Check& check);
  // After a write of `c` that the member answered with `written`.
  void Remember(const std::string& key, const Copy& c, const json::object& written);

  FederationContext& ctx_;
  Strategy& strategy_;
  const ReconcilerOptions options_;
  const std::vector<client::ResourceRef> reads_;  // the copies' resource first
  runtime::Informer& objects_;
  MemberWriter writer_;
  metrics::CounterVec& replica_writes_;
  WriteExpectations expectations_;
  CopyVersions versions_;
  runtime::Controller* controller_ = nullptr;
  // What the destructor unregisters.
  runtime::Informer::HandlerId objects_handler_ = 0;
  std::vector<MemberInformers::HandlerId> member_handlers_;
  std::vector<FederationContext::HookId> hooks_;
  // The first pass: the objects the informer held when it synced, until
  // each has been checked.
  // True when this completed the first pass.
  bool Checked(const std::string& key);
  Mutex first_mu_;
  bool first_listed_ GUARDED_BY(first_mu_) = false;
  std::set<std::string> first_pending_ GUARDED_BY(first_mu_);
  // The objects whose move out of a ready cluster began (PaceMove), until
  // a check finds nothing left there.
  Mutex moving_mu_;
  std::set<std::string> moving_ GUARDED_BY(moving_mu_);
};

// `obj` with the apiVersion and kind of `resource`/`kind` (list items and
// watch events may lack them; events need them).
json::object Typed(const client::ResourceRef& resource, const std::string& kind, json::object obj);
// The same for a shared object: `obj` itself when it has both already.
runtime::ObjectPtr Typed(const client::ResourceRef& resource, const std::string& kind,
                         runtime::ObjectPtr obj);

}  // namespace flotilla::federation
