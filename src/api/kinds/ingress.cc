// networking.k8s.io/v1 Ingress and IngressClass: defaults, validation
// (pkg/apis/networking/validation), printIngress's and printIngressClass's
// columns and registration.
#include <arpa/inet.h>

#include "api/kinds/resources.h"
#include "api/kinds/util.h"
#include "api/resources.h"
#include "api/validation.h"

namespace flotilla::api::kinds {
namespace {

constexpr std::string_view kWildcardMessage =
    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which "
    "must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric "
    "character (e.g. '*.example.com', regex used for validation is "
    "'\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

bool IsIp(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

// A rule's or TLS entry's host: a DNS subdomain, or one under "*.".
void CheckHost(const std::string& host, const std::string& path, Causes& out) {
  if (host.find('*') != std::string::npos) {
    if (!host.starts_with("*.") || !IsDNS1123Subdomain(host.substr(2)).empty()) {
      out.push_back(FieldInvalid(path, json::string(host), kWildcardMessage));
    }
    return;
  }
  for (const std::string& msg : IsDNS1123Subdomain(host)) {
    out.push_back(FieldInvalid(path, json::string(host), msg));
  }
}

// validateIngressBackend: a Service (name and one port) or a resource.
void CheckBackend(const json::object& backend, const std::string& path, Causes& out) {
  const json::object* service = GetObject(backend, "service");
  const json::object* resource = GetObject(backend, "resource");
  if (service != nullptr && resource != nullptr) {
    out.push_back(InvalidRepr(path, "\"\"", "cannot set both resource and service backends"));
    return;
  }
  if (resource != nullptr) {
    std::string at = Child(path, "resource");
    if (StringAt(*resource, "kind").empty()) out.push_back(FieldRequired(Child(at, "kind"), ""));
    if (StringAt(*resource, "name").empty()) out.push_back(FieldRequired(Child(at, "name"), ""));
    return;
  }
  if (service == nullptr) {
    out.push_back(InvalidRepr(path, "\"\"", "resource or service backend is required"));
    return;
  }
  std::string at = Child(path, "service");
  std::string name = StringAt(*service, "name");
  if (name.empty()) {
    out.push_back(FieldRequired(Child(at, "name"), ""));
  } else {
    for (const std::string& msg : IsDNS1035Label(name)) {
      out.push_back(FieldInvalid(Child(at, "name"), json::string(name), msg));
    }
  }
  const json::object& port = ObjectOr(*service, "port");
  std::string port_path = Child(at, "port");
  std::string port_name = StringAt(port, "name");
  std::optional<int64_t> number = GetInt(port, "number");
  if (!port_name.empty() && number && *number != 0) {
    out.push_back(
        InvalidRepr(port_path, "\"" + port_name + "\"", "cannot set both port name & port number"));
  } else if (!port_name.empty()) {
    for (const std::string& msg : IsValidPortName(port_name)) {
      out.push_back(FieldInvalid(Child(port_path, "name"), json::string(port_name), msg));
    }
  } else if (number && *number != 0) {
    if (*number < 1 || *number > 65535) {
      out.push_back(FieldInvalid(Child(port_path, "number"), *number,
                                 "must be between 1 and 65535, inclusive"));
    }
  } else {
    out.push_back(FieldRequired(port_path, "port name or number is required"));
  }
}

// validateHTTPIngressPath's path rules for its pathType.
void CheckPath(const json::object& p, const std::string& path, Causes& out) {
  std::string value = StringAt(p, "path");
  const json::value* type = p.if_contains("pathType");
  std::string at = Child(path, "path");
  if (type == nullptr || type->is_null()) {
    out.push_back(FieldRequired(Child(path, "pathType"), "pathType must be specified"));
    return;
  }
  if (!(*type == "Exact" || *type == "Prefix" || *type == "ImplementationSpecific")) {
    out.push_back(FieldNotSupported(Child(path, "pathType"), *type,
                                    {"Exact", "ImplementationSpecific", "Prefix"}));
    return;
  }
  if (*type == "ImplementationSpecific" && value.empty()) return;
  if (!value.starts_with("/")) {
    out.push_back(FieldInvalid(at, json::string(value), "must be an absolute path"));
    return;
  }
  if (*type == "ImplementationSpecific") return;
  for (std::string_view bad : {"//", "/./", "/../", "%2f", "%2F"}) {
    if (value.find(bad) != std::string::npos) {
      out.push_back(
          FieldInvalid(at, json::string(value), "must not contain '" + std::string(bad) + "'"));
      return;
    }
  }
  for (std::string_view bad : {"/..", "/."}) {
    if (value.ends_with(bad)) {
      out.push_back(
          FieldInvalid(at, json::string(value), "cannot end with '" + std::string(bad) + "'"));
      return;
    }
  }
}

Causes ValidateIngress(const json::object& obj, const json::object*) {
  Causes out;
  const json::object& spec = ObjectOr(obj, "spec");
  const json::array* rules = GetArray(spec, "rules");
  const json::object* default_backend = GetObject(spec, "defaultBackend");
  if ((rules == nullptr || rules->empty()) && default_backend == nullptr) {
    out.push_back(InvalidRepr("spec", "[]networking.IngressRule(nil)",
                              "either `defaultBackend` or `rules` must be specified"));
  }
  if (default_backend != nullptr) CheckBackend(*default_backend, "spec.defaultBackend", out);
  for (size_t i = 0; rules != nullptr && i < rules->size(); ++i) {
    if (!rules->at(i).is_object()) continue;
    const json::object& rule = rules->at(i).get_object();
    std::string path = Index("spec.rules", i);
    std::string host = StringAt(rule, "host");
    if (!host.empty()) {
      if (IsIp(host)) {
        out.push_back(FieldInvalid(Child(path, "host"), json::string(host),
                                   "must be a DNS name, not an IP address"));
      } else {
        CheckHost(host, Child(path, "host"), out);
      }
    }
    const json::object* http = GetObject(rule, "http");
    if (http == nullptr) continue;
    const json::array* paths = GetArray(*http, "paths");
    std::string paths_path = Child(Child(path, "http"), "paths");
    if (paths == nullptr || paths->empty()) {
      out.push_back(FieldRequired(paths_path, ""));
      continue;
    }
    for (size_t j = 0; j < paths->size(); ++j) {
      if (!paths->at(j).is_object()) continue;
      const json::object& p = paths->at(j).get_object();
      std::string at = Index(paths_path, j);
      CheckPath(p, at, out);
      CheckBackend(ObjectOr(p, "backend"), Child(at, "backend"), out);
    }
  }
  const json::array* tls = GetArray(spec, "tls");
  for (size_t i = 0; tls != nullptr && i < tls->size(); ++i) {
    if (!tls->at(i).is_object()) continue;
    const json::array* hosts = GetArray(tls->at(i).get_object(), "hosts");
    for (size_t j = 0; hosts != nullptr && j < hosts->size(); ++j) {
      if (hosts->at(j).is_string()) {
        CheckHost(std::string(hosts->at(j).get_string()),
                  Index(Child(Index("spec.tls", i), "hosts"), j), out);
      }
    }
  }
  std::string class_name = StringAt(spec, "ingressClassName");
  for (const std::string& msg :
       class_name.empty() ? std::vector<std::string>{} : IsDNS1123Subdomain(class_name)) {
    out.push_back(FieldInvalid("spec.ingressClassName", json::string(class_name), msg));
  }
  return out;
}

// SetDefaults_IngressClass: parameters are Cluster-scoped unless said.
void DefaultIngressClass(json::object& obj) {
  json::object& spec = EnsureObject(obj, "spec");
  json::value* params = spec.if_contains("parameters");
  if (params != nullptr && params->is_object()) {
    SetIfUnset(params->get_object(), "scope", "Cluster");
  }
}

Causes ValidateIngressClass(const json::object& obj, const json::object* old) {
  Causes out;
  std::string controller = StringAt(obj, "spec.controller");
  if (controller.empty()) {
    out.push_back(FieldRequired("spec.controller", ""));
  } else {
    size_t slash = controller.find('/');
    if (controller.size() > 250) {
      out.push_back(
          {"FieldValueTooLong", "Too long: may not be more than 250 bytes", "spec.controller"});
    } else if (slash == std::string::npos || slash == 0 || slash + 1 == controller.size() ||
               !IsDNS1123Subdomain(controller.substr(0, slash)).empty()) {
      out.push_back(FieldInvalid("spec.controller", json::string(controller),
                                 "must be a domain-prefixed path (such as \"acme.io/foo\")"));
    }
    if (old != nullptr && StringAt(*old, "spec.controller") != controller) {
      out.push_back(
          FieldInvalid("spec.controller", json::string(controller), "field is immutable"));
    }
  }
  const json::object* params = ObjectAt(obj, "spec.parameters");
  if (params != nullptr) {
    if (StringAt(*params, "kind").empty()) {
      out.push_back(FieldRequired("spec.parameters.kind", "kind is required"));
    }
    if (StringAt(*params, "name").empty()) {
      out.push_back(FieldRequired("spec.parameters.name", "name is required"));
    }
    const json::value* scope = params->if_contains("scope");
    if (scope != nullptr && !(*scope == "Cluster" || *scope == "Namespace")) {
      out.push_back(FieldNotSupported("spec.parameters.scope", *scope, {"Cluster", "Namespace"}));
    } else if (scope != nullptr && *scope == "Namespace" &&
               StringAt(*params, "namespace").empty()) {
      out.push_back(
          FieldRequired("spec.parameters.namespace", "`parameters.scope` is set to 'Namespace'"));
    } else if (scope != nullptr && *scope == "Cluster" && !StringAt(*params, "namespace").empty()) {
      out.push_back(
          FieldForbidden("spec.parameters.namespace", "`parameters.scope` is set to 'Cluster'"));
    }
  }
  return out;
}

// formatHosts: up to three hosts ("*" for a rule without one).
json::value HostsCell(const json::object& obj, TimePoint) {
  std::vector<std::string> hosts;
  const json::array* rules = ArrayAt(obj, "spec.rules");
  for (size_t i = 0; rules != nullptr && i < rules->size(); ++i) {
    if (!rules->at(i).is_object()) continue;
    std::string host = StringAt(rules->at(i).get_object(), "host");
    hosts.push_back(host.empty() ? "*" : host);
  }
  if (hosts.empty()) return json::string("*");
  std::string out;
  for (size_t i = 0; i < hosts.size() && i < 3; ++i) out += (i ? "," : "") + hosts[i];
  if (hosts.size() > 3) out += " + " + std::to_string(hosts.size() - 3) + " more...";
  return json::string(out);
}

// loadBalancerStatusStringer: the addresses, cut to 16 characters.
json::value AddressCell(const json::object& obj, TimePoint) {
  std::string out;
  const json::array* ingress = ArrayAt(obj, "status.loadBalancer.ingress");
  for (size_t i = 0; ingress != nullptr && i < ingress->size(); ++i) {
    if (!ingress->at(i).is_object()) continue;
    const json::object& entry = ingress->at(i).get_object();
    std::string address = StringAt(entry, "ip");
    if (address.empty()) address = StringAt(entry, "hostname");
    if (address.empty()) continue;
    out += (out.empty() ? "" : ",") + address;
  }
  if (out.size() > 16) out = out.substr(0, 13) + "...";
  return json::string(out);
}

}  // namespace

Resource IngressResource() {
  Resource r = MakeResource("networking.k8s.io", "v1", "Ingress", "ingresses", true,
                            "io.k8s.api.networking.v1.Ingress");
  r.short_names = {"ing"};
  r.has_status = true;
  r.validate_fn = ValidateIngress;
  r.columns = {
      NameColumn(),
      Column("Class", "string", "The name of the IngressClass resource.", 0,
             [](const json::object& obj, TimePoint) -> json::value {
               std::string c = StringAt(obj, "spec.ingressClassName");
               return json::string(c.empty() ? "<none>" : c);
             }),
      Column("Hosts", "string", "Hosts that incoming requests are matched against.", 0, HostsCell),
      Column("Address", "string", "Address is a list of IPs or hostnames.", 0, AddressCell),
      Column("Ports", "string", "Ports of TLS configurations that open.", 0,
             [](const json::object& obj, TimePoint) -> json::value {
               const json::array* tls = ArrayAt(obj, "spec.tls");
               return json::string(tls != nullptr && !tls->empty() ? "80, 443" : "80");
             }),
      AgeColumn()};
  return r;
}

Resource IngressClassResource() {
  Resource r = MakeResource("networking.k8s.io", "v1", "IngressClass", "ingressclasses", false,
                            "io.k8s.api.networking.v1.IngressClass");
  r.default_fn = DefaultIngressClass;
  r.validate_fn = ValidateIngressClass;
  r.columns = {
      NameColumn(),
      Column("Controller", "string", "Controller that is responsible for handling this class.", 0,
             StringCell("spec.controller")),
      Column("Parameters", "string",
             "A reference to a resource with additional parameters, <none> if there is none.", 0,
             [](const json::object& obj, TimePoint) -> json::value {
               const json::object* p = ObjectAt(obj, "spec.parameters");
               if (p == nullptr) return json::string("<none>");
               std::string group = StringAt(*p, "apiGroup");
               return json::string(StringAt(*p, "kind") + (group.empty() ? "" : "." + group) + "/" +
                                   StringAt(*p, "name"));
             }),
      AgeColumn()};
  return r;
}

}  // namespace flotilla::api::kinds
