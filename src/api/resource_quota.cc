// ResourceQuota evaluation (resource_quota.h).
#include "api/resource_quota.h"

#include <set>
#include <vector>

#include "api/resources.h"
#include "api/validation.h"

namespace flotilla::api {
namespace {

constexpr std::string_view kStorageClassSuffix = ".storageclass.storage.k8s.io/";

const json::object* ObjectOrNull(const json::value* v) {
  return v != nullptr && v->is_object() ? &v->get_object() : nullptr;
}

std::vector<const json::object*> Objects(const json::object* o, std::string_view key) {
  std::vector<const json::object*> out;
  if (o == nullptr) return out;
  if (const json::array* a = GetArray(*o, key)) {
    for (const json::value& v : *a) {
      if (v.is_object()) out.push_back(&v.get_object());
    }
  }
  return out;
}

bool IsComputeName(std::string_view name) {
  static const std::set<std::string_view> kNames = {
      "cpu",        "memory",          "ephemeral-storage",          "requests.cpu",
      "limits.cpu", "requests.memory", "requests.ephemeral-storage", "limits.memory",
      "pods",       "count/pods",      "limits.ephemeral-storage"};
  return kNames.contains(name);
}

bool Terminal(const json::object& pod) {
  std::string_view phase = StringViewAt(pod, "status.phase");
  return phase == "Succeeded" || phase == "Failed";
}

// podComputeUsageHelper over the pod's sums: a name is charged when some
// container asks for it.
QuotaUsage PodUsage(const json::object& pod) {
  QuotaUsage out{{"pods", 1000}, {"count/pods", 1000}};
  if (Terminal(pod)) return {};
  Resources requests = PodRequests(pod), limits = PodLimits(pod);
  auto charge = [&](std::initializer_list<const char*> names, int64_t milli) {
    if (milli <= 0) return;
    for (const char* n : names) out[n] = milli;
  };
  charge({"cpu", "requests.cpu"}, requests.milli_cpu);
  charge({"memory", "requests.memory"}, requests.memory * 1000);
  charge({"ephemeral-storage", "requests.ephemeral-storage"}, requests.ephemeral_storage * 1000);
  charge({"limits.cpu"}, limits.milli_cpu);
  charge({"limits.memory"}, limits.memory * 1000);
  charge({"limits.ephemeral-storage"}, limits.ephemeral_storage * 1000);
  return out;
}

QuotaUsage ServiceUsage(const json::object& svc) {
  QuotaUsage out{{"services", 1000}, {"count/services", 1000}};
  std::string_view type = StringViewAt(svc, "spec.type");
  int64_t ports = 0;
  if (const json::object* spec = ObjectOrNull(Find(svc, "spec"))) {
    ports = static_cast<int64_t>(Objects(spec, "ports").size());
  }
  if (type == "LoadBalancer") out["services.loadbalancers"] = 1000;
  if (type == "NodePort" || type == "LoadBalancer") out["services.nodeports"] = ports * 1000;
  return out;
}

QuotaUsage ClaimUsage(const json::object& pvc) {
  QuotaUsage out{{"persistentvolumeclaims", 1000}, {"count/persistentvolumeclaims", 1000}};
  int64_t bytes = 0;
  if (const json::value* q = Find(pvc, "spec.resources.requests.storage")) {
    bytes = QuantityValue(*q, 1).value_or(0);
  }
  out["requests.storage"] = bytes * 1000;
  std::string cls = StringAt(pvc, "spec.storageClassName");
  if (!cls.empty()) {
    std::string prefix = cls + std::string(kStorageClassSuffix);
    out[prefix + "persistentvolumeclaims"] = 1000;
    out[prefix + "requests.storage"] = bytes * 1000;
  }
  return out;
}

std::string CountName(std::string_view group, std::string_view plural) {
  std::string out = "count/" + std::string(plural);
  if (!group.empty()) out += "." + std::string(group);
  return out;
}

// The names a container asks for, as podComputeUsageHelper names them (a
// limit defaults the request, as API defaulting does).
std::set<std::string> ContainerNames(const json::object& c) {
  std::set<std::string> out;
  const json::object* requests = ObjectOrNull(Find(c, "resources.requests"));
  const json::object* limits = ObjectOrNull(Find(c, "resources.limits"));
  for (const char* r : {"cpu", "memory"}) {
    bool limited = limits != nullptr && limits->contains(r);
    if (limited || (requests != nullptr && requests->contains(r))) {
      out.insert(r);
      out.insert(std::string("requests.") + r);
    }
    if (limited) out.insert(std::string("limits.") + r);
  }
  return out;
}

// One scope (Terminating, NotTerminating, BestEffort, NotBestEffort,
// PriorityClass with values) against a pod.
bool ScopeMatches(std::string_view scope, std::string_view op, const json::array* values,
                  const json::object& pod) {
  bool terminating = Find(pod, "spec.activeDeadlineSeconds") != nullptr;
  const json::object* spec = ObjectOrNull(Find(pod, "spec"));
  bool best_effort = true;
  for (std::string_view key : {"containers", "initContainers"}) {
    for (const json::object* c : Objects(spec, key)) {
      if (!ContainerNames(*c).empty()) best_effort = false;
    }
  }
  if (scope == "Terminating") return terminating;
  if (scope == "NotTerminating") return !terminating;
  if (scope == "BestEffort") return best_effort;
  if (scope == "NotBestEffort") return !best_effort;
  if (scope != "PriorityClass") return false;
  std::string cls = StringAt(pod, "spec.priorityClassName");
  if (op == "Exists") return !cls.empty();
  if (op == "DoesNotExist") return cls.empty();
  bool in = false;
  if (values != nullptr) {
    for (const json::value& v : *values) in = in || (v.is_string() && v.get_string() == cls);
  }
  return op == "NotIn" ? !in : in;
}

}  // namespace

std::optional<CountedResource> CountedBy(std::string_view name) {
  if (IsComputeName(name)) return CountedResource{"", "pods"};
  if (name == "services" || name == "services.loadbalancers" || name == "services.nodeports")
    return CountedResource{"", "services"};
  if (name == "persistentvolumeclaims" || name == "requests.storage" ||
      name.find(kStorageClassSuffix) != std::string_view::npos)
    return CountedResource{"", "persistentvolumeclaims"};
  for (std::string_view plural :
       {"configmaps", "secrets", "resourcequotas", "replicationcontrollers"}) {
    if (name == plural) return CountedResource{"", std::string(plural)};
  }
  if (!name.starts_with("count/") || name.size() == 6) return std::nullopt;
  std::string_view rest = name.substr(6);
  size_t dot = rest.find('.');
  if (dot == std::string_view::npos) return CountedResource{"", std::string(rest)};
  return CountedResource{std::string(rest.substr(dot + 1)), std::string(rest.substr(0, dot))};
}

QuotaUsage ObjectUsage(std::string_view group, std::string_view plural, const json::object& obj) {
  if (group.empty() && plural == "pods") return PodUsage(obj);
  if (group.empty() && plural == "services") return ServiceUsage(obj);
  if (group.empty() && plural == "persistentvolumeclaims") return ClaimUsage(obj);
  QuotaUsage out{{CountName(group, plural), 1000}};
  if (group.empty()) {
    for (std::string_view legacy :
         {"configmaps", "secrets", "resourcequotas", "replicationcontrollers"}) {
      if (plural == legacy) out[std::string(legacy)] = 1000;
    }
  }
  return out;
}

bool QuotaMatches(const json::object& quota, std::string_view group, std::string_view plural,
                  const json::object& obj) {
  const json::object* spec = ObjectOrNull(Find(quota, "spec"));
  const json::array* scopes = spec ? GetArray(*spec, "scopes") : nullptr;
  std::vector<const json::object*> expressions =
      Objects(ObjectOrNull(Find(quota, "spec.scopeSelector")), "matchExpressions");
  if ((scopes == nullptr || scopes->empty()) && expressions.empty()) return true;
  if (!group.empty() || plural != "pods") return false;
  if (scopes != nullptr) {
    for (const json::value& s : *scopes) {
      if (!s.is_string() || !ScopeMatches(s.get_string(), "Exists", nullptr, obj)) return false;
    }
  }
  for (const json::object* e : expressions) {
    if (!ScopeMatches(StringViewAt(*e, "scopeName"), StringViewAt(*e, "operator"),
                      GetArray(*e, "values"), obj)) {
      return false;
    }
  }
  return true;
}

Status CheckPodConstraints(const json::object& quota, const json::object& pod) {
  std::set<std::string> required;
  if (const json::object* hard = ObjectOrNull(Find(quota, "spec.hard"))) {
    for (const char* n :
         {"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"}) {
      if (hard->contains(n)) required.insert(n);
    }
  }
  if (required.empty()) return Status::Ok();
  std::map<std::string, std::vector<std::string>> missing;  // name -> containers
  const json::object* spec = ObjectOrNull(Find(pod, "spec"));
  for (std::string_view key : {"initContainers", "containers"}) {
    for (const json::object* c : Objects(spec, key)) {
      std::set<std::string> has = ContainerNames(*c);
      for (const std::string& r : required) {
        if (!has.contains(r)) missing[r].push_back(StringAt(*c, "name"));
      }
    }
  }
  if (missing.empty()) return Status::Ok();
  std::string list;
  for (const auto& [name, containers] : missing) {
    list += (list.empty() ? "" : "; ") + name + " for: ";
    for (size_t i = 0; i < containers.size(); ++i) list += (i ? "," : "") + containers[i];
  }
  return Status::Forbidden("failed quota: " + StringAt(quota, "metadata.name") + ": must specify " +
                           list);
}

void ValidateQuotaResourceList(const json::object& list, std::string_view path,
                               std::vector<StatusCause>& out) {
  static const std::set<std::string_view> kStandard = {"cpu",
                                                       "memory",
                                                       "ephemeral-storage",
                                                       "requests.cpu",
                                                       "requests.memory",
                                                       "requests.storage",
                                                       "requests.ephemeral-storage",
                                                       "limits.cpu",
                                                       "limits.memory",
                                                       "limits.ephemeral-storage",
                                                       "pods",
                                                       "services",
                                                       "replicationcontrollers",
                                                       "resourcequotas",
                                                       "secrets",
                                                       "persistentvolumeclaims",
                                                       "configmaps",
                                                       "services.nodeports",
                                                       "services.loadbalancers"};
  for (const auto& [key, q] : list) {
    std::string_view name(key.data(), key.size());
    std::string at = std::string(path) + "[" + std::string(name) + "]";
    bool hugepages = name.starts_with("hugepages-") || name.starts_with("requests.hugepages-") ||
                     name.starts_with("limits.hugepages-");
    if (name.find('/') == std::string_view::npos) {
      if (!kStandard.contains(name) && !hugepages) {
        out.push_back(
            FieldInvalid(at, json::string(name), "must be a standard resource for quota"));
        continue;
      }
    } else {
      std::vector<std::string> errors = IsQualifiedName(name);
      if (!errors.empty()) {
        out.push_back(FieldInvalid(at, json::string(name), errors.front()));
        continue;
      }
    }
    // The schema check reports malformed quantities.
    std::optional<int64_t> milli = QuantityValue(q, 1000);
    if (!milli) continue;
    if (*milli < 0) {
      out.push_back(FieldInvalid(at, q, "must be greater than or equal to 0"));
    } else if (*milli % 1000 != 0 && (name == "pods" || name.starts_with("count/") ||
                                      (CountedBy(name) && !IsComputeName(name) &&
                                       name.find("storage") == std::string_view::npos))) {
      out.push_back(FieldInvalid(at, q, "must be an integer"));
    }
  }
}

std::string FormatQuotaQuantity(std::string_view name, int64_t milli) {
  bool bytes = name.find("memory") != std::string_view::npos ||
               name.find("storage") != std::string_view::npos;
  if (bytes && milli % 1000 == 0) return FormatBytes(milli / 1000);
  if (name == "cpu" || name.ends_with(".cpu") || milli % 1000 != 0) return FormatMilliCpu(milli);
  return std::to_string(milli / 1000);
}

Status CheckQuota(const json::object& quota, const QuotaUsage& used, const QuotaUsage& requested) {
  const json::object* hard = ObjectOrNull(Find(quota, "spec.hard"));
  if (hard == nullptr) return Status::Ok();
  auto at = [](const QuotaUsage& u, const std::string& n) {
    auto it = u.find(n);
    return it == u.end() ? int64_t{0} : it->second;
  };
  std::string req, use, lim;
  std::map<std::string, const json::value*> sorted;
  for (const auto& [name, quantity] : *hard) sorted[std::string(name)] = &quantity;
  for (const auto& entry : sorted) {
    const std::string& name = entry.first;  // (a lambda below uses it)
    const json::value* quantity = entry.second;
    int64_t more = at(requested, name);
    if (more <= 0) continue;
    std::optional<int64_t> limit = QuantityValue(*quantity, 1000);
    if (!limit) continue;
    int64_t now = at(used, name);
    if (now + more <= *limit) continue;
    auto append = [&](std::string& list, int64_t milli) {
      list += (list.empty() ? "" : ",") + name + "=" + FormatQuotaQuantity(name, milli);
    };
    append(req, more);
    append(use, now);
    append(lim, *limit);
  }
  if (req.empty()) return Status::Ok();
  return Status::Forbidden("exceeded quota: " + StringAt(quota, "metadata.name") +
                           ", requested: " + req + ", used: " + use + ", limited: " + lim);
}

json::object UsedList(const json::object& quota, const QuotaUsage& used) {
  json::object out;
  const json::object* hard = ObjectOrNull(Find(quota, "spec.hard"));
  if (hard == nullptr) return out;
  for (const auto& [name, quantity] : *hard) {
    auto it = used.find(std::string(name));
    out[name] = FormatQuotaQuantity(name, it == used.end() ? 0 : it->second);
  }
  return out;
}

}  // namespace flotilla::api
