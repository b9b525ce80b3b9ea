// Karmada's default dependencies of native kinds (native.h).
#include "interpreter/native.h"

#include <set>
#include <string>

namespace flotilla::interpreter {
namespace {

void AddName(std::set<std::string>& names, const json::object& obj, std::string_view path) {
  std::string_view name = StringViewAt(obj, path);
  if (!name.empty()) names.emplace(name);
}

json::object Reference(std::string_view kind, std::string_view ns, std::string_view name) {
  return json::object{{"apiVersion", "v1"}, {"kind", kind}, {"namespace", ns}, {"name", name}};
}

// The objects a container's env and envFrom name.
void AddContainerReferences(const json::object& container, std::set<std::string>& config_maps,
                            std::set<std::string>& secrets) {
  for (const json::value& e : ArrayOrEmpty(container, "env")) {
    if (!e.is_object()) continue;
    AddName(config_maps, e.get_object(), "valueFrom.configMapKeyRef.name");
    AddName(secrets, e.get_object(), "valueFrom.secretKeyRef.name");
  }
  for (const json::value& e : ArrayOrEmpty(container, "envFrom")) {
    if (!e.is_object()) continue;
    AddName(config_maps, e.get_object(), "configMapRef.name");
    AddName(secrets, e.get_object(), "secretRef.name");
  }
}

}  // namespace

json::array PodDependencies(const json::object& pod_template, std::string_view ns) {
  std::set<std::string> config_maps, secrets, accounts, claims;
  if (const json::object* spec = GetObject(pod_template, "spec")) {
    for (const json::value& v : ArrayOrEmpty(*spec, "volumes")) {
      if (!v.is_object()) continue;
      const json::object& vol = v.get_object();
      AddName(config_maps, vol, "configMap.name");
      AddName(secrets, vol, "secret.secretName");
      AddName(claims, vol, "persistentVolumeClaim.claimName");
      const json::value* sources = Find(vol, "projected.sources");
      if (sources == nullptr || !sources->is_array()) continue;
      for (const json::value& s : sources->get_array()) {
        if (!s.is_object()) continue;
        AddName(config_maps, s.get_object(), "configMap.name");
        AddName(secrets, s.get_object(), "secret.name");
      }
    }
    for (const json::value& p : ArrayOrEmpty(*spec, "imagePullSecrets")) {
      if (p.is_object()) AddName(secrets, p.get_object(), "name");
    }
    for (const char* list : {"initContainers", "containers", "ephemeralContainers"}) {
      for (const json::value& c : ArrayOrEmpty(*spec, list)) {
        if (c.is_object()) AddContainerReferences(c.get_object(), config_maps, secrets);
      }
    }
    std::string_view account = StringViewAt(*spec, "serviceAccountName");
    if (!account.empty() && account != "default") accounts.emplace(account);
  }
  json::array out;
  auto add = [&](std::string_view kind, const std::set<std::string>& names) {
    for (const std::string& name : names) out.push_back(Reference(kind, ns, name));
  };
  add("ConfigMap", config_maps);
  add("Secret", secrets);
  add("ServiceAccount", accounts);
  add("PersistentVolumeClaim", claims);
  return out;
}

std::optional<json::array> NativeDependencies(std::string_view api_version, std::string_view kind,
                                              const json::object& obj) {
  std::string_view ns = StringViewAt(obj, "metadata.namespace");
  auto of_template = [&](std::string_view path) {
    const json::value* tmpl = Find(obj, path);
    return tmpl != nullptr && tmpl->is_object() ? PodDependencies(tmpl->get_object(), ns)
                                                : json::array();
  };
  if (api_version == "apps/v1") {
    if (kind == "Deployment" || kind == "ReplicaSet" || kind == "DaemonSet") {
      return of_template("spec.template");
    }
    if (kind == "StatefulSet") {
      // Its claim templates' claims are made by the StatefulSet in each
      // cluster; a volume naming one is no dependency.
      std::set<std::string> templated;
      if (const json::object* spec = GetObject(obj, "spec")) {
        for (const json::value& t : ArrayOrEmpty(*spec, "volumeClaimTemplates")) {
          if (t.is_object()) AddName(templated, t.get_object(), "metadata.name");
        }
      }
      json::array out;
      for (json::value& d : of_template("spec.template")) {
        const json::object& ref = d.get_object();
        if (GetString(ref, "kind") == "PersistentVolumeClaim" &&
            templated.contains(std::string(StringViewAt(ref, "name")))) {
          continue;
        }
        out.push_back(std::move(d));
      }
      return out;
    }
  }
  if (api_version == "batch/v1") {
    if (kind == "Job") return of_template("spec.template");
    if (kind == "CronJob") return of_template("spec.jobTemplate.spec.template");
  }
  if (api_version == "v1" && kind == "Pod") return PodDependencies(obj, ns);
  if (api_version == "networking.k8s.io/v1" && kind == "Ingress") {
    std::set<std::string> secrets;
    if (const json::object* spec = GetObject(obj, "spec")) {
      for (const json::value& tls : ArrayOrEmpty(*spec, "tls")) {
        if (tls.is_object()) AddName(secrets, tls.get_object(), "secretName");
      }
    }
    json::array out;
    for (const std::string& name : secrets) out.push_back(Reference("Secret", ns, name));
    return out;
  }
  return std::nullopt;
}

}  // namespace flotilla::interpreter
