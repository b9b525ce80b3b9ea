// The federated ReplicaSet controller (replicaset_controller.h).
#include "federation/replicaset/replicaset_controller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <sstream>

#include "api/annotations.h"
#include "api/federated.h"
#include "federation/cluster/cluster_controller.h"
#include "federation/common/cluster_selector.h"
#include "federation/common/deletion.h"
#include "federation/common/member_copy.h"
#include "federation/replicaset/local_replicaset.h"
#include "planner/preferences.h"
#include "runtime/parallel.h"

namespace flotilla::federation::replicaset {
namespace {

constexpr std::array<double, 8> kLatencyBuckets = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 2.5};

json::object WithKind(const json::object& obj) {
  json::object out = obj;
  out["apiVersion"] = "apps/v1";
  out["kind"] = "ReplicaSet";
  return out;
}

// The name of the ReplicaSet that controls `pod`; "" when none does.
std::string OwnerReplicaSet(const json::object& pod) {
  const json::value* refs = Find(pod, "metadata.ownerReferences");
  if (refs == nullptr || !refs->is_array()) return "";
  for (const json::value& r : refs->get_array()) {
    if (!r.is_object()) continue;
    const json::object& ref = r.get_object();
    if (GetBool(ref, "controller").value_or(false) && GetString(ref, "kind") == "ReplicaSet") {
      return std::string(GetString(ref, "name").value_or(""));
    }
  }
  return "";
}

// The PodScheduled=False condition of a pod no node took; null when it has
// none yet.
const json::object* NotScheduled(const json::object& pod) {
  const json::value* conds = Find(pod, "status.conditions");
  if (conds == nullptr || !conds->is_array()) return nullptr;
  for (const json::value& c : conds->get_array()) {
    if (!c.is_object()) continue;
    const json::object& cond = c.get_object();
    if (GetString(cond, "type") == "PodScheduled" && GetString(cond, "status") == "False") {
      return &cond;
    }
  }
  return nullptr;
}

// cluster -> what the last check planned there, from the breakdown
// annotation; {} when there is none or it does not parse.
json::object LastPlanned(const json::object& frs) {
  auto breakdown = ParseJsonObject(api::AnnotationAt(frs, api::kReplicaSetStatusAnnotation));
  const json::value* clusters = breakdown.ok() ? Find(*breakdown, "clusters") : nullptr;
  json::object out;
  if (clusters == nullptr || !clusters->is_object()) return out;
  for (const auto& [name, c] : clusters->get_object()) {
    const json::value* planned = c.is_object() ? c.get_object().if_contains("planned") : nullptr;
    if (planned != nullptr && (planned->is_int64() || planned->is_uint64())) {
      out[name] = *planned;
    }
  }
  return out;
}

std::string Describe(const planner::ReplicaCounts& counts) {
  std::string out;
  for (const auto& [cluster, n] : counts) {
    if (!out.empty()) out += ", ";
    out += cluster + "=" + std::to_string(n);
  }
  return out.empty() ? "none" : out;
}

std::string Describe(const Status& s) {
  std::string out = s.ToString();
  return out.size() > 300 ? out.substr(0, 300) + "..." : out;
}

}  // namespace

struct ReplicaSetController::Member {
  std::string name;
  std::shared_ptr<client::Client> client;
  std::shared_ptr<runtime::Informer> replicasets;
  std::shared_ptr<runtime::Informer> pods;
};

// What the controller remembers of one federated ReplicaSet between checks
// (seed 000 [I4]: the pods' status change times). Only the check of its key
// touches it.
struct ReplicaSetController::Workload {
  // cluster -> pod uid -> since when it waits to be scheduled
  std::map<std::string, std::map<std::string, TimePoint>> pending_since;
  // cluster -> since when some of its pods are not even created ([E5])
  std::map<std::string, TimePoint> missing_since;
  // cluster -> when the create it rejected is tried again ([E1])
  std::map<std::string, TimePoint> create_retry_at;
  // The last placement, offline clusters included, for the moved count.
  std::optional<planner::ReplicaCounts> last_plan;
  // What the last check planned per cluster, from the breakdown annotation
  // (it survives a restart of the federation).
  json::object last_planned;
};

// One check of one federated ReplicaSet.
struct ReplicaSetController::Check {
  json::object frs;
  std::string ns, name, key;
  planner::Preferences prefs;
  Workload* workload = nullptr;
  TimePoint now;
  std::vector<Member> members;
  std::vector<ClusterView> views;
  std::vector<runtime::ObjectPtr> cached;            // the local ReplicaSets as cached
  std::vector<std::optional<json::object>> written;  // as created or updated now
  Targets targets;
  std::vector<json::object> desired;
  std::atomic<bool> retry = false;  // a write lost a race with the member: check again soon
};

ReplicaSetController::ReplicaSetController(client::Client& fed, runtime::ControllerManager& manager,
                                           Clock& clock, ClusterClients& clusters,
                                           ReplicaSetControllerOptions options)
    : fed_(fed),
      clock_(clock),
      clusters_(clusters),
      options_(options),
      frs_(fed, kReplicaSets, clock),
      cluster_objects_(fed, kClusters, clock),
      members_(clusters, {kReplicaSets, kPods}, clock),
      events_(fed, clock, runtime::EventSource{.component = "federated-replicaset-controller"}) {
  controller_ = &manager.AddController(kName, std::max(1, options_.workers),
                                       [this](const std::string& key) { return Reconcile(key); });
  frs_.AddEventHandler(controller_->EnqueueHandler());
  auto labels_changed = [](const runtime::ObjectPtr& a, const runtime::ObjectPtr& b) {
    const json::value* la = Find(*a, "metadata.labels");
    const json::value* lb = Find(*b, "metadata.labels");
    return (la == nullptr) != (lb == nullptr) || (la != nullptr && *la != *lb);
  };
  cluster_objects_.AddEventHandler(
      {.on_add = [this](const runtime::ObjectPtr&) { EnqueueAll(); },
       .on_update =
           [this, labels_changed](const runtime::ObjectPtr& a, const runtime::ObjectPtr& b) {
             if (labels_changed(a, b)) EnqueueAll();
           },
       .on_delete = [this](const runtime::ObjectPtr&) { EnqueueAll(); }});
  manager.AddInformer(&frs_);
  manager.AddInformer(&cluster_objects_);
  members_.AddHandlerFactory(
      [this](const std::string&, const client::ResourceRef& kind) { return MemberHandler(kind); });
  members_.Start();
  subscription_ =
      clusters_.Subscribe({.on_ready =
                               [this](const std::string& name, std::shared_ptr<client::Client>) {
                                 {
                                   std::lock_guard lock(mu_);
                                   ready_since_[name] = clock_.Now();
                                 }
                                 EnqueueAll();
                               },
                           .on_not_ready =
                               [this](const std::string& name) {
                                 {
                                   std::lock_guard lock(mu_);
                                   ready_since_.erase(name);
                                 }
                                 EnqueueAll();
                               },
                           .on_removed =
                               [this](const std::string& name) {
                                 {
                                   std::lock_guard lock(mu_);
                                   ready_since_.erase(name);
                                 }
                                 EnqueueAll();
                               }});
}

ReplicaSetController::~ReplicaSetController() { Stop(); }

void ReplicaSetController::Stop() {
  if (subscription_ >= 0) clusters_.Unsubscribe(subscription_);
  subscription_ = -1;
  members_.Stop();
}

runtime::EventHandler ReplicaSetController::MemberHandler(const client::ResourceRef& kind) {
  bool pod = kind.resource == kPods.resource;
  auto enqueue = [this, pod](const runtime::ObjectPtr& obj) { EnqueueFromMember(obj, pod); };
  return {.on_add = enqueue,
          .on_update = [enqueue](const runtime::ObjectPtr&,
                                 const runtime::ObjectPtr& obj) { enqueue(obj); },
          .on_delete = enqueue,
          .on_synced = [this] { EnqueueAll(); }};
}

void ReplicaSetController::EnqueueFromMember(const runtime::ObjectPtr& obj, bool pod) {
  std::string ns = StringAt(*obj, "metadata.namespace");
  std::string name = pod ? OwnerReplicaSet(*obj) : StringAt(*obj, "metadata.name");
  if (name.empty()) return;
  std::string key = runtime::ObjectKey(ns, name);
  if (frs_.cache().Get(key) == nullptr) return;
  controller_->queue().AddAfter(key, options_.member_change_delay);
}

void ReplicaSetController::EnqueueAll() {
  for (const std::string& key : frs_.cache().Keys()) controller_->queue().Add(key);
}

ReplicaSetController::Workload& ReplicaSetController::WorkloadFor(const std::string& key) {
  std::lock_guard lock(mu_);
  std::unique_ptr<Workload>& w = workloads_[key];
  if (!w) w = std::make_unique<Workload>();
  return *w;
}

void ReplicaSetController::Forget(const std::string& key) {
  std::lock_guard lock(mu_);
  workloads_.erase(key);
}

template <typename Call>
auto ReplicaSetController::Timed(const std::string& cluster, Call call) -> decltype(call()) {
  TimePoint start = RealClock().Now();
  auto result = call();
  Record(cluster, RealClock().Now() - start, !result.ok());
  return result;
}

void ReplicaSetController::Record(const std::string& cluster, Duration took, bool failed) {
  double seconds = std::chrono::duration<double>(took).count();
  std::lock_guard lock(mu_);
  RequestStats& s = requests_[cluster];
  if (s.buckets.empty()) s.buckets.resize(kLatencyBuckets.size() + 1);
  ++s.count;
  s.failures += failed ? 1 : 0;
  s.seconds += seconds;
  size_t b = 0;
  while (b < kLatencyBuckets.size() && seconds > kLatencyBuckets[b]) ++b;
  ++s.buckets[b];
}

runtime::Result ReplicaSetController::Soon() const {
  // Never zero (that would drop the check) and no growing backoff: the
  // member's own events bring the key back too.
  return runtime::Result{.requeue_after =
                             std::max<Duration>(options_.member_change_delay, kRetryDelay)};
}

StatusOr<runtime::Result> ReplicaSetController::Reconcile(const std::string& key) {
  runtime::ObjectPtr cached = frs_.cache().Get(key);
  if (cached == nullptr) {
    Forget(key);
    return runtime::Result{};
  }
  Check check;
  check.frs = WithKind(*cached);
  if (IsBeingDeleted(check.frs)) return Delete(check.frs);
  check.key = key;
  check.ns = StringAt(check.frs, "metadata.namespace");
  check.name = StringAt(check.frs, "metadata.name");
  check.now = clock_.Now();

  std::string prefs_text = api::AnnotationAt(check.frs, planner::kReplicaSetPreferencesAnnotation);
  if (prefs_text.empty()) {
    check.prefs = planner::Preferences::Default();
  } else {
    auto prefs = planner::ParsePreferences(prefs_text);
    if (!prefs.ok()) {
      // Admission rejects these; one stored before cannot be planned.
      events_.Event(check.frs, runtime::kEventTypeWarning, "InvalidPreferences",
                    Describe(prefs.status()));
      return runtime::Result{};
    }
    check.prefs = *std::move(prefs);
  }
  auto selector = ClusterSelector::Of(check.frs);
  if (!selector.ok()) {
    events_.Event(check.frs, runtime::kEventTypeWarning, "InvalidClusterSelector",
                  Describe(selector.status()));
    return runtime::Result{};
  }

  std::vector<Member> not_admitted;
  std::optional<TimePoint> next_check;
  {
    auto members = Members();
    if (!members) return runtime::Result{.requeue_after = options_.sync_grace};
    check.members = *std::move(members);
  }
  std::erase_if(check.members, [&](const Member& m) {
    runtime::ObjectPtr c = cluster_objects_.cache().Get(m.name);
    // No Cluster object: the cluster is leaving; what it holds stays.
    if (c == nullptr) return true;
    bool admitted = selector->Matches(*c);
    if (!admitted) not_admitted.push_back(m);
    return !admitted;
  });

  FLOTILLA_ASSIGN_OR_RETURN(json::object with_finalizer,
                            EnsureFederationFinalizer(fed_, kReplicaSets, check.frs));
  check.frs = WithKind(with_finalizer);

  check.workload = &WorkloadFor(key);
  check.workload->last_planned = LastPlanned(check.frs);
  for (const Member& m : check.members) {
    check.cached.push_back(m.replicasets->lister().Get(check.ns, check.name));
    check.views.push_back(View(m, check.cached.back(), *check.workload, check.now, &next_check));
  }
  // Clusters that left: their memory goes.
  auto left = [&](const auto& entry) {
    return std::none_of(check.members.begin(), check.members.end(),
                        [&](const Member& m) { return m.name == entry.first; });
  };
  std::erase_if(check.workload->missing_since, left);
  std::erase_if(check.workload->create_retry_at, left);
  std::erase_if(check.workload->pending_since, left);

  Apply(check);

  // Local ReplicaSets in ready clusters the selector no longer admits go.
  runtime::ParallelFor(not_admitted.size(), options_.parallel_requests, [&](size_t i) {
    const Member& m = not_admitted[i];
    runtime::ObjectPtr lrs = m.replicasets->lister().Get(check.ns, check.name);
    if (lrs == nullptr || !IsManaged(*lrs) || IsBeingDeleted(*lrs)) return;
    client::DeleteOptions opts{.propagation_policy = "Background",
                               .precondition_uid = StringAt(*lrs, "metadata.uid")};
    Status s = Timed(m.name, [&] {
      Status st = m.client->Delete(kReplicaSets, check.ns, check.name, opts);
      return st.Is(Reason::kNotFound) ? Status::Ok() : st;
    });
    if (s.ok()) {
      events_.Event(check.frs, runtime::kEventTypeNormal, "DeleteInCluster",
                    "Deleted the local ReplicaSet in cluster " + m.name +
                        ", which the cluster selector no longer admits");
    } else {
      events_.Event(check.frs, runtime::kEventTypeWarning, "FailedDeleteInCluster",
                    "Deleting the local ReplicaSet in cluster " + m.name + ": " + Describe(s));
    }
  });

  FLOTILLA_RETURN_IF_ERROR(WriteStatus(check));

  // Not in its desired state yet: check again later ([I7], [I8]).
  bool settled = true;
  for (size_t i = 0; i < check.members.size(); ++i) {
    const json::object* lrs = check.written[i]  ? &*check.written[i]
                              : check.cached[i] ? check.cached[i].get()
                                                : nullptr;
    int64_t want = check.targets.replicas[check.members[i].name];
    bool ready = lrs == nullptr ? want == 0
                                : IntAt(*lrs, "status.readyReplicas") == want &&
                                      IntAt(*lrs, "status.replicas") == want;
    settled = settled && ready && check.views[i].pending == 0 && !check.views[i].create_failed;
  }
  Duration after = settled ? Duration::zero() : options_.recheck_delay;
  if (next_check) {
    Duration until = std::max<Duration>(*next_check - check.now, std::chrono::milliseconds(1));
    after = after == Duration::zero() ? until : std::min(after, until);
  }
  if (check.retry) {
    // A write lost a race with the member: again soon.
    Duration soon = Soon().requeue_after;
    after = after == Duration::zero() ? soon : std::min(after, soon);
  }
  return runtime::Result{.requeue_after = after};
}

std::optional<std::vector<ReplicaSetController::Member>> ReplicaSetController::Members() {
  std::vector<Member> out;
  TimePoint now = clock_.Now();
  bool waiting = false;
  for (const std::string& name : members_.Clusters()) {
    Member m{.name = name,
             .client = clusters_.Get(name),
             .replicasets = members_.Get(name, kReplicaSets.resource),
             .pods = members_.Get(name, kPods.resource)};
    if (!m.client || !m.replicasets || !m.pods) continue;
    if (!m.replicasets->HasSynced() || !m.pods->HasSynced()) {
      std::lock_guard lock(mu_);
      auto since = ready_since_.find(name);
      if (since == ready_since_.end() || now < since->second + options_.sync_grace) waiting = true;
      continue;
    }
    out.push_back(std::move(m));
  }
  if (waiting) return std::nullopt;
  return out;
}

ClusterView ReplicaSetController::View(const Member& m, const runtime::ObjectPtr& lrs, Workload& w,
                                       TimePoint now, std::optional<TimePoint>* next_check) const {
  auto sooner = [&](TimePoint t) {
    if (!*next_check || t < **next_check) *next_check = t;
  };
  ClusterView v{.name = m.name};
  if (auto retry = w.create_retry_at.find(m.name); retry != w.create_retry_at.end()) {
    if (now < retry->second) {
      v.create_failed = true;
      sooner(retry->second);
    } else {
      w.create_retry_at.erase(retry);
    }
  }
  if (lrs == nullptr || !IsManaged(*lrs) || IsBeingDeleted(*lrs)) {
    w.pending_since.erase(m.name);
    w.missing_since.erase(m.name);
    return v;
  }
  v.placed = IntAt(*lrs, "spec.replicas");
  v.current = v.placed;
  if (const json::value* planned = w.last_planned.if_contains(m.name)) {
    v.current = planned->to_number<int64_t>();
  }
  std::map<std::string, TimePoint>& before = w.pending_since[m.name];
  std::map<std::string, TimePoint> pending;
  int64_t live = 0;
  auto waited = [&](TimePoint since) {
    if (now - since >= options_.unschedulable_threshold) {
      v.full = true;
    } else {
      sooner(since + options_.unschedulable_threshold);
    }
  };
  for (const runtime::ObjectPtr& pod : m.pods->lister().ByOwner(StringAt(*lrs, "metadata.uid"))) {
    if (IsBeingDeleted(*pod)) continue;
    ++live;
    if (!StringAt(*pod, "spec.nodeName").empty()) {
      ++v.scheduled;
      continue;
    }
    std::string uid = StringAt(*pod, "metadata.uid");
    auto seen = before.find(uid);
    TimePoint since = seen != before.end() ? seen->second : now;
    // The member's own record (the scheduler's verdict) survives a restart
    // of the federation.
    TimePoint changed;
    const json::object* cond = NotScheduled(*pod);
    if (cond != nullptr &&
        ParseRfc3339(std::string(GetString(*cond, "lastTransitionTime").value_or("")), &changed) &&
        changed < since) {
      since = changed;
    }
    pending[uid] = since;
    ++v.pending;
    waited(since);
  }
  before = std::move(pending);
  int64_t missing = std::max<int64_t>(0, v.placed - live);
  if (missing > 0) {
    v.pending += missing;
    waited(w.missing_since.try_emplace(m.name, now).first->second);
  } else {
    w.missing_since.erase(m.name);
  }
  return v;
}

void ReplicaSetController::Apply(Check& check) {
  const size_t n = check.members.size();
  check.written.assign(n, std::nullopt);
  int64_t replicas = IntAt(check.frs, "spec.replicas");
  auto plan = [&] {
    check.targets = ComputeTargets(replicas, check.views, check.key, check.prefs);
    check.desired.clear();
    for (const Member& m : check.members) {
      check.desired.push_back(DesiredLocal(check.frs, check.targets.replicas[m.name]));
    }
  };
  plan();

  // Creates first: a cluster that rejects one is planned without ([E1]).
  auto creates = [&] {
    std::vector<size_t> todo;
    for (size_t i = 0; i < n; ++i) {
      if (check.cached[i] == nullptr && !check.written[i] && !check.views[i].create_failed &&
          check.targets.replicas[check.members[i].name] > 0) {
        todo.push_back(i);
      }
    }
    std::vector<Status> failed(n, Status::Ok());
    runtime::ParallelFor(todo.size(), options_.parallel_requests, [&](size_t t) {
      size_t i = todo[t];
      const Member& m = check.members[i];
      auto made =
          Timed(m.name, [&] { return m.client->Create(kReplicaSets, check.ns, check.desired[i]); });
      if (made.ok()) {
        check.written[i] = *std::move(made);
        events_.Event(check.frs, runtime::kEventTypeNormal, "CreateInCluster",
                      "Created the local ReplicaSet in cluster " + m.name + " with " +
                          std::to_string(check.targets.replicas.at(m.name)) + " replicas");
      } else if (made.status().Is(Reason::kAlreadyExists)) {
        check.retry = true;  // the cache is behind the member
      } else {
        failed[i] = made.status();
      }
    });
    bool any = false;
    for (size_t i = 0; i < n; ++i) {
      if (failed[i].ok()) continue;
      any = true;
      check.views[i].create_failed = true;
      check.workload->create_retry_at[check.members[i].name] = check.now + options_.recheck_delay;
      events_.Event(check.frs, runtime::kEventTypeWarning, "FailedCreateInCluster",
                    "Creating the local ReplicaSet in cluster " + check.members[i].name +
                        " failed (retried in " +
                        std::to_string(
                            std::chrono::duration_cast<std::chrono::seconds>(options_.recheck_delay)
                                .count()) +
                        "s; its replicas go elsewhere meanwhile): " + Describe(failed[i]));
    }
    return any;
  };
  if (creates()) {
    plan();
    creates();  // clusters that now get replicas
  }

  // An event when the placement changes; replicas that left one cluster
  // for another (an offline one's included) count as moved.
  planner::ReplicaCounts before, after;
  for (size_t i = 0; i < n; ++i) {
    const std::string& name = check.members[i].name;
    int64_t was = check.views[i].placed;
    int64_t now = check.targets.replicas[name];
    if (was == 0 && now == 0) continue;
    before[name] = was;
    after[name] = now;
  }
  uint64_t moved = 0;
  std::optional<planner::ReplicaCounts>& last = check.workload->last_plan;
  if (last) {
    int64_t added = 0, removed = 0;
    for (const auto& [name, was] : *last) {
      auto now = after.find(name);
      removed += std::max<int64_t>(0, was - (now == after.end() ? 0 : now->second));
    }
    for (const auto& [name, now] : after) {
      auto was = last->find(name);
      added += std::max<int64_t>(0, now - (was == last->end() ? 0 : was->second));
    }
    moved = static_cast<uint64_t>(std::min(added, removed));
  }
  last = after;
  if (before != after) {
    events_.Event(check.frs, runtime::kEventTypeNormal, "PlacementChanged",
                  "Replicas per cluster: " + Describe(after) + " (were " + Describe(before) + ")");
  }
  if (before != after || moved > 0) {
    std::lock_guard lock(mu_);
    placement_changes_ += before != after ? 1 : 0;
    replicas_moved_ += moved;
  }

  // Then updates, and same-named local ReplicaSets taken over ([E2]).
  std::vector<size_t> todo;
  for (size_t i = 0; i < n; ++i) {
    const runtime::ObjectPtr& lrs = check.cached[i];
    if (check.written[i] || lrs == nullptr || IsBeingDeleted(*lrs)) continue;
    bool managed = IsManaged(*lrs);
    if (managed ? NeedsUpdate(*lrs, check.desired[i])
                : check.targets.replicas[check.members[i].name] > 0) {
      todo.push_back(i);
    }
  }
  runtime::ParallelFor(todo.size(), options_.parallel_requests, [&](size_t t) {
    size_t i = todo[t];
    const Member& m = check.members[i];
    const json::object& lrs = *check.cached[i];
    bool managed = IsManaged(lrs);
    auto updated = Timed(m.name, [&]() -> StatusOr<json::object> {
      const json::value* selector = Find(lrs, "spec.selector");
      const json::value* wanted = Find(check.desired[i], "spec.selector");
      if (managed || selector == nullptr || wanted == nullptr || *selector == *wanted) {
        return m.client->Update(kReplicaSets, check.ns, Updated(lrs, check.desired[i]));
      }
      // A selector cannot change: replace the ReplicaSet, leaving its pods
      // for the new one to adopt where they match ([E2]).
      client::DeleteOptions orphan{.propagation_policy = "Orphan",
                                   .precondition_uid = StringAt(lrs, "metadata.uid")};
      FLOTILLA_RETURN_IF_ERROR(m.client->Delete(kReplicaSets, check.ns, check.name, orphan));
      return m.client->Create(kReplicaSets, check.ns, check.desired[i]);
    });
    if (updated.ok()) {
      check.written[i] = *std::move(updated);
      if (managed) {
        events_.Event(check.frs, runtime::kEventTypeNormal, "UpdateInCluster",
                      "Updated the local ReplicaSet in cluster " + m.name + " (" +
                          std::to_string(check.targets.replicas.at(m.name)) + " replicas)");
      } else {
        events_.Event(check.frs, runtime::kEventTypeWarning, "OverwriteInCluster",
                      "A ReplicaSet " + check.name +
                          " the federation did not create existed in "
                          "cluster " +
                          m.name +
                          "; it now follows this federated ReplicaSet "
                          "and may adopt the pods its selector matches");
      }
    } else if (updated.status().Is(Reason::kConflict) || updated.status().Is(Reason::kNotFound) ||
               updated.status().Is(Reason::kAlreadyExists)) {
      check.retry = true;  // changed or deleted meanwhile: the next check sees it
    } else {
      events_.Event(
          check.frs, runtime::kEventTypeWarning, "FailedUpdateInCluster",
          "Updating the local ReplicaSet in cluster " + m.name + ": " + Describe(updated.status()));
      check.retry = true;
    }
  });
}

Status ReplicaSetController::WriteStatus(const Check& check) {
  std::vector<LocalStatus> locals;
  for (size_t i = 0; i < check.members.size(); ++i) {
    const std::string& name = check.members[i].name;
    LocalStatus l{.cluster = name, .planned = check.targets.replicas.at(name)};
    l.pending = check.views[i].pending;
    if (auto c = check.targets.capacity.find(name); c != check.targets.capacity.end()) {
      l.estimated_capacity = c->second;
    }
    const json::object* lrs = check.written[i]  ? &*check.written[i]
                              : check.cached[i] ? check.cached[i].get()
                                                : nullptr;
    if (lrs != nullptr && IsManaged(*lrs)) {
      l.replicas = IntAt(*lrs, "status.replicas");
      l.fully_labeled = IntAt(*lrs, "status.fullyLabeledReplicas");
      l.ready = IntAt(*lrs, "status.readyReplicas");
      l.available = IntAt(*lrs, "status.availableReplicas");
      l.observed = !NeedsUpdate(*lrs, check.desired[i]) &&
                   IntAt(*lrs, "status.observedGeneration") >= IntAt(*lrs, "metadata.generation");
    } else {
      l.observed = l.planned == 0;
    }
    locals.push_back(std::move(l));
  }
  json::object frs = check.frs;
  std::string breakdown = BreakdownAnnotation(locals);
  if (api::AnnotationAt(frs, api::kReplicaSetStatusAnnotation) != breakdown) {
    json::object annotated = frs;
    json::value& annotations = EnsureObject(annotated, "metadata")["annotations"];
    if (!annotations.is_object()) annotations = json::object();
    annotations.as_object()[api::kReplicaSetStatusAnnotation] = breakdown;
    FLOTILLA_ASSIGN_OR_RETURN(frs, fed_.Update(kReplicaSets, check.ns, annotated));
  }
  json::object status = AggregateStatus(frs, locals);
  const json::object* current = GetObject(frs, "status");
  if (current != nullptr && *current == status) return Status::Ok();
  frs["status"] = std::move(status);
  return fed_.UpdateStatus(kReplicaSets, check.ns, frs).status();
}

StatusOr<runtime::Result> ReplicaSetController::Delete(const json::object& frs) {
  std::string key = runtime::ObjectKey(frs);
  if (!HasFinalizer(frs, api::kDeleteFromUnderlyingClustersFinalizer)) {
    Forget(key);
    return runtime::Result{};
  }
  if (!DeletesMemberCopies(frs)) {
    FLOTILLA_RETURN_IF_ERROR(RemoveFederationFinalizer(fed_, kReplicaSets, frs).status());
    Forget(key);
    return runtime::Result{};
  }
  std::string policy = api::AnnotationAt(frs, api::kDeletionPropagationAnnotation);
  std::string ns = StringAt(frs, "metadata.namespace");
  std::string name = StringAt(frs, "metadata.name");
  std::vector<Member> members;
  for (const std::string& cluster : members_.Clusters()) {
    Member m{.name = cluster,
             .client = clusters_.Get(cluster),
             .replicasets = members_.Get(cluster, kReplicaSets.resource)};
    if (m.client && m.replicasets && m.replicasets->HasSynced()) members.push_back(std::move(m));
  }
  std::atomic<int> remaining = 0;
  runtime::ParallelFor(members.size(), options_.parallel_requests, [&](size_t i) {
    const Member& m = members[i];
    runtime::ObjectPtr lrs = m.replicasets->lister().Get(ns, name);
    if (lrs == nullptr) {
      // The cache may lag a local ReplicaSet created just now: ask the member.
      auto live = Timed(m.name, [&] { return m.client->Get(kReplicaSets, ns, name); });
      if (live.ok()) {
        lrs = std::make_shared<const json::object>(*std::move(live));
      } else if (!live.status().Is(Reason::kNotFound)) {
        ++remaining;  // cannot tell: check again
        return;
      }
    }
    if (lrs == nullptr || !IsManaged(*lrs)) return;
    ++remaining;
    if (IsBeingDeleted(*lrs)) return;
    client::DeleteOptions opts{.propagation_policy = policy,
                               .precondition_uid = StringAt(*lrs, "metadata.uid")};
    Status s = Timed(m.name, [&] {
      Status st = m.client->Delete(kReplicaSets, ns, name, opts);
      return st.Is(Reason::kNotFound) ? Status::Ok() : st;
    });
    if (s.ok()) {
      events_.Event(frs, runtime::kEventTypeNormal, "DeleteInCluster",
                    "Deleted the local ReplicaSet in cluster " + m.name);
    } else {
      events_.Event(frs, runtime::kEventTypeWarning, "FailedDeleteInCluster",
                    "Deleting the local ReplicaSet in cluster " + m.name + ": " + Describe(s));
    }
  });
  if (remaining > 0) return Soon();
  FLOTILLA_RETURN_IF_ERROR(RemoveFederationFinalizer(fed_, kReplicaSets, frs).status());
  Forget(key);
  return runtime::Result{};
}

std::string ReplicaSetController::RenderMetrics() const {
  std::map<std::string, RequestStats> requests;
  uint64_t moved = 0, changes = 0;
  {
    std::lock_guard lock(mu_);
    requests = requests_;
    moved = replicas_moved_;
    changes = placement_changes_;
  }
  std::ostringstream out;
  const char* latency = "flotilla_federation_member_request_duration_seconds";
  out << "# HELP " << latency
      << " Latency of the federated ReplicaSet controller's requests to member clusters.\n"
      << "# TYPE " << latency << " histogram\n";
  for (const auto& [cluster, s] : requests) {
    uint64_t cumulative = 0;
    for (size_t b = 0; b < kLatencyBuckets.size(); ++b) {
      cumulative += s.buckets[b];
      out << latency << "_bucket{cluster=\"" << cluster << "\",le=\"" << kLatencyBuckets[b]
          << "\"} " << cumulative << "\n";
    }
    out << latency << "_bucket{cluster=\"" << cluster << "\",le=\"+Inf\"} " << s.count << "\n"
        << latency << "_sum{cluster=\"" << cluster << "\"} " << s.seconds << "\n"
        << latency << "_count{cluster=\"" << cluster << "\"} " << s.count << "\n";
  }
  const char* failures = "flotilla_federation_member_request_failures_total";
  out << "# HELP " << failures << " Failed requests to member clusters.\n"
      << "# TYPE " << failures << " counter\n";
  for (const auto& [cluster, s] : requests) {
    out << failures << "{cluster=\"" << cluster << "\"} " << s.failures << "\n";
  }
  out << "# HELP flotilla_federated_replicaset_replicas_moved_total Replicas the federated "
         "ReplicaSet controller moved from one cluster to another.\n"
      << "# TYPE flotilla_federated_replicaset_replicas_moved_total counter\n"
      << "flotilla_federated_replicaset_replicas_moved_total " << moved << "\n"
      << "# HELP flotilla_federated_replicaset_placement_changes_total Placements of federated "
         "ReplicaSets changed.\n"
      << "# TYPE flotilla_federated_replicaset_placement_changes_total counter\n"
      << "flotilla_federated_replicaset_placement_changes_total " << changes << "\n";
  return out.str();
}

}  // namespace flotilla::federation::replicaset
