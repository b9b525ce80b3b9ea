// Federated resource quotas (quota.h).
#include "api/policy/quota.h"

#include "api/resource_quota.h"
#include "api/resources.h"

namespace flotilla::api::policy {
namespace {

constexpr char kCpu[] = "cpu";
constexpr char kMemory[] = "memory";
constexpr char kEphemeralStorage[] = "ephemeral-storage";
constexpr char kPods[] = "pods";

}  // namespace

QuotaUsage WorkloadUsage(const json::object& workload) {
  return WorkloadUsage(StringViewAt(workload, "kind"), workload);
}

QuotaUsage WorkloadUsage(std::string_view kind, const json::object& workload) {
  if (kind != "Deployment" && kind != "ReplicaSet" && kind != "StatefulSet") return {};
  // A Deployment's ReplicaSets (the federation's revision history) are its
  // replicas already.
  if (const json::value* owners = Find(workload, "metadata.ownerReferences");
      owners != nullptr && owners->is_array()) {
    for (const json::value& o : owners->get_array()) {
      if (o.is_object() && GetBool(o.get_object(), "controller") == true) return {};
    }
  }
  const json::value* replicas = Find(workload, "spec.replicas");
  int64_t n = replicas != nullptr && replicas->is_int64() ? replicas->get_int64() : 1;
  if (n <= 0) return {};
  const json::value* spec = Find(workload, "spec.template.spec");
  json::object pod{{"spec", spec != nullptr && spec->is_object() ? *spec : json::object()}};
  Resources r = PodRequests(pod);
  QuotaUsage out{{kPods, n * 1000}};
  if (r.milli_cpu > 0) out[kCpu] = n * r.milli_cpu;
  if (r.memory > 0) out[kMemory] = n * r.memory * 1000;
  if (r.ephemeral_storage > 0) out[kEphemeralStorage] = n * r.ephemeral_storage * 1000;
  return out;
}

void Add(QuotaUsage& total, const QuotaUsage& more, int sign) {
  for (const auto& [resource, milli] : more) total[resource] += sign * milli;
}

std::string CountedResource(std::string_view quota_name) {
  std::string_view name = quota_name;
  if (name.starts_with("requests.")) name.remove_prefix(9);
  for (const char* r : {kCpu, kMemory, kEphemeralStorage}) {
    if (name == r) return r;
  }
  return quota_name == kPods ? kPods : "";
}

Status CheckQuota(const json::object& frq, const QuotaUsage& before, const QuotaUsage& after) {
  const json::value* overall = Find(frq, "spec.overall");
  if (overall == nullptr || !overall->is_object()) return Status::Ok();
  std::string requested, used, limited;
  auto at = [](const QuotaUsage& u, const std::string& r) {
    auto it = u.find(r);
    return it == u.end() ? int64_t{0} : it->second;
  };
  for (const auto& [name, quantity] : overall->get_object()) {
    std::string resource = CountedResource(name);
    if (resource.empty()) continue;
    std::optional<int64_t> hard = QuantityValue(quantity, 1000);
    if (!hard) continue;
    int64_t was = at(before, resource), will = at(after, resource);
    if (will <= *hard || will <= was) continue;
    const std::string named(name);
    auto append = [&](std::string& list, int64_t milli) {
      if (!list.empty()) list += ",";
      list += named + "=" + FormatQuotaQuantity(resource, milli);
    };
    append(requested, will - was);
    append(used, was);
    append(limited, *hard);
  }
  if (requested.empty()) return Status::Ok();
  return Status::Forbidden("exceeded quota: " + StringAt(frq, "metadata.name") + ", requested: " +
                           requested + ", used: " + used + ", limited: " + limited);
}

json::object OverallUsed(const json::object& frq, const QuotaUsage& used) {
  json::object out;
  const json::value* overall = Find(frq, "spec.overall");
  if (overall == nullptr || !overall->is_object()) return out;
  for (const auto& [name, quantity] : overall->get_object()) {
    std::string resource = CountedResource(name);
    if (resource.empty()) continue;
    auto it = used.find(resource);
    out[name] = FormatQuotaQuantity(resource, it == used.end() ? 0 : it->second);
  }
  return out;
}

}  // namespace flotilla::api::policy
