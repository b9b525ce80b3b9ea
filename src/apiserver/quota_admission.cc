// ResourceQuota admission (quota_admission.h).
#include "apiserver/quota_admission.h"

#include <vector>

#include "api/resource_quota.h"

namespace flotilla::apiserver {
namespace {

std::string PrefixOf(std::string_view group, std::string_view plural, std::string_view ns) {
  return "/" + std::string(group.empty() ? "core" : group) + "/" + std::string(plural) + "/" +
         std::string(ns) + "/";
}

StatusOr<std::vector<json::object>> ListStored(storage::Store& store, const std::string& prefix) {
  FLOTILLA_ASSIGN_OR_RETURN(storage::ListResult listed, store.List(prefix, {}));
  std::vector<json::object> out;
  out.reserve(listed.items.size());
  for (const storage::KeyValue& kv : listed.items) {
    auto obj = ParseJsonObject(kv.value);
    if (obj.ok()) out.push_back(std::move(*obj));
  }
  return out;
}

// Whether `usage` charges a name `quota` limits.
bool Charges(const json::object& quota, const api::QuotaUsage& usage) {
  const json::value* hard = Find(quota, "spec.hard");
  if (hard == nullptr || !hard->is_object()) return false;
  for (const auto& [name, q] : hard->get_object()) {
    auto it = usage.find(std::string(name));
    if (it != usage.end() && it->second > 0) return true;
  }
  return false;
}

}  // namespace

StatusOr<std::unique_lock<std::mutex>> QuotaAdmission::AdmitCreate(const api::Resource& res,
                                                                   std::string_view ns,
                                                                   const json::object& obj) {
  std::unique_lock<std::mutex> none;
  if (!res.namespaced || ns.empty() || (res.group.empty() && res.plural == "events")) return none;
  FLOTILLA_ASSIGN_OR_RETURN(std::vector<json::object> quotas,
                            ListStored(store_, PrefixOf("", "resourcequotas", ns)));
  if (quotas.empty()) return none;
  api::QuotaUsage usage = api::ObjectUsage(res.group, res.plural, obj);
  bool pod = res.group.empty() && res.plural == "pods";
  std::vector<const json::object*> counting;
  for (const json::object& q : quotas) {
    if (!api::QuotaMatches(q, res.group, res.plural, obj)) continue;
    if (pod) FLOTILLA_RETURN_IF_ERROR(api::CheckPodConstraints(q, obj));
    if (Charges(q, usage)) counting.push_back(&q);
  }
  if (counting.empty()) return none;
  std::unique_lock<std::mutex> lock(mu_);
  FLOTILLA_ASSIGN_OR_RETURN(std::vector<json::object> stored,
                            ListStored(store_, PrefixOf(res.group, res.plural, ns)));
  for (const json::object* q : counting) {
    api::QuotaUsage used;
    for (const json::object& o : stored) {
      if (!api::QuotaMatches(*q, res.group, res.plural, o)) continue;
      for (const auto& [name, milli] : api::ObjectUsage(res.group, res.plural, o))
        used[name] += milli;
    }
    FLOTILLA_RETURN_IF_ERROR(api::CheckQuota(*q, used, usage));
  }
  return lock;
}

}  // namespace flotilla::apiserver
