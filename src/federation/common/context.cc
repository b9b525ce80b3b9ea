// What the federation's controllers share (context.h).
#include "federation/common/context.h"

#include "api/views.h"
#include "base/mutex.h"
#include "federation/common/member_views.h"
#include "federation/common/reconciler.h"

namespace flotilla::federation {
namespace {

// What placements read of a Cluster besides its readiness: its labels
// (cluster selectors), its provider, region and zones (policies' cluster
// affinities), whether it is cordoned and its taints.
bool PlacementInputsChanged(const runtime::ObjectPtr& a, const runtime::ObjectPtr& b) {
  const json::object* la = api::ObjectView(*a).labels();
  const json::object* lb = api::ObjectView(*b).labels();
  api::policy::ClusterFacts fa = api::policy::ClusterFacts::Of(*a);
  api::policy::ClusterFacts fb = api::policy::ClusterFacts::Of(*b);
  return (la == nullptr) != (lb == nullptr) || (la != nullptr && *la != *lb) ||
         fa.provider != fb.provider || fa.region != fb.region || fa.zones != fb.zones ||
         api::ClusterView(*a).cordoned() != api::ClusterView(*b).cordoned() ||
         api::policy::TaintsOf(*a) != api::policy::TaintsOf(*b);
}

}  // namespace

FederationContext::FederationContext(client::Client& fed, Clock& clock, ContextOptions options)
    : fed_(fed),
      clock_(clock),
      io_clock_(options.io_clock != nullptr ? *options.io_clock : RealClock()),
      pool_(options.member_request_threads),
      moves_(options.move_qps, options.move_burst, clock),
      manager_(clock),
      informers_(fed, clock, manager_),
      policies_(informers_.For(kPropagationPolicies), informers_.For(kClusterPropagationPolicies)),
      overrides_(informers_.For(kOverridePolicies), informers_.For(kClusterOverridePolicies)),
      members_(clusters_, clock),
      customizations_(informers_.For(kResourceInterpreterCustomizations)),
      quotas_(fed, informers_, manager_, members_, clusters_) {
  members_.SetTransform(kPods, MemberPodView);
  members_.SetTransform(kNodes, MemberNodeView);
  informers_.For(kResourceInterpreterCustomizations)
      .AddEventHandler({.on_add = [this](const runtime::ObjectPtr& c) { RecheckTarget(*c); },
                        .on_update =
                            [this](const runtime::ObjectPtr& old, const runtime::ObjectPtr& c) {
                              RecheckTarget(*old);
                              RecheckTarget(*c);
                            },
                        .on_delete = [this](const runtime::ObjectPtr& c) { RecheckTarget(*c); }});
  OnClusterChange([this] { quotas_.EnqueueAll(); });
  policies_.OnChange([this] { ClustersChanged(); });
  overrides_.OnChange([this] { ClustersChanged(); });
  policy_statuses_.emplace(fed_, informers_, manager_, Events("policy-status"),
                           [this] { return DependentsKnown(); });
}

FederationContext::~FederationContext() { Stop(); }

runtime::EventRecorder& FederationContext::Events(const std::string& component) {
  MutexLock lock(mu_);
  std::unique_ptr<runtime::EventRecorder>& r = events_[component];
  if (!r) {
    r = std::make_unique<runtime::EventRecorder>(fed_, clock_,
                                                 runtime::EventSource{.component = component});
  }
  return *r;
}

FederationContext::HookId FederationContext::OnClusterChange(std::function<void()> fn) {
  HookId id = 0;
  bool first = false;
  {
    MutexLock lock(hooks_mu_);
    id = next_hook_++;
    first = !watching_clusters_;
    watching_clusters_ = true;
    on_cluster_change_.emplace_back(id, std::move(fn));
  }
  if (!first) return id;
  cluster_objects().AddEventHandler(
      {.on_add = [this](const runtime::ObjectPtr&) { ClustersChanged(); },
       .on_update =
           [this](const runtime::ObjectPtr& a, const runtime::ObjectPtr& b) {
             if (PlacementInputsChanged(a, b)) ClustersChanged();
           },
       .on_delete = [this](const runtime::ObjectPtr&) { ClustersChanged(); }});
  return id;
}

void FederationContext::RecheckTarget(const json::object& customization) {
  customizations_.Changed();
  EnqueueKind(StringViewAt(customization, "spec.target.apiVersion"),
              StringViewAt(customization, "spec.target.kind"));
}

void FederationContext::AddReconciler(Reconciler& r) {
  MutexLock lock(hooks_mu_);
  reconcilers_.push_back(&r);
}

void FederationContext::RemoveReconciler(Reconciler& r) {
  MutexLock lock(hooks_mu_);
  std::erase(reconcilers_, &r);
  std::erase(awaited_, &r);
}

bool FederationContext::DependentsKnown() {
  if (dependents_known_) return true;
  if (!StartedAt()) return false;
  MutexLock lock(hooks_mu_);
  std::erase_if(awaited_, [](Reconciler* r) { return r->FirstPassDone(); });
  if (awaited_.empty()) dependents_known_ = true;
  return dependents_known_;
}

void FederationContext::EnqueueKind(std::string_view api_version, std::string_view kind) {
  MutexLock lock(hooks_mu_);
  for (Reconciler* r : reconcilers_) {
    if (r->Reconciles(api_version, kind)) r->EnqueueAll();
  }
}

void FederationContext::EnqueueObject(std::string_view api_version, std::string_view kind,
                                      const std::string& ns, const std::string& name) {
  MutexLock lock(hooks_mu_);
  for (Reconciler* r : reconcilers_) {
    if (!r->Reconciles(api_version, kind)) continue;
    r->Enqueue(r->resource().namespaced ? ns + "/" + name : name);
  }
}

bool FederationContext::ClusterScoped(std::string_view api_version, std::string_view kind) const {
  MutexLock lock(hooks_mu_);
  for (const Reconciler* r : reconcilers_) {
    if (r->Reconciles(api_version, kind)) return !r->resource().namespaced;
  }
  return false;
}

// Called under the lock: a hook removed is not called once its removal
// returns (the hooks only enqueue).
void FederationContext::ClustersChanged() {
  MutexLock lock(hooks_mu_);
  for (const auto& [id, fn] : on_cluster_change_) fn();
}

FederationContext::HookId FederationContext::AddFinalizedResource(
    const client::ResourceRef& resource, Federates federates) {
  MutexLock lock(hooks_mu_);
  finalized_.push_back({next_hook_, resource, std::move(federates)});
  return next_hook_++;
}

void FederationContext::RemoveHook(HookId id) {
  MutexLock lock(hooks_mu_);
  std::erase_if(on_cluster_change_, [&](const auto& h) { return h.first == id; });
  std::erase_if(finalized_, [&](const Finalized& f) { return f.id == id; });
}

bool FederationContext::FinalizesAtCreate(std::string_view group, std::string_view plural,
                                          const json::object& obj) {
  if (cluster_objects().cache().Size() == 0) return false;
  MutexLock lock(hooks_mu_);
  for (const Finalized& f : finalized_) {
    if (f.resource.group == group && f.resource.resource == plural) return f.federates(obj);
  }
  return false;
}

std::optional<TimePoint> FederationContext::ReadySince(const std::string& cluster) const {
  MutexLock lock(mu_);
  auto it = ready_since_.find(cluster);
  if (it == ready_since_.end()) return std::nullopt;
  return it->second;
}

std::optional<TimePoint> FederationContext::StartedAt() const {
  MutexLock lock(mu_);
  return started_at_;
}

Status FederationContext::Start() {
  {
    MutexLock lock(mu_);
    if (stopped_) return Status::Unavailable("the federation controllers are stopping");
    started_at_ = clock_.Now();
  }
  {
    MutexLock lock(hooks_mu_);
    awaited_ = reconcilers_;
  }
  auto gone = [this](const std::string& name) {
    {
      MutexLock lock(mu_);
      ready_since_.erase(name);
    }
    ClustersChanged();
  };
  // The member informers hear of a cluster first: when the controllers are
  // told, a cluster that left has no caches any more, and one that came has
  // caches (not synced yet, their on_synced tells again). The other way a
  // workload checked at once still saw the cluster that left, and nothing
  // told it again.
  members_.Start();
  subscription_ =
      clusters_.Subscribe({.on_ready =
                               [this](const std::string& name, std::shared_ptr<client::Client>) {
                                 {
                                   MutexLock lock(mu_);
                                   ready_since_[name] = clock_.Now();
                                 }
                                 ClustersChanged();
                               },
                           .on_not_ready = gone,
                           .on_removed = gone});
  return manager_.Start();
}

void FederationContext::Stop() {
  {
    MutexLock lock(mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  if (subscription_ >= 0) clusters_.Unsubscribe(subscription_);
  subscription_ = -1;
  // The controllers first: a check that ran on caches being torn down
  // would see no member and write that (a breakdown without the capacity
  // learned, which a restart reads back).
  manager_.Stop();
  members_.Stop();
  informers_.StopAll();
  std::map<std::string, std::unique_ptr<runtime::EventRecorder>> events;
  {
    MutexLock lock(mu_);
    events.swap(events_);
  }
  events.clear();  // each writes what it holds, then stops
}

}  // namespace flotilla::federation
