// The API server's RBAC authorizer: every Role, ClusterRole, RoleBinding and
// ClusterRoleBinding in the store, kept current by one store watch, answers
// whether a user may make a request (rbac.h has the semantics). It also
// - writes the bootstrap policy (rbac_bootstrap.h) where it is missing, and
//   adds the default rules and subjects back to bootstrap objects that keep
//   the autoupdate annotation, as kube-apiserver does on start;
// - aggregates ClusterRoles: one with an aggregationRule gets the rules of
//   every ClusterRole its selectors match (in name order, each rule once),
//   as kube-controller-manager's clusterrole-aggregation controller does;
// - refuses escalation: a Role or ClusterRole may only be written by a user
//   who holds its rules or may `escalate`; a binding only by a user who holds
//   the bound role's rules or may `bind` it; an aggregationRule only by a
//   user who may `escalate` ClusterRoles.
// Group system:masters is allowed everything without a rule.
//
// Thread-safe. Changes reach decisions through the watch, so a write is
// seen a moment after it is acknowledged, as with kube-apiserver's informer.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "apiserver/objects.h"
#include "apiserver/rbac.h"
#include "base/io.h"
#include "base/mutex.h"

namespace flotilla::apiserver {

class RbacAuthorizer {
 public:
  // `controller_groups`: rbac::BootstrapPolicy's.
  explicit RbacAuthorizer(Objects& objects, std::vector<std::string> controller_groups = {});
  ~RbacAuthorizer();

  // Loads the policy, starts the watch, writes the bootstrap policy and
  // aggregates; returns once decisions reflect all of it.
  Status Start();
  void Stop();

  Decision Authorize(const UserInfo& user, const RequestAttributes& attrs) const;
  // The rules that apply to `user` in `ns` ("" for the cluster scope).
  std::vector<rbac::PolicyRule> RulesFor(const UserInfo& user, const std::string& ns) const;
  // The escalation checks above for an object of `res` about to be stored
  // by `user` in `ns` (`old`: as stored before an update; null for a
  // create); Ok for every other resource, and for an update that grants
  // nothing new: one that changes neither a role's rules, aggregation rule
  // or labels nor a binding's roleRef or subjects (kube's exemption of
  // finalizer and owner changes, widened to the rest of the metadata).
  Status Admit(const UserInfo& user, const api::Resource& res, const std::string& ns,
               const json::object& obj, const json::object* old) const;
  // Returns once every RBAC write up to `revision` is reflected in decisions
  // (read-your-writes for callers that just wrote a role or binding).
  // REQUIRES: `revision` is that of a Role, ClusterRole or binding write.
  void WaitForRevision(int64_t revision);

 private:
  void OnEvents(const std::vector<storage::Event>& batch);
  // Applies one stored object (or its deletion) to the policy; older
  // revisions than the one already applied for the key are ignored.
  void ApplyLocked(const std::string& key, const std::string& value, int64_t revision, bool deleted)
      REQUIRES(mu_);
  // Both raise `*written` (when not null) to the revision of their last write.
  Status EnsureBootstrap(int64_t* written);
  // One aggregation pass; returns how many ClusterRoles it rewrote.
  StatusOr<int> Aggregate(int64_t* written);
  void AggregateOnce();
  Status Forbid(const api::Resource& res, const json::object& obj, const std::string& why) const;

  Objects& objects_;
  // The groups of the bootstrap policy this server writes (rbac_bootstrap.h).
  const std::vector<std::string> controller_groups_;
  const api::Resource* roles_ = nullptr;
  const api::Resource* cluster_roles_ = nullptr;
  const api::Resource* bindings_ = nullptr;
  const api::Resource* cluster_bindings_ = nullptr;
  std::unique_ptr<storage::Watcher> watcher_;

  mutable SharedMutex mu_;
  rbac::Policy policy_ GUARDED_BY(mu_);
  std::map<std::string, int64_t> revisions_ GUARDED_BY(mu_);  // key -> applied
  // What aggregation reads of each ClusterRole besides its rules (which are
  // in policy_): metadata.labels and aggregationRule.
  std::map<std::string, json::object> cluster_roles_by_name_ GUARDED_BY(mu_);
  // The last revision applied, written after the policy under mu_ (a
  // reader of seen_ then reads a policy at least that new).
  Mutex seen_mu_ ACQUIRED_AFTER(mu_);
  int64_t seen_ GUARDED_BY(seen_mu_) = 0;
  CondVar seen_cv_;

  Mutex loop_mu_;
  bool dirty_ GUARDED_BY(loop_mu_) = false;
  bool started_ GUARDED_BY(loop_mu_) = false;
  // Aggregates on the server pool after ClusterRoles change, once started.
  PoolTrigger aggregator_{SharedBlockingPool(), [this] { AggregateOnce(); }};
};

}  // namespace flotilla::apiserver
