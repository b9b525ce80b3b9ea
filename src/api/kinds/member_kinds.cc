// The kinds a member cluster serves besides the federated ones: v1 Pod,
// Node, Endpoints, PersistentVolumeClaim, ResourceQuota,
// discovery.k8s.io/v1 EndpointSlice and storage.k8s.io/v1 StorageClass. Registration, defaults and
// columns (the Pod's columns are in pod_status.cc); of validation the pod spec rules and the
// quota's.
#include <algorithm>
#include <map>
#include <set>

#include "api/claims.h"
#include "api/federated.h"
#include "api/kinds/pod_spec.h"
#include "api/kinds/pod_status.h"
#include "api/kinds/resources.h"
#include "api/resource_quota.h"
#include "api/resources.h"
#include "api/views.h"

namespace flotilla::api::kinds {
namespace {

bool HasRequestsOrLimits(const json::object& c) {
  for (std::string_view key : {"requests", "limits"}) {
    const json::object* m = ObjectAt(c, "resources." + std::string(key));
    if (m != nullptr && (m->contains("cpu") || m->contains("memory"))) return true;
  }
  return false;
}

// A guaranteed container limits cpu and memory and requests what it limits.
bool IsGuaranteed(const json::object& c) {
  const json::object* limits = ObjectAt(c, "resources.limits");
  const json::object* requests = ObjectAt(c, "resources.requests");
  if (limits == nullptr || requests == nullptr) return false;
  for (std::string_view r : {"cpu", "memory"}) {
    const json::value* limit = limits->if_contains(r);
    if (limit == nullptr || !SemanticEqual(limit, requests->if_contains(r))) return false;
  }
  return true;
}

// qos.GetPodQOS, comparing quantities by their text.
std::string QosClass(const json::object& spec) {
  std::vector<const json::object*> all = ObjectsAt(spec, "containers");
  for (const json::object* c : ObjectsAt(spec, "initContainers")) all.push_back(c);
  bool any = false;
  bool guaranteed = !all.empty();
  for (const json::object* c : all) {
    any = any || HasRequestsOrLimits(*c);
    guaranteed = guaranteed && IsGuaranteed(*c);
  }
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

json::object Toleration(std::string_view key) {
  return json::object{
      {"key", key}, {"operator", "Exists"}, {"effect", "NoExecute"}, {"tolerationSeconds", 300}};
}

// What the default admission plugins add to every pod: its service account,
// priority 0 and the not-ready/unreachable tolerations.
void AdmitPod(json::object& spec) {
  SetIfEmpty(spec, "serviceAccountName", "default");
  SetIfEmpty(spec, "serviceAccount", StringAt(spec, "serviceAccountName"));
  SetIfUnset(spec, "priority", 0);
  SetIfEmpty(spec, "preemptionPolicy", "PreemptLowerPriority");
  std::set<std::string> keys;
  for (const json::object* t : ObjectsAt(spec, "tolerations")) keys.insert(StringAt(*t, "key"));
  for (std::string_view key : {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}) {
    if (keys.contains(std::string(key))) continue;
    if (MutableArray(spec, "tolerations") == nullptr) spec["tolerations"] = json::array();
    MutableArray(spec, "tolerations")->push_back(Toleration(key));
  }
}

void DefaultPod(json::object& obj) {
  json::object& spec = EnsureObject(obj, "spec");
  DefaultPodSpec(spec);
  DefaultPodOnlySpec(spec);
  AdmitPod(spec);
  std::string qos = QosClass(spec);
  json::object& status = EnsureObject(obj, "status");  // `spec` may move from here on
  SetIfEmpty(status, "phase", "Pending");
  SetIfEmpty(status, "qosClass", qos);
}

Causes ValidatePod(const json::object& obj, const json::object*) {
  Causes out;
  const json::object* spec = GetObject(obj, "spec");
  ValidatePodSpec(spec ? *spec : EmptyObject(), "spec", out);
  return out;
}

// SetDefaults_NodeStatus: allocatable defaults to capacity.
void DefaultNode(json::object& obj) {
  json::object* status = MutableObject(obj, "status");
  if (status == nullptr) return;
  if (const json::object* capacity = GetObject(*status, "capacity")) {
    SetIfUnset(*status, "allocatable", *capacity);
  }
}

std::string NodeStatus(const json::object& node) {
  std::string status;
  for (const json::object* c : ObjectsAt(node, "status.conditions")) {
    if (StringAt(*c, "type") == "Ready")
      status = StringAt(*c, "status") == "True" ? "Ready" : "NotReady";
  }
  if (status.empty()) status = "Unknown";
  if (GetBool(ObjectAt(node, "spec") ? *ObjectAt(node, "spec") : EmptyObject(), "unschedulable")
          .value_or(false)) {
    status += ",SchedulingDisabled";
  }
  return status;
}

// findNodeRoles: node-role.kubernetes.io/<role> labels and kubernetes.io/role.
std::string NodeRoles(const json::object& node) {
  std::set<std::string> roles;
  if (const json::object* labels = ObjectAt(node, "metadata.labels")) {
    constexpr std::string_view kPrefix = "node-role.kubernetes.io/";
    for (const auto& [raw_key, value] : *labels) {
      std::string_view key(raw_key.data(), raw_key.size());
      if (key.starts_with(kPrefix) && key.size() > kPrefix.size()) {
        roles.insert(std::string(key.substr(kPrefix.size())));
      } else if (key == "kubernetes.io/role" && value.is_string() && !value.get_string().empty()) {
        roles.insert(std::string(value.get_string()));
      }
    }
  }
  std::string out;
  for (const std::string& r : roles) out += (out.empty() ? "" : ",") + r;
  return out.empty() ? "<none>" : out;
}

Cell NodeAddress(std::string type) {
  return [type](const json::object& node, TimePoint) -> json::value {
    for (const json::object* a : ObjectsAt(node, "status.addresses")) {
      if (StringAt(*a, "type") == type) return json::string(StringAt(*a, "address"));
    }
    return json::string("<none>");
  };
}

Cell NodeInfo(std::string field) {
  return [field](const json::object& node, TimePoint) -> json::value {
    std::string v = StringAt(node, "status.nodeInfo." + field);
    return json::string(v.empty() ? "<unknown>" : v);
  };
}

// "a,b,c + N more..." after three entries; `empty` when there are none.
std::string ListWithMore(const std::vector<std::string>& items, std::string_view empty) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < 3; ++i) out += (i > 0 ? "," : "") + items[i];
  if (items.size() > 3) return out + " + " + std::to_string(items.size() - 3) + " more...";
  return out.empty() ? std::string(empty) : out;
}

// formatEndpoints with every port: "ip:port" per address and port.
json::value EndpointsCell(const json::object& obj, TimePoint) {
  std::vector<const json::object*> subsets = ObjectsAt(obj, "subsets");
  if (subsets.empty()) return json::string("<none>");
  std::vector<std::string> items;
  for (const json::object* ss : subsets) {
    std::vector<const json::object*> addresses = ObjectsAt(*ss, "addresses");
    std::vector<const json::object*> ports = ObjectsAt(*ss, "ports");
    if (ports.empty()) {
      for (const json::object* a : addresses) items.push_back(StringAt(*a, "ip"));
    }
    for (const json::object* p : ports) {
      for (const json::object* a : addresses) {
        std::string ip = StringAt(*a, "ip");
        std::string host = ip.find(':') != std::string::npos ? "[" + ip + "]" : ip;
        items.push_back(host + ":" + std::to_string(IntOr(*p, "port", 0)));
      }
    }
  }
  return json::string(ListWithMore(items, ""));
}

json::value SlicePorts(const json::object& obj, TimePoint) {
  std::vector<std::string> items;
  for (const json::object* p : ObjectsAt(obj, "ports")) {
    std::optional<int64_t> port = GetInt(*p, "port");
    std::optional<std::string_view> name = GetString(*p, "name");
    items.push_back(port ? std::to_string(*port) : name ? std::string(*name) : "*");
  }
  return json::string(ListWithMore(items, "<unset>"));
}

json::value SliceEndpoints(const json::object& obj, TimePoint) {
  std::vector<std::string> items;
  for (const json::object* e : ObjectsAt(obj, "endpoints")) {
    if (const json::array* addresses = GetArray(*e, "addresses")) {
      for (const json::value& a : *addresses)
        items.emplace_back(a.is_string() ? a.get_string() : "");
    }
  }
  return json::string(ListWithMore(items, "<unset>"));
}

// GetAccessModesAsString: RWO, ROX, RWX, RWOP in that order.
std::string AccessModes(const json::object& obj) {
  std::set<std::string> modes;
  if (const json::array* a = ArrayAt(obj, "status.accessModes")) {
    for (const json::value& m : *a) {
      if (m.is_string()) modes.insert(std::string(m.get_string()));
    }
  }
  std::string out;
  for (auto [mode, abbrev] :
       {std::pair{"ReadWriteOnce", "RWO"}, std::pair{"ReadOnlyMany", "ROX"},
        std::pair{"ReadWriteMany", "RWX"}, std::pair{"ReadWriteOncePod", "RWOP"}}) {
    if (modes.contains(mode)) out += (out.empty() ? "" : ",") + std::string(abbrev);
  }
  return out;
}

Cell PvcField(std::string path, std::string unset) {
  return [path, unset](const json::object& obj, TimePoint) -> json::value {
    std::string v = StringAt(obj, path);
    return json::string(v.empty() ? unset : v);
  };
}

std::vector<TableColumn> PvcColumns() {
  auto bound = [](const json::object& obj) { return !StringAt(obj, "spec.volumeName").empty(); };
  return {
      NameColumn(),
      Column("Status", "string", "phase represents the current phase of PersistentVolumeClaim.", 0,
             [](const json::object& obj, TimePoint) -> json::value {
               if (!StringAt(obj, "metadata.deletionTimestamp").empty())
                 return json::string("Terminating");
               return json::string(StringAt(obj, "status.phase"));
             }),
      Column("Volume", "string",
             "volumeName is the binding reference to the PersistentVolume backing this claim.", 0,
             PvcField("spec.volumeName", "")),
      Column("Capacity", "string",
             "capacity represents the actual resources of the underlying volume.", 0,
             [bound](const json::object& obj, TimePoint) -> json::value {
               if (!bound(obj)) return json::string("");
               const json::value* q = Find(obj, "status.capacity.storage");
               return json::string(q ? QuantityString(q) : "0");
             }),
      Column("Access Modes", "string",
             "accessModes contains the actual access modes the volume backing the PVC has.", 0,
             [bound](const json::object& obj, TimePoint) -> json::value {
               return json::string(bound(obj) ? AccessModes(obj) : "");
             }),
      Column("StorageClass", "string", "StorageClass of the pvc", 0,
             [](const json::object& obj, TimePoint) -> json::value {
               const json::object* a = ObjectAt(obj, "metadata.annotations");
               std::string beta(
                   a ? GetString(*a, "volume.beta.kubernetes.io/storage-class").value_or("") : "");
               return json::string(beta.empty() ? StringAt(obj, "spec.storageClassName") : beta);
             }),
      Column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc", 0,
             PvcField("spec.volumeAttributesClassName", "<unset>")),
      AgeColumn(),
      Column("VolumeMode", "string",
             "volumeMode defines what type of volume is required by the claim.", 1,
             PvcField("spec.volumeMode", "<unset>"))};
}

// ValidatePersistentVolumeClaim(Spec) and, on update,
// ValidatePersistentVolumeClaimUpdate: access modes, the requested
// storage, the volume mode and the class name; the spec is immutable but
// for the volume name set once, a class name set once where none was, and
// a bound claim's storage, which may only grow.
Causes ValidatePersistentVolumeClaim(const json::object& obj, const json::object* old) {
  static const std::vector<std::string> kModes = {"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce",
                                                  "ReadWriteOncePod"};
  static const std::vector<std::string> kVolumeModes = {"Block", "Filesystem"};
  Causes out;
  const json::array* modes = ArrayAt(obj, "spec.accessModes");
  if (modes == nullptr || modes->empty()) {
    out.push_back(FieldRequired("spec.accessModes", "at least 1 access mode is required"));
  } else {
    bool once_pod = false;
    for (const json::value& m : *modes) {
      std::string mode(m.is_string() ? m.get_string() : "");
      once_pod = once_pod || mode == "ReadWriteOncePod";
      if (std::find(kModes.begin(), kModes.end(), mode) == kModes.end()) {
        out.push_back(FieldNotSupported("spec.accessModes", m, kModes));
      }
    }
    if (once_pod && modes->size() > 1) {
      out.push_back(FieldForbidden("spec.accessModes",
                                   "may not use ReadWriteOncePod with other access modes"));
    }
  }
  const json::value* storage = Find(obj, "spec.resources.requests.storage");
  if (storage == nullptr) {
    out.push_back(FieldRequired("spec.resources[storage]", ""));
  } else if (std::optional<int64_t> milli = QuantityValue(*storage, 1000); !milli || *milli <= 0) {
    out.push_back(FieldInvalid("spec.resources[storage]", *storage, "must be greater than zero"));
  }
  if (const json::value* mode = Find(obj, "spec.volumeMode");
      mode != nullptr &&
      (!mode->is_string() || std::find(kVolumeModes.begin(), kVolumeModes.end(),
                                       std::string(mode->get_string())) == kVolumeModes.end())) {
    out.push_back(FieldNotSupported("spec.volumeMode", *mode, kVolumeModes));
  }
  if (std::string cls = StringAt(obj, "spec.storageClassName"); !cls.empty()) {
    for (const std::string& msg : IsDNS1123Subdomain(cls)) {
      out.push_back(FieldInvalid("spec.storageClassName", json::string(cls), msg));
    }
  }
  if (old == nullptr) return out;
  json::object was = ObjectOr(*old, "spec");
  json::object now = ObjectOr(obj, "spec");
  if (StringAt(was, "volumeName").empty()) {
    if (const json::value* v = now.if_contains("volumeName")) was["volumeName"] = *v;
  }
  if (!was.contains("storageClassName")) {
    if (const json::value* v = now.if_contains("storageClassName")) was["storageClassName"] = *v;
  }
  for (json::object* spec : {&was, &now}) spec->erase("volumeAttributesClassName");
  const json::value* old_storage = Find(*old, "spec.resources.requests.storage");
  if (StringAt(*old, "status.phase") == "Bound" && old_storage != nullptr) {
    EnsureObject(EnsureObject(now, "resources"), "requests")["storage"] = *old_storage;
  }
  json::value was_value(std::move(was)), now_value(std::move(now));
  if (!SemanticEqual(&was_value, &now_value)) {
    out.push_back(FieldForbidden("spec",
                                 "spec is immutable after creation except resources.requests "
                                 "and volumeAttributesClassName for bound claims"));
  }
  std::optional<int64_t> before =
      old_storage ? QuantityValue(*old_storage, 1000) : std::optional<int64_t>();
  std::optional<int64_t> after = storage ? QuantityValue(*storage, 1000) : std::optional<int64_t>();
  if (before && after && *after < *before) {
    out.push_back(FieldForbidden("spec.resources.requests.storage",
                                 "field can not be less than previous value"));
  }
  return out;
}

// ValidateStorageClass and, on update, ValidateStorageClassUpdate: a
// provisioner (a qualified name), parameters within 512 entries and
// 256 KiB, the reclaim policy and binding mode kube knows; parameters,
// provisioner, reclaim policy and binding mode immutable.
Causes ValidateStorageClass(const json::object& obj, const json::object* old) {
  static const std::vector<std::string> kReclaim = {"Delete", "Retain"};
  static const std::vector<std::string> kBinding = {"Immediate", "WaitForFirstConsumer"};
  constexpr size_t kMaxParameters = 512;
  constexpr int64_t kMaxParameterBytes = 256 * 1024;
  Causes out;
  std::string provisioner = StringAt(obj, "provisioner");
  if (provisioner.empty()) {
    out.push_back(FieldRequired("provisioner", ""));
  } else {
    std::string lower = provisioner;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const std::string& msg : IsQualifiedName(lower)) {
      out.push_back(FieldInvalid("provisioner", json::string(lower), msg));
    }
  }
  if (const json::object* params = ObjectAt(obj, "parameters")) {
    if (params->size() > kMaxParameters) {
      out.push_back(FieldTooLong("parameters", static_cast<int64_t>(kMaxParameters)));
    } else {
      int64_t bytes = 0;
      for (const auto& [key, value] : *params) {
        if (key.empty())
          out.push_back(FieldInvalid("parameters", json::string(""), "field can not be empty."));
        bytes += static_cast<int64_t>(key.size()) +
                 static_cast<int64_t>(value.is_string() ? value.get_string().size() : 0);
      }
      if (bytes > kMaxParameterBytes) out.push_back(FieldTooLong("parameters", kMaxParameterBytes));
    }
  }
  std::string reclaim = StringAt(obj, "reclaimPolicy");
  if (!reclaim.empty() && std::find(kReclaim.begin(), kReclaim.end(), reclaim) == kReclaim.end()) {
    out.push_back(FieldNotSupported("reclaimPolicy", json::string(reclaim), kReclaim));
  }
  const json::value* binding = obj.if_contains("volumeBindingMode");
  if (binding == nullptr || binding->is_null()) {
    out.push_back(FieldRequired("volumeBindingMode", ""));
  } else if (!binding->is_string() ||
             std::find(kBinding.begin(), kBinding.end(), std::string(binding->get_string())) ==
                 kBinding.end()) {
    out.push_back(FieldNotSupported("volumeBindingMode", *binding, kBinding));
  }
  if (old == nullptr) return out;
  if (!SemanticEqual(obj.if_contains("parameters"), old->if_contains("parameters"))) {
    out.push_back(FieldForbidden("parameters", "updates to parameters are forbidden."));
  }
  if (provisioner != StringAt(*old, "provisioner")) {
    out.push_back(FieldForbidden("provisioner", "updates to provisioner are forbidden."));
  }
  if (reclaim != StringAt(*old, "reclaimPolicy")) {
    out.push_back(FieldForbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."));
  }
  if (binding != nullptr && !SemanticEqual(binding, old->if_contains("volumeBindingMode"))) {
    out.push_back(FieldInvalid("volumeBindingMode", *binding, "field is immutable"));
  }
  return out;
}

// ValidateResourceQuota: the resource lists, the scopes and the scope
// selector.
Causes ValidateResourceQuota(const json::object& obj, const json::object*) {
  static const std::set<std::string> kScopes = {"Terminating",   "NotTerminating",
                                                "BestEffort",    "NotBestEffort",
                                                "PriorityClass", "CrossNamespacePodAffinity"};
  static const std::set<std::string> kOperators = {"In", "NotIn", "Exists", "DoesNotExist"};
  Causes out;
  for (std::string_view list : {"spec.hard", "status.hard", "status.used"}) {
    if (const json::object* m = ObjectAt(obj, list)) ValidateQuotaResourceList(*m, list, out);
  }
  if (const json::array* scopes = ArrayAt(obj, "spec.scopes")) {
    for (size_t i = 0; i < scopes->size(); ++i) {
      const json::value& s = (*scopes)[i];
      if (!s.is_string() || !kScopes.contains(std::string(s.get_string()))) {
        out.push_back(
            FieldNotSupported(Index("spec.scopes", i), s, {kScopes.begin(), kScopes.end()}));
      }
    }
  }
  std::vector<const json::object*> exprs = ObjectsAt(obj, "spec.scopeSelector.matchExpressions");
  for (size_t i = 0; i < exprs.size(); ++i) {
    std::string at = Index("spec.scopeSelector.matchExpressions", i);
    std::string scope = StringAt(*exprs[i], "scopeName");
    std::string op = StringAt(*exprs[i], "operator");
    if (!kScopes.contains(scope)) {
      out.push_back(FieldNotSupported(Child(at, "scopeName"), json::string(scope),
                                      {kScopes.begin(), kScopes.end()}));
    }
    if (!kOperators.contains(op)) {
      out.push_back(FieldNotSupported(Child(at, "operator"), json::string(op),
                                      {kOperators.begin(), kOperators.end()}));
      continue;
    }
    const json::array* values = ArrayAt(*exprs[i], "values");
    bool has_values = values != nullptr && !values->empty();
    bool wants_values = op == "In" || op == "NotIn";
    if (wants_values && !has_values) {
      out.push_back(FieldRequired(Child(at, "values"),
                                  "must be at least one value when `operator` is 'In' or 'NotIn' "
                                  "for scope selector"));
    } else if (!wants_values && has_values) {
      out.push_back(FieldInvalid(Child(at, "values"), json::value(*values),
                                 "must be no value when `operator` is 'Exist' or 'DoesNotExist' "
                                 "for scope selector"));
    }
  }
  return out;
}

// printResourceQuota: "name: used/hard" for each hard name, sorted; the
// limits.* ones in the LIMIT column, the others in REQUEST.
Cell QuotaCell(bool limits) {
  return [limits](const json::object& obj, TimePoint) -> json::value {
    const json::object* hard = ObjectAt(obj, "status.hard");
    const json::object* used = ObjectAt(obj, "status.used");
    std::map<std::string, std::string> sorted;
    if (hard != nullptr) {
      for (const auto& [name, q] : *hard) {
        if (std::string_view(name).starts_with("limits.") != limits) continue;
        const json::value* u = used ? used->if_contains(name) : nullptr;
        sorted[std::string(name)] = (u ? QuantityString(u) : "0") + "/" + QuantityString(&q);
      }
    }
    std::string out;
    for (const auto& [name, value] : sorted) out += (out.empty() ? "" : ", ") + name + ": " + value;
    return json::string(out);
  };
}

}  // namespace

Resource PodResource() {
  Resource r = MakeResource("", "v1", "Pod", "pods", true, "io.k8s.api.core.v1.Pod");
  r.short_names = {"po"};
  r.categories = {"all"};
  r.has_status = true;
  r.status_keeps_metadata = {"ownerReferences"};
  r.default_fn = DefaultPod;
  r.validate_fn = ValidatePod;
  r.columns = PodColumns();
  return r;
}

Resource MemberPodsViewResource() {
  Resource r = PodResource();
  r.verbs = {"delete", "get", "list", "watch"};
  r.has_status = false;
  r.default_fn = nullptr;
  r.validate_fn = nullptr;
  r.columns.insert(r.columns.begin() + 1,
                   Column("Cluster", "string", "The member cluster the pod runs in.", 0,
                          [](const json::object& pod, TimePoint) -> json::value {
                            return json::string(ObjectView(pod).label(kMemberClusterLabel));
                          }));
  return r;
}

Resource NodeResource() {
  Resource r = MakeResource("", "v1", "Node", "nodes", false, "io.k8s.api.core.v1.Node");
  r.short_names = {"no"};
  r.has_status = true;
  r.default_fn = DefaultNode;
  r.columns = {
      NameColumn(),
      Column("Status", "string", "The status of the node", 0,
             [](const json::object& n, TimePoint) -> json::value {
               return json::string(NodeStatus(n));
             }),
      Column("Roles", "string", "The roles of the node", 0,
             [](const json::object& n, TimePoint) -> json::value {
               return json::string(NodeRoles(n));
             }),
      AgeColumn(),
      Column("Version", "string", "Kubelet Version reported by the node.", 0,
             [](const json::object& n, TimePoint) -> json::value {
               return json::string(StringAt(n, "status.nodeInfo.kubeletVersion"));
             }),
      Column("Internal-IP", "string", "List of addresses reachable to the node.", 1,
             NodeAddress("InternalIP")),
      Column("External-IP", "string", "List of addresses reachable to the node.", 1,
             NodeAddress("ExternalIP")),
      Column("OS-Image", "string", "OS Image reported by the node from /etc/os-release.", 1,
             NodeInfo("osImage")),
      Column("Kernel-Version", "string", "Kernel Version reported by the node.", 1,
             NodeInfo("kernelVersion")),
      Column("Container-Runtime", "string", "ContainerRuntime Version reported by the node.", 1,
             NodeInfo("containerRuntimeVersion"))};
  return r;
}

Resource EndpointsResource() {
  Resource r =
      MakeResource("", "v1", "Endpoints", "endpoints", true, "io.k8s.api.core.v1.Endpoints");
  r.short_names = {"ep"};
  r.default_fn = [](json::object& obj) {
    ForEachObject(obj, "subsets", [](json::object& ss) {
      ForEachObject(ss, "ports", [](json::object& p) { SetIfEmpty(p, "protocol", "TCP"); });
    });
  };
  r.columns = {NameColumn(),
               Column("Endpoints", "string",
                      "The set of all endpoints is the union of all subsets.", 0, EndpointsCell),
               AgeColumn()};
  return r;
}

Resource PersistentVolumeClaimResource() {
  Resource r = MakeResource("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", true,
                            "io.k8s.api.core.v1.PersistentVolumeClaim");
  r.short_names = {"pvc"};
  r.has_status = true;
  r.validate_fn = ValidatePersistentVolumeClaim;
  r.default_fn = [](json::object& obj) {
    SetIfUnset(EnsureObject(obj, "spec"), "volumeMode", "Filesystem");
    SetIfEmpty(EnsureObject(obj, "status"), "phase", "Pending");
  };
  r.columns = PvcColumns();
  return r;
}

Resource StorageClassResource() {
  Resource r = MakeResource("storage.k8s.io", "v1", "StorageClass", "storageclasses", false,
                            "io.k8s.api.storage.v1.StorageClass");
  r.short_names = {"sc"};
  r.validate_fn = ValidateStorageClass;
  r.default_fn = [](json::object& obj) {
    SetIfUnset(obj, "reclaimPolicy", "Delete");
    SetIfUnset(obj, "volumeBindingMode", "Immediate");
  };
  // printStorageClass: the default class's name says so.
  r.columns = {
      Column(NameColumn().name, "string", NameColumn().description, 0,
             [](const json::object& obj, TimePoint) -> json::value {
               std::string name = StringAt(obj, "metadata.name");
               return json::string(IsDefaultStorageClass(obj) ? name + " (default)" : name);
             }),
      Column("Provisioner", "string", "provisioner indicates the type of the provisioner.", 0,
             StringCell("provisioner")),
      Column("ReclaimPolicy", "string",
             "reclaimPolicy controls the reclaimPolicy for dynamically provisioned "
             "PersistentVolumes of this storage class. Defaults to Delete.",
             0, PvcField("reclaimPolicy", "Delete")),
      Column("VolumeBindingMode", "string",
             "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and "
             "bound.  When unset, VolumeBindingImmediate is used. This field is only honored by "
             "servers that enable the VolumeScheduling feature.",
             0, PvcField("volumeBindingMode", "Immediate")),
      Column("AllowVolumeExpansion", "string",
             "allowVolumeExpansion shows whether the storage class allow volume expand.", 0,
             [](const json::object& obj, TimePoint) -> json::value {
               const json::value* allow = obj.if_contains("allowVolumeExpansion");
               return json::value(allow != nullptr && allow->is_bool() && allow->get_bool());
             }),
      AgeColumn()};
  r.columns.front().format = "name";
  return r;
}

Resource ResourceQuotaResource() {
  Resource r = MakeResource("", "v1", "ResourceQuota", "resourcequotas", true,
                            "io.k8s.api.core.v1.ResourceQuota");
  r.short_names = {"quota"};
  r.has_status = true;
  r.validate_fn = ValidateResourceQuota;
  r.columns = {NameColumn(), AgeColumn(),
               Column("Request", "string",
                      "Request represents a minimum amount of cpu/memory "
                      "that a container may consume.",
                      0, QuotaCell(false)),
               Column("Limit", "string",
                      "Limits control the maximum amount of cpu/memory that "
                      "a container may use independent of contention on the node.",
                      0, QuotaCell(true))};
  return r;
}

Resource EndpointSliceResource() {
  Resource r = MakeResource("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", true,
                            "io.k8s.api.discovery.v1.EndpointSlice");
  r.default_fn = [](json::object& obj) {
    ForEachObject(obj, "ports", [](json::object& p) {
      SetIfUnset(p, "name", "");
      SetIfUnset(p, "protocol", "TCP");
    });
  };
  r.columns = {
      NameColumn(),
      Column("AddressType", "string",
             "addressType specifies the type of address carried by this EndpointSlice.", 0,
             [](const json::object& obj, TimePoint) -> json::value {
               return json::string(StringAt(obj, "addressType"));
             }),
      Column("Ports", "string",
             "ports specifies the list of network ports exposed by each endpoint in this slice.", 0,
             SlicePorts),
      Column("Endpoints", "string", "endpoints is a list of unique endpoints in this slice.", 0,
             SliceEndpoints),
      AgeColumn()};
  return r;
}

}  // namespace flotilla::api::kinds
