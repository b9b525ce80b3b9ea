// The member's resource quota controller (kube-controller-manager's
// resourcequota controller; docs/member.md, "Resource quotas"): keeps each
// ResourceQuota's status.hard (its spec.hard) and status.used (what the
// namespace's objects use of each name, counted as api/resource_quota.h
// counts them) for `kubectl describe quota`, the federation's
// FederatedResourceQuota (status.aggregatedStatus) and anyone reading it.
// The API server's admission enforces the quota from the stored objects
// (apiserver/quota_admission.h); this only reports.
//
// Pods are watched: a pod added, finished or deleted recounts its
// namespace's quotas. Other kinds a quota counts (services, claims,
// "count/deployments.apps", ...) are listed when a quota is recounted and
// every kRecount; a kind the member does not serve counts 0.
#pragma once

#include "api/registry.h"
#include "api/resource_quota.h"
#include "member/context.h"

namespace flotilla::member {

class QuotaController : public Component {
 public:
  // `registry`: the kinds the member serves (for the versions of what a
  // quota counts); it must outlive this.
  QuotaController(ControllerContext& ctx, const api::Registry& registry);

  static constexpr Duration kRecount = std::chrono::seconds(10);

 private:
  // Recounts every quota of namespace `ns`.
  StatusOr<runtime::Result> Reconcile(const std::string& ns);
  // The usage of group/plural's objects in `ns` that `quota` counts.
  StatusOr<api::QuotaUsage> Used(const json::object& quota, const std::string& ns,
                                 const api::CountedResource& resource) const;

  client::Client& client_;
  const api::Registry& registry_;
  runtime::Informer& quotas_;
  runtime::Informer& pods_;
};

}  // namespace flotilla::member
