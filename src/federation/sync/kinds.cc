#include "federation/sync/kinds.h"

#include <algorithm>
#include <string_view>

#include "api/resource_quota.h"
#include "api/resources.h"
#include "api/views.h"
#include "client/resources.h"
#include "federation/common/member_copy.h"

namespace flotilla::federation::sync {
namespace {

constexpr std::string_view kFederationOnlyNamespaces[] = {"flotilla-system", "kube-system",
                                                          "kube-public", "kube-node-lease"};
// Service spec fields the member fills in when it allocates addresses.
constexpr std::string_view kAllocatedServiceFields[] = {"clusterIP", "clusterIPs", "ipFamilies",
                                                        "ipFamilyPolicy", "healthCheckNodePort"};

bool IsServices(const SyncKind& kind) { return kind.resource.resource == "services"; }

bool Headless(const json::object& spec) {
  const json::value* ip = spec.if_contains("clusterIP");
  return ip != nullptr && ip->is_string() && ip->get_string() == "None";
}

// A Service spec without what the member allocates.
json::object PortableServiceSpec(const json::object& spec) {
  json::object out = spec;
  bool headless = Headless(spec);
  for (std::string_view field : kAllocatedServiceFields) {
    if (headless && (field == "clusterIP" || field == "clusterIPs")) continue;
    out.erase(field);
  }
  if (json::value* ports = out.if_contains("ports"); ports != nullptr && ports->is_array()) {
    for (json::value& port : ports->get_array()) {
      if (port.is_object()) port.get_object().erase("nodePort");
    }
  }
  return out;
}

const json::object* Spec(const json::object& obj) { return GetObject(obj, "spec"); }

// The member's port that serves the same port and protocol as `port`.
const json::object* SamePort(const json::object& port, const json::object& member_spec) {
  const json::array* ports = GetArray(member_spec, "ports");
  if (ports == nullptr) return nullptr;
  for (const json::value& p : *ports) {
    if (p.is_object() && GetInt(p.get_object(), "port") == GetInt(port, "port") &&
        GetString(p.get_object(), "protocol") == GetString(port, "protocol")) {
      return &p.get_object();
    }
  }
  return nullptr;
}

// `desired` spec with the member's allocated values from `member`.
json::object WithAllocatedFields(json::object spec, const json::object& member) {
  for (std::string_view field : kAllocatedServiceFields) {
    const json::value* v = member.if_contains(field);
    if (v != nullptr && !spec.contains(field)) spec[field] = *v;
  }
  if (json::value* ports = spec.if_contains("ports"); ports != nullptr && ports->is_array()) {
    for (json::value& port : ports->get_array()) {
      if (!port.is_object()) continue;
      const json::object* theirs = SamePort(port.get_object(), member);
      const json::value* node_port = theirs ? theirs->if_contains("nodePort") : nullptr;
      if (node_port != nullptr) port.get_object()["nodePort"] = *node_port;
    }
  }
  return spec;
}

const json::value* MetaField(const json::object& obj, std::string_view field) {
  const json::object* meta = GetObject(obj, "metadata");
  return meta == nullptr ? nullptr : meta->if_contains(field);
}

// Absent and {} are the same map.
bool SameMap(const json::value* a, const json::value* b) {
  static const json::value kEmpty = json::object();
  return *(a != nullptr ? a : &kEmpty) == *(b != nullptr ? b : &kEmpty);
}

bool SameField(const json::object& a, const json::object& b, std::string_view field) {
  const json::value* x = a.if_contains(field);
  const json::value* y = b.if_contains(field);
  if (x == nullptr || y == nullptr) return x == y;
  return *x == *y;
}

// The fields of `desired` and of `existing` a copy's content is compared
// and updated on.
std::vector<std::string> ContentFields(const SyncKind& kind, const json::object& desired,
                                       const json::object& existing) {
  std::vector<std::string> fields = ContentOf(kind, desired);
  if (!kind.whole) return fields;
  for (std::string& f : ContentOf(kind, existing)) {
    if (std::find(fields.begin(), fields.end(), f) == fields.end()) fields.push_back(std::move(f));
  }
  return fields;
}

}  // namespace

SyncKind WholeKind(client::ResourceRef resource, std::string kind) {
  return SyncKind{.resource = std::move(resource),
                  .kind = std::move(kind),
                  .member_defaults = true,
                  .whole = true};
}

std::vector<std::string> ContentOf(const SyncKind& kind, const json::object& obj) {
  if (!kind.whole) return kind.content;
  std::vector<std::string> fields;
  for (const auto& [key, value] : obj) {
    if (key != "apiVersion" && key != "kind" && key != "metadata" && key != "status") {
      fields.emplace_back(key);
    }
  }
  return fields;
}

std::string StatusByCluster(const std::map<std::string, json::value>& statuses) {
  json::object out;
  for (const auto& [cluster, status] : statuses) out[cluster] = status;
  return out.empty() ? "" : json::serialize(out);
}

const std::vector<SyncKind>& SyncKinds() {
  static const std::vector<SyncKind> kinds = {
      {{"", "v1", "namespaces", false}, "Namespace", {}},
      {{"", "v1", "configmaps", true}, "ConfigMap", {"data", "binaryData", "immutable"}},
      {{"", "v1", "secrets", true}, "Secret", {"data", "type", "immutable"}},
      {{"", "v1", "serviceaccounts", true},
       "ServiceAccount",
       {"automountServiceAccountToken", "imagePullSecrets"}},
      {{"", "v1", "services", true}, "Service", {"spec"}},
      {{"", "v1", "limitranges", true}, "LimitRange", {"spec"}, true},
      {{"", "v1", "resourcequotas", true}, "ResourceQuota", {"spec"}, true},
      {.resource = client::kPersistentVolumeClaims,
       .kind = "PersistentVolumeClaim",
       .content = {"spec"},
       .member_defaults = true,
       .merge_content = true,
       .follows_dependents = true},
      {{"networking.k8s.io", "v1", "networkpolicies", true}, "NetworkPolicy", {"spec"}, true},
      {client::kIngressClasses, "IngressClass", {"spec"}, true},
      {{"rbac.authorization.k8s.io", "v1", "roles", true}, "Role", {"rules"}},
      {.resource = {"rbac.authorization.k8s.io", "v1", "rolebindings", true},
       .kind = "RoleBinding",
       .content = {"roleRef", "subjects"},
       .member_defaults = true,
       .immutable = "roleRef"},
      {client::kCustomResourceDefinitions, "CustomResourceDefinition", {"spec"}, true},
  };
  return kinds;
}

bool Propagates(const SyncKind& kind, const json::object& federated) {
  api::ObjectView view(federated);
  std::string_view name = view.name();
  std::string_view ns = kind.resource.namespaced ? view.ns() : name;

  for (std::string_view own : kFederationOnlyNamespaces) {
    if (ns == own) return false;
  }
  if (kind.kind == "Namespace" && name == "default") return false;
  if (kind.kind == "Secret" &&
      StringViewAt(federated, "type") == "kubernetes.io/service-account-token") {
    return false;
  }
  if (kind.kind == "Service" && ns == "default" && name == "kubernetes") return false;
  // Every namespace of every cluster has its own.
  if (kind.kind == "ServiceAccount" && name == "default") return false;
  return true;
}

namespace {

// The object at `field` of `obj`; an empty one when absent.
json::object ObjectField(const json::object& obj, std::string_view field) {
  const json::object* o = GetObject(obj, field);
  return o != nullptr ? *o : json::object{};
}

}  // namespace

json::object QuotaStatus(const json::object& federated,
                         const std::vector<const json::object*>& copies) {
  api::QuotaUsage hard, used;
  bool reported = false;
  for (const json::object* copy : copies) {
    const json::value* status = copy != nullptr ? Find(*copy, "status") : nullptr;
    if (status == nullptr || !status->is_object()) continue;
    reported = true;
    for (const auto& [field, sum] :
         {std::pair<std::string_view, api::QuotaUsage*>{"hard", &hard}, {"used", &used}}) {
      const json::value* list = status->get_object().if_contains(field);
      if (list == nullptr || !list->is_object()) continue;
      for (const auto& [name, quantity] : list->get_object()) {
        (*sum)[std::string(name)] += api::QuantityValue(quantity, 1000).value_or(0);
      }
    }
  }
  json::object status = ObjectField(federated, "status");
  if (!reported) {
    status.erase("hard");
    status.erase("used");
    return status;
  }
  // The names of spec.hard, each summed over the members that reported.
  json::object hard_list;
  const json::value* spec_hard = Find(federated, "spec.hard");
  if (spec_hard != nullptr && spec_hard->is_object()) {
    for (const auto& [name, q] : spec_hard->get_object()) {
      auto it = hard.find(std::string(name));
      hard_list[name] = api::FormatQuotaQuantity(name, it == hard.end() ? 0 : it->second);
    }
  }
  status["hard"] = std::move(hard_list);
  status["used"] = api::UsedList(federated, used);
  return status;
}

json::object PersistentVolumeClaimStatus(const json::object& federated,
                                         const std::vector<const json::object*>& copies) {
  json::object status = ObjectField(federated, "status");
  bool bound = !copies.empty();
  const json::value* least = nullptr;
  const json::value* modes = nullptr;
  for (const json::object* copy : copies) {
    if (copy == nullptr || StringViewAt(*copy, "status.phase") != "Bound") {
      bound = false;
      break;
    }
    const json::value* capacity = Find(*copy, "status.capacity.storage");
    if (capacity != nullptr &&
        (least == nullptr || api::QuantityValue(*capacity, 1000).value_or(0) <
                                 api::QuantityValue(*least, 1000).value_or(0))) {
      least = capacity;
    }
    if (modes == nullptr) modes = Find(*copy, "status.accessModes");
  }
  status.erase("accessModes");
  status.erase("capacity");
  status["phase"] = bound ? "Bound" : "Pending";
  if (!bound) return status;
  if (modes != nullptr) status["accessModes"] = *modes;
  if (least != nullptr) status["capacity"] = json::object{{"storage", *least}};
  return status;
}

bool MustReplaceCopy(const SyncKind& kind, const json::object& desired,
                     const json::object& existing) {
  if (kind.immutable.empty()) return false;
  const json::value* want = desired.if_contains(kind.immutable);
  const json::value* have = existing.if_contains(kind.immutable);
  if (want == nullptr || have == nullptr) return want != have;
  return kind.member_defaults ? !JsonContains(*have, *want) : *want != *have;
}

json::object DesiredCopy(const SyncKind& kind, const json::object& federated) {
  json::object copy{{"apiVersion", kind.resource.ApiVersion()},
                    {"kind", kind.kind},
                    {"metadata", MemberMetadata(federated)}};
  for (const std::string& field : ContentOf(kind, federated)) {
    const json::value* v = federated.if_contains(field);
    if (v == nullptr) continue;
    copy[field] = IsServices(kind) && field == "spec" && v->is_object()
                      ? json::value(PortableServiceSpec(v->get_object()))
                      : *v;
  }
  return copy;
}

bool CopyUpToDate(const SyncKind& kind, const json::object& desired, const json::object& existing) {
  if (!SameMap(MetaField(desired, "labels"), MetaField(existing, "labels")) ||
      !SameMap(MetaField(desired, "annotations"), MetaField(existing, "annotations"))) {
    return false;
  }
  for (const std::string& field : ContentFields(kind, desired, existing)) {
    if (IsServices(kind) && field == "spec") {
      const json::object* want = Spec(desired);
      const json::object* have = Spec(existing);
      if ((want == nullptr) != (have == nullptr)) return false;
      if (want != nullptr && !JsonContains(PortableServiceSpec(*have), *want)) return false;
    } else if (kind.member_defaults) {
      const json::value* want = desired.if_contains(field);
      const json::value* have = existing.if_contains(field);
      if (want == nullptr ? have != nullptr : have == nullptr || !JsonContains(*have, *want)) {
        return false;
      }
    } else if (!SameField(desired, existing, field)) {
      return false;
    }
  }
  return true;
}

json::object UpdatedCopy(const SyncKind& kind, const json::object& desired,
                         const json::object& existing) {
  json::object updated = existing;
  json::object& meta = EnsureObject(updated, "metadata");
  for (const char* field : {"labels", "annotations"}) {
    const json::value* v = MetaField(desired, field);
    if (v != nullptr) {
      meta[field] = *v;
    } else {
      meta.erase(field);
    }
  }
  for (const std::string& field : ContentFields(kind, desired, existing)) {
    const json::value* v = desired.if_contains(field);
    if (v == nullptr) {
      updated.erase(field);
    } else if (IsServices(kind) && field == "spec" && v->is_object() && Spec(existing) != nullptr) {
      updated[field] = WithAllocatedFields(v->get_object(), *Spec(existing));
    } else if (kind.merge_content && v->is_object() && GetObject(existing, field) != nullptr) {
      json::object merged = *GetObject(existing, field);
      for (const auto& [key, value] : v->get_object()) merged[key] = value;
      updated[field] = std::move(merged);
    } else {
      updated[field] = *v;
    }
  }
  return updated;
}

}  // namespace flotilla::federation::sync
