// v1 Service: defaults, validation (ValidateService and the cluster IP
// update rules) and printService's columns. Allocating cluster IPs and node
// ports needs server state and is the server's job.
#include <arpa/inet.h>

#include <map>
#include <set>

#include "api/kinds/resources.h"
#include "api/kinds/util.h"
#include "api/validation.h"

namespace flotilla::api::kinds {
namespace {

std::vector<std::string> Strings(const json::object& o, std::string_view key) {
  std::vector<std::string> out;
  if (const json::array* a = GetArray(o, key)) {
    for (const json::value& v : *a) out.emplace_back(v.is_string() ? v.get_string() : "");
  }
  return out;
}

bool IsIPv6(std::string_view ip) {
  in6_addr addr;
  return inet_pton(AF_INET6, std::string(ip).c_str(), &addr) == 1;
}

bool IsIP(std::string_view ip) {
  in_addr addr;
  return inet_pton(AF_INET, std::string(ip).c_str(), &addr) == 1 || IsIPv6(ip);
}

bool IsHeadless(const json::object& spec) {
  std::vector<std::string> ips = Strings(spec, "clusterIPs");
  return ips.size() == 1 && ips[0] == "None";
}

void DefaultPorts(json::object& spec) {
  ForEachObject(spec, "ports", [](json::object& port) {
    SetIfEmpty(port, "protocol", "TCP");
    const json::value* target = port.if_contains("targetPort");
    bool unset = target == nullptr || target->is_null() ||
                 (target->is_string() && target->get_string().empty()) ||
                 (GetInt(port, "targetPort") == 0);
    if (unset && port.contains("port")) {
      json::value number = port["port"];  // inserting targetPort may move it
      port["targetPort"] = std::move(number);
    }
  });
}

void DefaultSessionAffinity(json::object& spec) {
  SetIfEmpty(spec, "sessionAffinity", "None");
  std::string affinity = StringAt(spec, "sessionAffinity");
  if (affinity == "None") spec.erase("sessionAffinityConfig");
  if (affinity == "ClientIP" && !IntAt(spec, "sessionAffinityConfig.clientIP.timeoutSeconds")) {
    spec["sessionAffinityConfig"] = json::object{{"clientIP", {{"timeoutSeconds", 10800}}}};
  }
}

// The IP family fields kube-apiserver fills in when it allocates the
// service's IPs: single-stack, in the family of the given cluster IP.
void DefaultIPFamilies(json::object& spec) {
  std::string ip = StringAt(spec, "clusterIP");
  if (!ip.empty() && Strings(spec, "clusterIPs").empty()) spec["clusterIPs"] = json::array{ip};
  SetIfEmpty(spec, "ipFamilyPolicy", "SingleStack");
  if (Strings(spec, "ipFamilies").empty()) {
    spec["ipFamilies"] = json::array{IsIPv6(ip) ? "IPv6" : "IPv4"};
  }
}

// SetDefaults_Service, plus the IP family fields.
void DefaultService(json::object& obj) {
  json::object& spec = EnsureObject(obj, "spec");
  SetIfEmpty(spec, "type", "ClusterIP");
  DefaultSessionAffinity(spec);
  DefaultPorts(spec);
  std::string type = StringAt(spec, "type");
  bool external = type == "NodePort" || type == "LoadBalancer";
  if (external) SetIfEmpty(spec, "externalTrafficPolicy", "Cluster");
  if (external || type == "ClusterIP") {
    SetIfUnset(spec, "internalTrafficPolicy", "Cluster");
    DefaultIPFamilies(spec);
  }
  if (type != "LoadBalancer") return;
  SetIfUnset(spec, "allocateLoadBalancerNodePorts", true);
  json::object* status = MutableObject(obj, "status");
  json::object* lb = status ? MutableObject(*status, "loadBalancer") : nullptr;
  if (lb == nullptr) return;
  ForEachObject(*lb, "ingress", [](json::object& ingress) {
    if (!StringAt(ingress, "ip").empty()) SetIfUnset(ingress, "ipMode", "VIP");
  });
}

// %#v of the core.ServicePort key kube-apiserver reports a duplicate with.
std::string GoServicePortKey(const json::object& port) {
  return "core.ServicePort{Name:\"\", Protocol:" + QuoteGo(StringAt(port, "protocol")) +
         ", AppProtocol:(*string)(nil), Port:" + std::to_string(IntOr(port, "port", 0)) +
         ", TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}, NodePort:0}";
}

void ValidateTargetPort(const json::object& port, const std::string& path, Causes& out) {
  const json::value* target = port.if_contains("targetPort");
  std::string at = Child(path, "targetPort");
  if (target != nullptr && target->is_string()) {
    for (std::string& msg : IsValidPortName(target->get_string())) {
      out.push_back(FieldInvalid(at, *target, msg));
    }
    return;
  }
  int64_t n = GetInt(port, "targetPort").value_or(0);
  if (n < 1 || n > 65535)
    out.push_back(FieldInvalid(at, n, "must be between 1 and 65535, inclusive"));
}

void ValidateServicePort(const json::object& port, bool require_name, const std::string& path,
                         std::set<std::string>& names, Causes& out) {
  std::string name = StringAt(port, "name");
  if (require_name && name.empty()) {
    out.push_back(FieldRequired(Child(path, "name"), ""));
  } else if (!name.empty()) {
    for (std::string& msg : IsDNS1123Label(name)) {
      out.push_back(FieldInvalid(Child(path, "name"), json::string(name), msg));
    }
    if (!names.insert(name).second) {
      out.push_back(FieldDuplicate(Child(path, "name"), json::string(name)));
    }
  }
  int64_t number = IntOr(port, "port", 0);
  if (number < 1 || number > 65535) {
    out.push_back(
        FieldInvalid(Child(path, "port"), number, "must be between 1 and 65535, inclusive"));
  }
  std::string protocol = StringAt(port, "protocol");
  if (protocol.empty()) {
    out.push_back(FieldRequired(Child(path, "protocol"), ""));
  } else if (protocol != "TCP" && protocol != "UDP" && protocol != "SCTP") {
    out.push_back(
        FieldNotSupported(Child(path, "protocol"), json::string(protocol), {"SCTP", "TCP", "UDP"}));
  }
  ValidateTargetPort(port, path, out);
}

void ValidatePorts(const json::object& spec, Causes& out) {
  std::vector<const json::object*> ports = ObjectsAt(spec, "ports");
  std::string type = StringAt(spec, "type");
  std::set<std::string> names;
  std::set<std::pair<std::string, int64_t>> seen, node_ports;
  for (size_t i = 0; i < ports.size(); ++i) {
    const json::object& port = *ports[i];
    std::string at = Index("spec.ports", i);
    ValidateServicePort(port, ports.size() > 1, at, names, out);
    int64_t node_port = IntOr(port, "nodePort", 0);
    if (type == "ClusterIP" && node_port != 0) {
      out.push_back(
          FieldForbidden(Child(at, "nodePort"), "may not be used when `type` is 'ClusterIP'"));
    }
    if (node_port != 0 && (node_port < 1 || node_port > 65535)) {
      out.push_back(
          FieldInvalid(Child(at, "nodePort"), node_port, "must be between 1 and 65535, inclusive"));
    }
    std::string protocol = StringAt(port, "protocol");
    if (node_port != 0 && !node_ports.insert({protocol, node_port}).second) {
      out.push_back(FieldDuplicate(Child(at, "nodePort"), node_port));
    }
    if (!seen.insert({protocol, IntOr(port, "port", 0)}).second) {
      out.push_back(
          StatusCause{"FieldValueDuplicate", "Duplicate value: " + GoServicePortKey(port), at});
    }
  }
}

void ValidateByType(const json::object& spec, Causes& out) {
  std::string type = StringAt(spec, "type");
  bool headless = IsHeadless(spec);
  if (ObjectsAt(spec, "ports").empty() && !headless && type != "ExternalName") {
    out.push_back(FieldRequired("spec.ports", ""));
  }
  if ((type == "LoadBalancer" || type == "NodePort") && headless) {
    out.push_back(FieldInvalid("spec.clusterIPs[0]", json::string("None"),
                               "may not be set to 'None' for " + type + " services"));
  }
  if (type != "ExternalName") return;
  if (!Strings(spec, "clusterIPs").empty()) {
    out.push_back(FieldForbidden("spec.clusterIPs", "may not be set for ExternalName services"));
  }
  if (!Strings(spec, "ipFamilies").empty()) {
    out.push_back(FieldForbidden("spec.ipFamilies", "may not be set for ExternalName services"));
  }
  if (!StringAt(spec, "ipFamilyPolicy").empty()) {
    out.push_back(
        FieldForbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"));
  }
  std::string cname = StringAt(spec, "externalName");
  if (!cname.empty() && cname.back() == '.') cname.pop_back();
  if (cname.empty()) out.push_back(FieldRequired("spec.externalName", ""));
  for (std::string& msg : cname.empty() ? std::vector<std::string>() : IsDNS1123Subdomain(cname)) {
    out.push_back(FieldInvalid("spec.externalName", json::string(cname), msg));
  }
}

void ValidateAffinity(const json::object& spec, Causes& out) {
  std::string affinity = StringAt(spec, "sessionAffinity");
  if (affinity.empty()) {
    out.push_back(FieldRequired("spec.sessionAffinity", ""));
  } else if (affinity != "ClientIP" && affinity != "None") {
    out.push_back(
        FieldNotSupported("spec.sessionAffinity", json::string(affinity), {"ClientIP", "None"}));
  }
  if (affinity == "None" && spec.contains("sessionAffinityConfig")) {
    out.push_back(FieldForbidden("spec.sessionAffinityConfig",
                                 "must not be set when session affinity is None"));
  }
  std::optional<int64_t> timeout = IntAt(spec, "sessionAffinityConfig.clientIP.timeoutSeconds");
  if (affinity == "ClientIP" && timeout && (*timeout <= 0 || *timeout > 86400)) {
    out.push_back(FieldInvalid("spec.sessionAffinityConfig.clientIP.timeoutSeconds", *timeout,
                               "must be greater than 0 and less than 86400"));
  }
}

// ValidateServiceClusterIPsRelatedFields.
void ValidateClusterIPs(const json::object& spec, Causes& out) {
  if (StringAt(spec, "type") == "ExternalName") return;
  std::string ip = StringAt(spec, "clusterIP");
  std::vector<std::string> ips = Strings(spec, "clusterIPs");
  std::string repr = GoStringSlice(spec.if_contains("clusterIPs"));
  if (!ip.empty() && ips.empty()) out.push_back(FieldRequired("spec.clusterIPs", ""));
  if (!ip.empty() && !ips.empty() && ips[0] != ip) {
    out.push_back(InvalidRepr("spec.clusterIPs", repr, "first value must match `clusterIP`"));
  }
  if (ip.empty() && !ips.empty()) {
    out.push_back(
        InvalidRepr("spec.clusterIPs", repr, "must be empty when `clusterIP` is not specified"));
  }
  std::vector<std::string> families = Strings(spec, "ipFamilies");
  for (size_t i = 0; i < families.size(); ++i) {
    if (families[i] != "IPv4" && families[i] != "IPv6") {
      out.push_back(FieldNotSupported(Index("spec.ipFamilies", i), json::string(families[i]),
                                      {"IPv4", "IPv6"}));
    }
  }
  std::string policy = StringAt(spec, "ipFamilyPolicy");
  if (!policy.empty() && policy != "SingleStack" && policy != "PreferDualStack" &&
      policy != "RequireDualStack") {
    out.push_back(FieldNotSupported("spec.ipFamilyPolicy", json::string(policy),
                                    {"PreferDualStack", "RequireDualStack", "SingleStack"}));
  }
  for (size_t i = 0; i < ips.size(); ++i) {
    if (i == 0 && ips[i] == "None") continue;
    if (!IsIP(ips[i])) {
      out.push_back(FieldInvalid(Index("spec.clusterIPs", i), json::string(ips[i]),
                                 "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"));
    }
  }
  if (ips.size() > 2)
    out.push_back(InvalidRepr("spec.clusterIPs", repr, "may only hold up to 2 values"));
}

// validateUpgradeDowngradeClusterIPs: allocated cluster IPs never change.
void ValidateClusterIPUpdate(const json::object& spec, const json::object& old_spec, Causes& out) {
  if (StringAt(spec, "type") == "ExternalName" || StringAt(old_spec, "type") == "ExternalName")
    return;
  if (IsHeadless(spec) && IsHeadless(old_spec)) return;
  std::vector<std::string> ips = Strings(spec, "clusterIPs");
  std::vector<std::string> old_ips = Strings(old_spec, "clusterIPs");
  std::string repr = GoStringSlice(spec.if_contains("clusterIPs"));
  if (old_ips.size() == ips.size()) {
    for (size_t i = 0; i < ips.size(); ++i) {
      if (ips[i] != old_ips[i])
        out.push_back(InvalidRepr(Index("spec.clusterIPs", i), repr, "may not change once set"));
    }
  } else if (old_ips.size() > ips.size()) {
    if (ips.empty())
      out.push_back(InvalidRepr("spec.clusterIPs[0]", repr, "primary clusterIP can not be unset"));
    if (!ips.empty() && ips[0] != old_ips[0])
      out.push_back(InvalidRepr("spec.clusterIPs[0]", repr, "may not change once set"));
  } else if (!old_ips.empty() && ips[0] != old_ips[0]) {
    out.push_back(InvalidRepr("spec.clusterIPs[0]", repr, "may not change once set"));
  }
}

Causes ValidateService(const json::object& obj, const json::object* old) {
  Causes out;
  const json::object& spec = GetObject(obj, "spec") ? *GetObject(obj, "spec") : EmptyObject();
  if (old != nullptr) {
    const json::object* old_spec = GetObject(*old, "spec");
    ValidateClusterIPUpdate(spec, old_spec ? *old_spec : EmptyObject(), out);
  }
  ValidateByType(spec, out);
  ValidatePorts(spec, out);
  for (StatusCause& c : ValidateLabels(spec.if_contains("selector"), "spec.selector")) {
    out.push_back(std::move(c));
  }
  ValidateAffinity(spec, out);
  ValidateClusterIPs(spec, out);
  std::string type = StringAt(spec, "type");
  if (type.empty()) {
    out.push_back(FieldRequired("spec.type", ""));
  } else if (type != "ClusterIP" && type != "ExternalName" && type != "LoadBalancer" &&
             type != "NodePort") {
    out.push_back(FieldNotSupported("spec.type", json::string(type),
                                    {"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"}));
  }
  std::string itp = StringAt(spec, "internalTrafficPolicy");
  if (!itp.empty() && itp != "Cluster" && itp != "Local") {
    out.push_back(
        FieldNotSupported("spec.internalTrafficPolicy", json::string(itp), {"Cluster", "Local"}));
  }
  return out;
}

// loadBalancerStatusStringer (wide): ingress IPs or hostnames, sorted, unique.
std::string LoadBalancerIPs(const json::object& obj) {
  std::set<std::string> result;
  for (const json::object* ingress : ObjectsAt(obj, "status.loadBalancer.ingress")) {
    std::string ip = StringAt(*ingress, "ip");
    std::string host = StringAt(*ingress, "hostname");
    if (!ip.empty()) {
      result.insert(ip);
    } else if (!host.empty()) {
      result.insert(host);
    }
  }
  std::string out;
  for (const std::string& s : result) out += (out.empty() ? "" : ",") + s;
  return out;
}

std::string Join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

// getServiceExternalIP.
json::value ExternalIPCell(const json::object& obj, TimePoint) {
  const json::object& spec = ObjectAt(obj, "spec") ? *ObjectAt(obj, "spec") : EmptyObject();
  std::string type = StringAt(spec, "type");
  std::string external = Join(Strings(spec, "externalIPs"));
  if (type == "ClusterIP" || type == "NodePort") {
    return json::string(external.empty() ? "<none>" : external);
  }
  if (type == "LoadBalancer") {
    std::string lb = LoadBalancerIPs(obj);
    if (!external.empty()) return json::string(lb.empty() ? external : lb + "," + external);
    return json::string(lb.empty() ? "<pending>" : lb);
  }
  if (type == "ExternalName") return json::string(StringAt(spec, "externalName"));
  return json::string("<unknown>");
}

// makePortString: "80/TCP", "80:30080/TCP", joined by ",".
json::value PortsCell(const json::object& obj, TimePoint) {
  std::string out;
  for (const json::object* port : ObjectsAt(obj, "spec.ports")) {
    std::string piece = std::to_string(IntOr(*port, "port", 0));
    int64_t node_port = IntOr(*port, "nodePort", 0);
    if (node_port > 0) piece += ":" + std::to_string(node_port);
    piece += "/" + StringAt(*port, "protocol");
    out += (out.empty() ? "" : ",") + piece;
  }
  return json::string(out.empty() ? "<none>" : out);
}

json::value ClusterIPCell(const json::object& obj, TimePoint) {
  const json::array* ips = ArrayAt(obj, "spec.clusterIPs");
  if (ips != nullptr && !ips->empty() && (*ips)[0].is_string()) return (*ips)[0];
  std::string ip = StringAt(obj, "spec.clusterIP");
  return json::string(ip.empty() ? "<none>" : ip);
}

}  // namespace

Resource ServiceResource() {
  Resource r = MakeResource("", "v1", "Service", "services", true, "io.k8s.api.core.v1.Service");
  r.short_names = {"svc"};
  r.categories = {"all"};
  r.has_status = true;
  r.default_fn = DefaultService;
  r.validate_fn = ValidateService;
  r.columns = {
      NameColumn(),
      Column("Type", "string", "type determines how the Service is exposed.", 0,
             StringCell("spec.type")),
      Column("Cluster-IP", "string", "clusterIP is the IP address of the service.", 0,
             ClusterIPCell),
      Column("External-IP", "string",
             "externalIPs is a list of IP addresses for which nodes in the cluster will also "
             "accept traffic for this service.",
             0, ExternalIPCell),
      Column("Port(s)", "string", "The list of ports that are exposed by this service.", 0,
             PortsCell),
      AgeColumn(),
      Column("Selector", "string",
             "Route service traffic to pods with label keys and values matching this selector.", 1,
             [](const json::object& obj, TimePoint) -> json::value {
               return json::string(FormatLabels(ObjectAt(obj, "spec.selector")));
             })};
  return r;
}

}  // namespace flotilla::api::kinds
