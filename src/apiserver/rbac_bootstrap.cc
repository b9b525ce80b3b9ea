// The bootstrap RBAC policy (rbac_bootstrap.h). The table below follows
// Kubernetes' bootstrap policy for the kinds Flotilla serves; a rule is
// [apiGroups, resources, verbs] or, for paths, [nonResourceURLs, verbs].
#include "apiserver/rbac_bootstrap.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace flotilla::apiserver::rbac {
namespace {

constexpr std::string_view kPolicy = R"json({
"read": ["get", "list", "watch"],
"write": ["create", "delete", "deletecollection", "patch", "update"],
"clusterRoles": [
  {"name": "cluster-admin",
   "rules": [[["*"], ["*"], ["*"]]], "urls": [[["*"], ["*"]]]},
  {"name": "system:discovery",
   "urls": [[["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi",
              "/openapi/*", "/readyz", "/version", "/version/"], ["get"]]]},
  {"name": "system:public-info-viewer",
   "urls": [[["/healthz", "/livez", "/readyz", "/version", "/version/"], ["get"]]]},
  {"name": "system:monitoring",
   "urls": [[["/healthz", "/healthz/*", "/livez", "/livez/*", "/readyz", "/readyz/*",
              "/metrics"], ["get"]]]},
  {"name": "system:basic-user",
   "rules": [[["authorization.k8s.io"], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
              ["create"]],
             [["authentication.k8s.io"], ["selfsubjectreviews"], ["create"]]]},
  {"name": "admin", "aggregate": "admin", "labels": {}},
  {"name": "edit", "aggregate": "edit", "labels": {"aggregate-to-admin": "true"}},
  {"name": "view", "aggregate": "view", "labels": {"aggregate-to-edit": "true"}},
  {"name": "system:aggregate-to-admin", "labels": {"aggregate-to-admin": "true"},
   "rules": [[["authorization.k8s.io"], ["localsubjectaccessreviews"], ["create"]],
             [["rbac.authorization.k8s.io"], ["roles", "rolebindings"], "read+write"]]},
  {"name": "system:aggregate-to-edit", "labels": {"aggregate-to-edit": "true"},
   "rules": [[[""], ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"],
              "write"],
             [[""], ["pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets",
                     "services/proxy"], "read"],
             [[""], ["serviceaccounts"], ["impersonate"]],
             [[""], ["configmaps", "events", "persistentvolumeclaims", "replicationcontrollers",
                     "replicationcontrollers/scale", "secrets", "serviceaccounts", "services",
                     "services/proxy", "endpoints"], "write"],
             [[""], ["serviceaccounts/token"], ["create"]],
             [[""], ["pods/eviction"], ["create"]],
             [["apps"], ["daemonsets", "deployments", "deployments/rollback", "deployments/scale",
                         "replicasets", "replicasets/scale", "statefulsets",
                         "statefulsets/scale"], "write"],
             [["autoscaling"], ["horizontalpodautoscalers"], "write"],
             [["batch"], ["cronjobs", "jobs"], "write"],
             [["networking.k8s.io"], ["networkpolicies"], "write"],
             [["policy"], ["poddisruptionbudgets"], "write"],
             [["discovery.k8s.io"], ["endpointslices"], "write"]]},
  {"name": "system:aggregate-to-view", "labels": {"aggregate-to-view": "true"},
   "rules": [[[""], ["configmaps", "endpoints", "persistentvolumeclaims",
                     "persistentvolumeclaims/status", "pods", "replicationcontrollers",
                     "replicationcontrollers/scale", "serviceaccounts", "services",
                     "services/status"], "read"],
             [[""], ["bindings", "events", "limitranges", "namespaces/status", "pods/log",
                     "pods/status", "replicationcontrollers/status", "resourcequotas",
                     "resourcequotas/status"], "read"],
             [[""], ["namespaces"], "read"],
             [["discovery.k8s.io"], ["endpointslices"], "read"],
             [["apps"], ["controllerrevisions", "daemonsets", "daemonsets/status", "deployments",
                         "deployments/scale", "deployments/status", "replicasets",
                         "replicasets/scale", "replicasets/status", "statefulsets",
                         "statefulsets/scale", "statefulsets/status"], "read"],
             [["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"],
              "read"],
             [["batch"], ["cronjobs", "cronjobs/status", "jobs", "jobs/status"], "read"],
             [["networking.k8s.io"], ["networkpolicies"], "read"],
             [["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"], "read"]]},
  {"name": "flotilla:aggregate-to-view", "labels": {"aggregate-to-view": "true"},
   "rules": [[["federation"], ["clusters", "clusters/status"], "read"],
             [["policy.karmada.io"], ["propagationpolicies", "overridepolicies",
                                      "federatedresourcequotas",
                                      "federatedresourcequotas/status"], "read"],
             [["config.karmada.io"], ["resourceinterpretercustomizations"], "read"]]},
  {"name": "flotilla:aggregate-to-edit", "labels": {"aggregate-to-edit": "true"},
   "rules": [[["policy.karmada.io"], ["propagationpolicies", "overridepolicies"], "write"]]},
  {"name": "flotilla:federation-controller",
   "rules": [[["", "apps", "autoscaling", "coordination.k8s.io", "discovery.k8s.io",
               "federation", "policy.karmada.io", "apiextensions.k8s.io", "config.karmada.io"],
              ["*"], "read+write"],
             [["rbac.authorization.k8s.io"], ["roles", "rolebindings"],
              ["get", "list", "watch", "update", "patch"]],
             [["authentication.k8s.io"], ["tokenreviews"], ["create"]],
             [["authorization.k8s.io"], ["subjectaccessreviews"], ["create"]]]},
  {"name": "system:flotilla:agent-registrar",
   "rules": [[["federation"], ["clusters"], ["get", "create"]],
             [["federation"], ["clusters/tunnel", "clusters/register"], ["create"]],
             [["coordination.k8s.io"], ["leases"], ["list"]],
             [[""], ["namespaces"], ["create"]],
             [[""], ["serviceaccounts"], ["get", "create", "delete"]],
             [[""], ["serviceaccounts/token"], ["create"]],
             [["rbac.authorization.k8s.io"], ["clusterroles", "clusterrolebindings"],
              ["get", "create"]],
             [["authorization.k8s.io"], ["subjectaccessreviews"], ["create"]]]},
  {"name": "system:flotilla:agent-bootstrapper",
   "rules": [[["federation"], ["clusters/register"], ["create"]]]}
],
"clusterRoleBindings": [
  {"name": "cluster-admin", "role": "cluster-admin", "groups": ["system:masters"]},
  {"name": "system:discovery", "role": "system:discovery", "groups": ["system:authenticated"]},
  {"name": "system:public-info-viewer", "role": "system:public-info-viewer",
   "groups": ["system:authenticated", "system:unauthenticated"]},
  {"name": "system:basic-user", "role": "system:basic-user",
   "groups": ["system:authenticated"]},
  {"name": "flotilla:viewers", "role": "view", "groups": ["flotilla:viewers"]},
  {"name": "flotilla:viewers-monitoring", "role": "system:monitoring",
   "groups": ["flotilla:viewers"]},
  {"name": "flotilla:federation-controller", "role": "flotilla:federation-controller",
   "users": ["system:flotilla:federation-controller"]},
  {"name": "system:flotilla:agent-registrar", "role": "system:flotilla:agent-registrar",
   "users": ["system:flotilla:agent-registrar"]},
  {"name": "system:flotilla:agent-bootstrapper", "role": "system:flotilla:agent-bootstrapper",
   "groups": ["system:bootstrappers:flotilla:agent"]},
  {"name": "flotilla:federation-controller:custom-kinds",
   "role": "flotilla:federation-controller:custom-kinds",
   "users": ["system:flotilla:federation-controller"]}
]
})json";

constexpr std::string_view kAggregateLabelPrefix = "rbac.authorization.k8s.io/";

json::object Metadata(const json::object& entry) {
  json::object labels{{"kubernetes.io/bootstrapping", "rbac-defaults"}};
  if (const json::object* extra = GetObject(entry, "labels")) {
    for (const auto& [k, v] : *extra)
      labels[std::string(kAggregateLabelPrefix) + std::string(k)] = v;
  }
  return json::object{{"name", entry.at("name")},
                      {"labels", std::move(labels)},
                      {"annotations", {{"rbac.authorization.kubernetes.io/autoupdate", "true"}}}};
}

// "read", "write" or "read+write" name the verb lists at the top.
json::value Verbs(const json::value& v, const json::object& policy) {
  if (!v.is_string()) return v;
  json::array out;
  for (const char* set : {"read", "write"}) {
    if (std::string_view(v.get_string()).find(set) == std::string_view::npos) continue;
    for (const json::value& verb : policy.at(set).get_array()) out.push_back(verb);
  }
  return out;
}

json::object ClusterRole(const json::object& entry, const json::object& policy) {
  json::array rules;
  if (const json::array* rs = GetArray(entry, "rules")) {
    for (const json::value& r : *rs) {
      const json::array& a = r.get_array();
      rules.push_back(
          json::object{{"apiGroups", a[0]}, {"resources", a[1]}, {"verbs", Verbs(a[2], policy)}});
    }
  }
  if (const json::array* urls = GetArray(entry, "urls")) {
    for (const json::value& r : *urls) {
      const json::array& a = r.get_array();
      rules.push_back(json::object{{"nonResourceURLs", a[0]}, {"verbs", a[1]}});
    }
  }
  json::object role{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                    {"kind", "ClusterRole"},
                    {"metadata", Metadata(entry)},
                    {"rules", std::move(rules)}};
  if (auto aggregate = GetString(entry, "aggregate")) {
    std::string label =
        std::string(kAggregateLabelPrefix) + "aggregate-to-" + std::string(*aggregate);
    role["aggregationRule"] = json::object{
        {"clusterRoleSelectors", json::array{json::object{{"matchLabels", {{label, "true"}}}}}}};
  }
  return role;
}

json::object ClusterRoleBinding(const json::object& entry) {
  json::array subjects;
  for (const auto& [field, kind] : {std::pair{"groups", "Group"}, std::pair{"users", "User"}}) {
    if (const json::array* names = GetArray(entry, field)) {
      for (const json::value& n : *names) {
        subjects.push_back(
            json::object{{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", kind}, {"name", n}});
      }
    }
  }
  return json::object{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                      {"kind", "ClusterRoleBinding"},
                      {"metadata", Metadata(entry)},
                      {"roleRef",
                       {{"apiGroup", "rbac.authorization.k8s.io"},
                        {"kind", "ClusterRole"},
                        {"name", entry.at("role")}}},
                      {"subjects", std::move(subjects)}};
}

std::vector<json::object> Build() {
  auto parsed = ParseJsonObject(kPolicy);
  if (!parsed.ok()) {  // a broken table above: a build that cannot run
    std::fprintf(stderr, "flotilla: the bootstrap RBAC policy does not parse: %s\n",
                 parsed.status().ToString().c_str());
    std::abort();
  }
  std::vector<json::object> out;
  for (const json::value& e : parsed->at("clusterRoles").get_array()) {
    out.push_back(ClusterRole(e.get_object(), *parsed));
  }
  for (const json::value& e : parsed->at("clusterRoleBindings").get_array()) {
    out.push_back(ClusterRoleBinding(e.get_object()));
  }
  return out;
}

}  // namespace

Policy BootstrappedPolicy() {
  std::map<std::string, json::object> roles;
  Policy policy;
  for (const json::object& obj : BootstrapPolicy()) {
    if (StringAt(obj, "kind") == "ClusterRole") {
      roles[StringAt(obj, "metadata.name")] = obj;
    } else {
      policy.PutBinding(BindingOf(obj));
    }
  }
  AggregateAll(roles);
  for (const auto& [name, role] : roles) policy.PutRole("", name, RulesOf(role));
  return policy;
}

const std::vector<json::object>& BootstrapPolicy() {
  static const std::vector<json::object> kObjects = Build();
  return kObjects;
}

std::vector<json::object> BootstrapPolicy(const std::vector<std::string>& controller_groups) {
  std::vector<json::object> out = BootstrapPolicy();
  for (json::object& obj : out) {
    if (StringAt(obj, "kind") != "ClusterRole" ||
        StringAt(obj, "metadata.name") != "flotilla:federation-controller") {
      continue;
    }
    json::array& groups = obj["rules"].as_array()[0].as_object()["apiGroups"].as_array();
    for (const std::string& g : controller_groups) {
      // The controllers' identity only reads and updates Roles and
      // RoleBindings (docs/security.md), whatever a kind propagates.
      if (g == "rbac.authorization.k8s.io") continue;
      if (std::find(groups.begin(), groups.end(), json::value(g)) == groups.end()) {
        groups.push_back(json::value(g));
      }
    }
  }
  return out;
}

}  // namespace flotilla::apiserver::rbac
