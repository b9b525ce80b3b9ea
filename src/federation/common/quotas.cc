// FederatedResourceQuotas (quotas.h).
#include "federation/common/quotas.h"

#include "api/policy/quota.h"
#include "federation/common/names.h"

namespace flotilla::federation {

FederatedQuotas::FederatedQuotas(client::Client& fed, runtime::SharedInformers& informers,
                                 runtime::ControllerManager& manager)
    : fed_(fed), quotas_(informers.For(kFederatedResourceQuotas)) {
  for (const auto& [resource, kind] :
       {std::pair{&kDeployments, "Deployment"}, std::pair{&kReplicaSets, "ReplicaSet"},
        std::pair{&kStatefulSets, "StatefulSet"}}) {
    workloads_.emplace_back(&informers.For(*resource), kind);
  }
  runtime::Controller& controller = manager.AddController(
      "federated-resource-quota", 1, [this](const std::string& ns) -> StatusOr<runtime::Result> {
        FLOTILLA_RETURN_IF_ERROR(Reconcile(ns));
        return runtime::Result{};
      });
  // Keyed by namespace: any change of a quota or a workload there.
  auto enqueue = [queue = &controller.queue()](const runtime::ObjectPtr& obj) {
    queue->Add(std::string(StringViewAt(*obj, "metadata.namespace")));
  };
  runtime::EventHandler by_namespace{
      .on_add = enqueue,
      .on_update = [enqueue](const runtime::ObjectPtr&,
                             const runtime::ObjectPtr& obj) { enqueue(obj); },
      .on_delete = enqueue};
  quotas_.AddEventHandler(by_namespace);
  for (const auto& [informer, kind] : workloads_) informer->AddEventHandler(by_namespace);
}

std::vector<runtime::ObjectPtr> FederatedQuotas::Quotas(const std::string& ns) const {
  return quotas_.lister().List(ns);
}

void FederatedQuotas::ForEachWorkload(
    const std::string& ns, const std::function<void(std::string_view, const json::object&,
                                                    const api::policy::QuotaUsage&)>& fn) const {
  for (const auto& [informer, kind] : workloads_) {
    for (const runtime::ObjectPtr& obj : informer->lister().List(ns)) {
      fn(kind, *obj, api::policy::WorkloadUsage(kind, *obj));
    }
  }
}

Status FederatedQuotas::Admit(const json::object& obj) const {
  std::string ns(StringViewAt(obj, "metadata.namespace"));
  std::vector<runtime::ObjectPtr> quotas = Quotas(ns);
  if (quotas.empty()) return Status::Ok();
  api::policy::QuotaUsage mine = api::policy::WorkloadUsage(obj);
  std::string_view kind = StringViewAt(obj, "kind");
  std::string_view name = StringViewAt(obj, "metadata.name");
  api::policy::QuotaUsage before, after;
  ForEachWorkload(ns,
                  [&](std::string_view k, const json::object& w, const api::policy::QuotaUsage& u) {
                    api::policy::Add(before, u);
                    // The object's stored version gives way to the one being written.
                    if (k != kind || StringViewAt(w, "metadata.name") != name)
                      api::policy::Add(after, u);
                  });
  api::policy::Add(after, mine);
  for (const runtime::ObjectPtr& q : quotas) {
    FLOTILLA_RETURN_IF_ERROR(api::policy::CheckQuota(*q, before, after));
  }
  return Status::Ok();
}

Status FederatedQuotas::Reconcile(const std::string& ns) {
  std::vector<runtime::ObjectPtr> quotas = Quotas(ns);
  if (quotas.empty()) return Status::Ok();
  api::policy::QuotaUsage used;
  ForEachWorkload(ns, [&](std::string_view, const json::object&, const api::policy::QuotaUsage& u) {
    api::policy::Add(used, u);
  });
  for (const runtime::ObjectPtr& q : quotas) {
    // As Karmada's controller writes it: the limits (status.overall, the
    // OVERALL column) and the usage.
    json::object status =
        GetObject(*q, "status") != nullptr ? *GetObject(*q, "status") : json::object();
    json::value overall = Find(*q, "spec.overall") != nullptr ? *Find(*q, "spec.overall")
                                                              : json::value(json::object());
    json::value overall_used = api::policy::OverallUsed(*q, used);
    if (status["overall"] == overall && status["overallUsed"] == overall_used) continue;
    json::object updated = *q;
    json::object& written = EnsureObject(updated, "status");
    written["overall"] = std::move(overall);
    written["overallUsed"] = std::move(overall_used);
    Status s = fed_.UpdateStatus(kFederatedResourceQuotas, ns, updated).status();
    // A conflict or a quota gone: its own event brings the namespace back.
    if (!s.ok() && !s.Is(Reason::kConflict) && !s.Is(Reason::kNotFound)) return s;
  }
  return Status::Ok();
}

}  // namespace flotilla::federation
