// FederatedResourceQuotas (quotas.h).
#include "federation/common/quotas.h"

#include <set>

#include "api/policy/quota.h"
#include "api/resources.h"
#include "base/log.h"
#include "client/resources.h"
#include "federation/common/names.h"

namespace flotilla::federation {

namespace {

// The hard limits spec.staticAssignments gives `cluster`; null when none.
const json::value* AssignedTo(const json::object& frq, std::string_view cluster) {
  const json::value* a = Find(frq, "spec.staticAssignments");
  if (a == nullptr || !a->is_array()) return nullptr;
  for (const json::value& e : a->get_array()) {
    if (e.is_object() && StringViewAt(e.get_object(), "clusterName") == cluster) {
      const json::value* hard = e.get_object().if_contains("hard");
      return hard != nullptr && hard->is_object() ? hard : nullptr;
    }
  }
  return nullptr;
}

// The kQuotaLabel of a member ResourceQuota; empty when it has none (the
// federation did not make it). (A label key has dots: not a dotted path.)
std::string_view QuotaLabelOf(const json::object& rq) {
  const json::value* labels = Find(rq, "metadata.labels");
  if (labels == nullptr || !labels->is_object()) return {};
  return GetString(labels->get_object(), kQuotaLabel).value_or("");
}

// Whether two resource lists say the same: the same names, equal
// quantities (a member may write "1000m" back as "1", as Kubernetes does).
bool SameQuantities(const json::value& a, const json::value& b) {
  if (!a.is_object() || !b.is_object() || a.get_object().size() != b.get_object().size())
    return false;
  for (const auto& [name, q] : a.get_object()) {
    const json::value* other = b.get_object().if_contains(name);
    if (other == nullptr) return false;
    std::optional<int64_t> x = api::QuantityValue(q, 1000), y = api::QuantityValue(*other, 1000);
    if (x ? x != y : q != *other) return false;
  }
  return true;
}

}  // namespace

FederatedQuotas::FederatedQuotas(client::Client& fed, runtime::SharedInformers& informers,
                                 runtime::ControllerManager& manager, MemberInformers& members,
                                 ClusterClients& clusters)
    : fed_(fed),
      members_(members),
      clusters_(clusters),
      quotas_(informers.For(kFederatedResourceQuotas)) {
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
  runtime::EventHandler by_namespace = controller.EnqueueNamespaceHandler();
  auto enqueue = by_namespace.on_add;
  quotas_.AddEventHandler(by_namespace);
  for (const auto& [informer, kind] : workloads_) informer->AddEventHandler(by_namespace);
  queue_ = &controller.queue();
  // The members' quotas this made: their status, or their removal.
  member_handler_ = [enqueue](const std::string&) {
    auto ours = [enqueue](const runtime::ObjectPtr& obj) {
      if (!QuotaLabelOf(*obj).empty()) enqueue(obj);
    };
    return runtime::EventHandler{.on_add = ours,
                                 .on_update = [ours](const runtime::ObjectPtr&,
                                                     const runtime::ObjectPtr& obj) { ours(obj); },
                                 .on_delete = ours};
  };
}

void FederatedQuotas::WatchMembers() {
  std::call_once(members_watched_,
                 [this] { members_.AddHandler(client::kResourceQuotas, member_handler_); });
}

void FederatedQuotas::EnqueueAll() {
  for (const runtime::ObjectPtr& q : quotas_.lister().List()) {
    queue_->Add(std::string(StringViewAt(*q, "metadata.namespace")));
  }
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

Status FederatedQuotas::SyncCluster(const std::string& cluster, const std::string& ns,
                                    const std::vector<runtime::ObjectPtr>& quotas,
                                    std::map<std::string, json::array>& aggregated) {
  std::shared_ptr<runtime::Informer> informer = members_.Get(cluster, client::kResourceQuotas);
  std::shared_ptr<client::Client> member = clusters_.Get(cluster);
  if (informer == nullptr || member == nullptr) return Status::Ok();
  std::map<std::string, runtime::ObjectPtr> present;
  for (const runtime::ObjectPtr& rq : informer->lister().List(ns)) {
    present[StringAt(*rq, "metadata.name")] = rq;
  }
  Status first = Status::Ok();
  auto keep = [&first](Status s) {
    if (!s.ok() && !s.Is(Reason::kConflict) && !s.Is(Reason::kAlreadyExists) && first.ok())
      first = std::move(s);
  };
  std::set<std::string> wanted;
  for (const runtime::ObjectPtr& q : quotas) {
    std::string name = StringAt(*q, "metadata.name");
    const json::value* hard = AssignedTo(*q, cluster);
    if (hard == nullptr) continue;
    wanted.insert(name);
    auto it = present.find(name);
    if (it == present.end()) {
      json::object rq{{"apiVersion", "v1"},
                      {"kind", "ResourceQuota"},
                      {"metadata", json::object{{"name", name},
                                                {"namespace", ns},
                                                {"labels", json::object{{kQuotaLabel, name}}}}},
                      {"spec", json::object{{"hard", *hard}}}};
      keep(member->Create(client::kResourceQuotas, ns, std::move(rq)).status());
      continue;
    }
    const json::object& rq = *it->second;
    if (QuotaLabelOf(rq) != name) {
      spdlog::warn(
          "federated resource quota {}/{}: cluster {} has a ResourceQuota of that "
          "name the federation did not make; left alone",
          ns, name, cluster);
      continue;
    }
    const json::value* have = Find(rq, "spec.hard");
    if (have == nullptr || !SameQuantities(*have, *hard)) {
      json::object updated = rq;
      EnsureObject(updated, "spec")["hard"] = *hard;
      keep(member->Update(client::kResourceQuotas, ns, updated).status());
    }
    if (const json::value* status = Find(rq, "status"); status != nullptr && status->is_object()) {
      json::object entry{{"clusterName", cluster}};
      for (const char* f : {"hard", "used"}) {
        if (const json::value* v = status->get_object().if_contains(f)) entry[f] = *v;
      }
      aggregated[name].push_back(std::move(entry));
    }
  }
  // Those this made for an assignment or a quota now gone.
  for (const auto& [name, rq] : present) {
    if (wanted.contains(name) || QuotaLabelOf(*rq).empty()) continue;
    Status s = member->Delete(client::kResourceQuotas, ns, name, {});
    if (!s.Is(Reason::kNotFound)) keep(std::move(s));
  }
  return first;
}

Status FederatedQuotas::Reconcile(const std::string& ns) {
  std::vector<runtime::ObjectPtr> quotas = Quotas(ns);
  // The members' ResourceQuotas are watched from the first
  // FederatedResourceQuota on (every one is checked here once): a
  // federation without one pays nothing for them.
  if (!quotas.empty()) WatchMembers();
  std::map<std::string, json::array> aggregated;  // by quota name
  Status members = Status::Ok();
  for (const std::string& cluster : members_.Clusters()) {
    Status s = SyncCluster(cluster, ns, quotas, aggregated);
    if (!s.ok() && members.ok()) members = std::move(s);
  }
  if (quotas.empty()) return members;
  api::policy::QuotaUsage used;
  ForEachWorkload(ns, [&](std::string_view, const json::object&, const api::policy::QuotaUsage& u) {
    api::policy::Add(used, u);
  });
  for (const runtime::ObjectPtr& q : quotas) {
    // As Karmada's controller writes it: the limits (status.overall, the
    // OVERALL column), the usage, and each assigned cluster's quota.
    json::object status =
        GetObject(*q, "status") != nullptr ? *GetObject(*q, "status") : json::object();
    json::value overall = Find(*q, "spec.overall") != nullptr ? *Find(*q, "spec.overall")
                                                              : json::value(json::object());
    json::value overall_used = api::policy::OverallUsed(*q, used);
    json::value per_cluster = std::move(aggregated[StringAt(*q, "metadata.name")]);
    bool listed = !per_cluster.get_array().empty();
    const json::value* had = status.if_contains("aggregatedStatus");
    bool same_clusters = listed ? had != nullptr && *had == per_cluster : had == nullptr;
    if (status["overall"] == overall && status["overallUsed"] == overall_used && same_clusters)
      continue;
    json::object updated = *q;
    json::object& written = EnsureObject(updated, "status");
    written["overall"] = std::move(overall);
    written["overallUsed"] = std::move(overall_used);
    if (listed) {
      written["aggregatedStatus"] = std::move(per_cluster);
    } else {
      written.erase("aggregatedStatus");
    }
    Status s = fed_.UpdateStatus(kFederatedResourceQuotas, ns, updated).status();
    // A conflict or a quota gone: its own event brings the namespace back.
    if (!s.ok() && !s.Is(Reason::kConflict) && !s.Is(Reason::kNotFound)) return s;
  }
  return members;
}

}  // namespace flotilla::federation
