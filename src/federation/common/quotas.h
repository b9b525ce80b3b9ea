// FederatedResourceQuotas: the federation's side of Karmada's
// FederatedResourceQuota (docs/policies.md, "Federated resource quota").
// Keeps each quota's status.overall (its spec.overall) and
// status.overallUsed (the usage of the federated
// Deployments, ReplicaSets and StatefulSets of its namespace) and answers
// the admission that refuses a write taking a namespace beyond a quota's
// spec.overall (api/policy/quota.h).
//
// spec.staticAssignments become ResourceQuota objects in the members: in
// each ready cluster assigned, one named as the FederatedResourceQuota in
// its namespace, with the assignment's hard limits and the label
// kQuotaLabel naming it; the member's own quota admission enforces it.
// A ResourceQuota of that name the federation did not make is left alone
// (and reported); one it made is deleted when its cluster's assignment
// or its FederatedResourceQuota goes. status.aggregatedStatus lists each
// assigned cluster's hard limits and usage as its ResourceQuota reports
// them. The members' ResourceQuotas are watched from the first
// FederatedResourceQuota on (one more watch per member). Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "api/policy/quota.h"
#include "base/json.h"
#include "base/status.h"
#include "client/client.h"
#include "federation/common/cluster_clients.h"
#include "federation/common/member_informers.h"
#include "runtime/controller_manager.h"
#include "runtime/shared_informers.h"

namespace flotilla::federation {

inline const client::ResourceRef kFederatedResourceQuotas{"policy.karmada.io", "v1alpha1",
                                                          "federatedresourcequotas", true};
// On the member ResourceQuotas a FederatedResourceQuota made: its name.
inline constexpr char kQuotaLabel[] = "federation.kubernetes.io/federated-resource-quota";

class FederatedQuotas {
 public:
  // Adds its controller and handlers; informers of the quotas and the
  // workload kinds are made through `informers`. REQUIRES: before the
  // manager starts.
  FederatedQuotas(client::Client& fed, runtime::SharedInformers& informers,
                  runtime::ControllerManager& manager, MemberInformers& members,
                  ClusterClients& clusters);
  FederatedQuotas(const FederatedQuotas&) = delete;
  FederatedQuotas& operator=(const FederatedQuotas&) = delete;

  // The admission of `obj`, a Deployment, ReplicaSet or StatefulSet (kind
  // set) about to be stored: Forbidden when it takes its namespace beyond
  // a quota there (CheckQuota). OK for other objects.
  Status Admit(const json::object& obj) const;
  // Checks every namespace with a quota again (a cluster came or went).
  void EnqueueAll();

 private:
  // Writes the member ResourceQuotas and the status of every quota of
  // namespace `ns`.
  Status Reconcile(const std::string& ns);
  // Starts the members' ResourceQuota informers (once).
  void WatchMembers();
  // Makes `cluster`'s ResourceQuotas in `ns` those `quotas` assign it;
  // adds the assigned ones' status to `aggregated` (by quota name).
  Status SyncCluster(const std::string& cluster, const std::string& ns,
                     const std::vector<runtime::ObjectPtr>& quotas,
                     std::map<std::string, json::array>& aggregated);
  std::vector<runtime::ObjectPtr> Quotas(const std::string& ns) const;
  // Calls `fn(kind, workload, usage)` for each workload of `ns`.
  void ForEachWorkload(const std::string& ns,
                       const std::function<void(std::string_view kind, const json::object& obj,
                                                const api::policy::QuotaUsage& usage)>& fn) const;

  client::Client& fed_;
  MemberInformers& members_;
  ClusterClients& clusters_;
  runtime::WorkQueue* queue_ = nullptr;
  MemberHandlerFactory member_handler_;
  std::once_flag members_watched_;
  runtime::Informer& quotas_;
  std::vector<std::pair<runtime::Informer*, std::string>> workloads_;  // informer, kind
};

}  // namespace flotilla::federation
