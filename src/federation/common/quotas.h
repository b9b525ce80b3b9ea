// FederatedResourceQuotas: the federation's side of Karmada's
// FederatedResourceQuota (docs/policies.md, "Federated resource quota").
// Keeps each quota's status.overall (its spec.overall) and
// status.overallUsed (the usage of the federated
// Deployments, ReplicaSets and StatefulSets of its namespace) and answers
// the admission that refuses a write taking a namespace beyond a quota's
// spec.overall (api/policy/quota.h). Thread-safe.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "api/policy/quota.h"
#include "base/json.h"
#include "base/status.h"
#include "client/client.h"
#include "runtime/controller_manager.h"
#include "runtime/shared_informers.h"

namespace flotilla::federation {

inline const client::ResourceRef kFederatedResourceQuotas{"policy.karmada.io", "v1alpha1",
                                                          "federatedresourcequotas", true};

class FederatedQuotas {
 public:
  // Adds its controller and handlers; informers of the quotas and the
  // workload kinds are made through `informers`. REQUIRES: before the
  // manager starts.
  FederatedQuotas(client::Client& fed, runtime::SharedInformers& informers,
                  runtime::ControllerManager& manager);
  FederatedQuotas(const FederatedQuotas&) = delete;
  FederatedQuotas& operator=(const FederatedQuotas&) = delete;

  // The admission of `obj`, a Deployment, ReplicaSet or StatefulSet (kind
  // set) about to be stored: Forbidden when it takes its namespace beyond
  // a quota there (CheckQuota). OK for other objects.
  Status Admit(const json::object& obj) const;

 private:
  // Writes status.overallUsed of every quota of namespace `ns`.
  Status Reconcile(const std::string& ns);
  std::vector<runtime::ObjectPtr> Quotas(const std::string& ns) const;
  // Calls `fn(kind, workload, usage)` for each workload of `ns`.
  void ForEachWorkload(const std::string& ns,
                       const std::function<void(std::string_view kind, const json::object& obj,
                                                const api::policy::QuotaUsage& usage)>& fn) const;

  client::Client& fed_;
  runtime::Informer& quotas_;
  std::vector<std::pair<runtime::Informer*, std::string>> workloads_;  // informer, kind
};

}  // namespace flotilla::federation
