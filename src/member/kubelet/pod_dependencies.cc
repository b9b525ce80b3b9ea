#include "member/kubelet/pod_dependencies.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "member/object_util.h"

namespace flotilla::member::kubelet {
namespace {

bool Optional(const json::object& ref) {
  const json::value* v = ref.if_contains("optional");
  return v != nullptr && v->is_bool() && v->get_bool();
}

// Whether `obj` (a ConfigMap or Secret) has `key` in data or binaryData.
bool HasKey(const json::object& obj, const std::string& key) {
  for (std::string_view field : {"data", "binaryData", "stringData"}) {
    const json::object* m = GetObject(obj, field);
    if (m != nullptr && m->contains(key)) return true;
  }
  return false;
}

// The kinds a volume or env source may name, with kube's words for them.
struct Source {
  std::string_view volume_field;  // "configMap" / "secret" in a volume
  std::string_view name_field;    // "name" / "secretName"
  std::string_view noun;          // "configmap" / "secret"
  std::string_view kind;          // "ConfigMap" / "Secret"
  const Lookup Lookups::*lookup;
};

constexpr Source kConfigMap{"configMap", "name", "configmap", "ConfigMap", &Lookups::config_maps};
constexpr Source kSecret{"secret", "secretName", "secret", "Secret", &Lookups::secrets};

std::string NotFound(const Source& s, const std::string& name) {
  return std::string(s.noun) + " \"" + name + "\" not found";
}

// A configMap/secret volume source (or projected source): "" when it can
// be mounted.
std::string CheckVolumeSource(const Source& s, const json::object& ref, std::string_view name_field,
                              const Lookups& lookups) {
  std::string name = StringAt(ref, name_field);
  std::shared_ptr<const json::object> obj = (lookups.*s.lookup)(name);
  if (obj == nullptr) return Optional(ref) ? "" : NotFound(s, name);
  for (const json::object* item : ObjectsAt(ref, "items")) {
    std::string key = StringAt(*item, "key");
    if (!HasKey(*obj, key) && !Optional(ref)) {
      return std::string(s.noun) + " references non-existent config key: " + key;
    }
  }
  return "";
}

// A volume: "" when it can be mounted, else the FailedMount message.
std::string CheckVolume(const json::object& volume, const std::string& ns, const Lookups& lookups) {
  std::string volume_name = StringAt(volume, "name");
  auto setup_failed = [&](const std::string& e) {
    return e.empty() ? e : "MountVolume.SetUp failed for volume \"" + volume_name + "\" : " + e;
  };
  for (const Source* s : {&kConfigMap, &kSecret}) {
    if (const json::object* ref = GetObject(volume, s->volume_field)) {
      return setup_failed(CheckVolumeSource(*s, *ref, s->name_field, lookups));
    }
  }
  if (const json::object* projected = GetObject(volume, "projected")) {
    for (const json::object* source : ObjectsAt(*projected, "sources")) {
      for (const Source* s : {&kConfigMap, &kSecret}) {
        const json::object* ref = GetObject(*source, s->volume_field);
        if (ref == nullptr) continue;
        std::string e = CheckVolumeSource(*s, *ref, "name", lookups);
        if (!e.empty()) return setup_failed(e);
      }
    }
    return "";
  }
  if (const json::object* pvc = GetObject(volume, "persistentVolumeClaim")) {
    std::string name = StringAt(*pvc, "claimName");
    std::shared_ptr<const json::object> claim = lookups.claims(name);
    std::string why;
    if (claim == nullptr) {
      why =
          "failed to fetch PVC from API server: persistentvolumeclaims \"" + name + "\" not found";
    } else if (StringAt(*claim, "spec.volumeName").empty() ||
               StringAt(*claim, "status.phase") != "Bound") {
      why = "PVC is not bound";
    } else {
      return "";
    }
    return "Unable to attach or mount volumes: unmounted volumes=[" + volume_name +
           "], unattached volumes=[], failed to process volumes=[" + volume_name +
           "]: error processing PVC " + ns + "/" + name + ": " + why;
  }
  return "";
}

// A key reference of env valueFrom: "" when it resolves.
std::string CheckKeyRef(const Source& s, const json::object& ref, const std::string& ns,
                        const Lookups& lookups) {
  std::string name = StringAt(ref, "name");
  std::shared_ptr<const json::object> obj = (lookups.*s.lookup)(name);
  if (Optional(ref)) return "";
  if (obj == nullptr) return NotFound(s, name);
  std::string key = StringAt(ref, "key");
  if (!HasKey(*obj, key)) {
    return "couldn't find key " + key + " in " + std::string(s.kind) + " " + ns + "/" + name;
  }
  return "";
}

std::string CheckContainer(const json::object& c, const std::string& ns, const Lookups& lookups) {
  for (const json::object* from : ObjectsAt(c, "envFrom")) {
    for (auto [field, source] :
         {std::pair{"configMapRef", &kConfigMap}, std::pair{"secretRef", &kSecret}}) {
      const json::object* ref = GetObject(*from, field);
      if (ref == nullptr || Optional(*ref)) continue;
      std::string name = StringAt(*ref, "name");
      if ((lookups.*source->lookup)(name) == nullptr) return NotFound(*source, name);
    }
  }
  for (const json::object* env : ObjectsAt(c, "env")) {
    for (auto [path, source] : {std::pair{"valueFrom.configMapKeyRef", &kConfigMap},
                                std::pair{"valueFrom.secretKeyRef", &kSecret}}) {
      const json::value* ref = Find(*env, path);
      if (ref == nullptr || !ref->is_object()) continue;
      if (std::string e = CheckKeyRef(*source, ref->get_object(), ns, lookups); !e.empty())
        return e;
    }
  }
  return "";
}

}  // namespace

// DependencyKeys below names every object this looks up: keep the two in
// step, or a pod waits for an object whose coming does not wake it.
Dependencies CheckDependencies(const json::object& pod, const Lookups& lookups) {
  Dependencies out;
  std::string ns = StringAt(pod, "metadata.namespace");
  for (const json::object* volume : ObjectsAt(pod, "spec.volumes")) {
    out.mount_error = CheckVolume(*volume, ns, lookups);
    if (!out.mount_error.empty()) break;
  }
  for (std::string_view list : {"spec.initContainers", "spec.containers"}) {
    for (const json::object* c : ObjectsAt(pod, list)) {
      if (std::string e = CheckContainer(*c, ns, lookups); !e.empty())
        out.config_errors[StringAt(*c, "name")] = e;
    }
  }
  return out;
}

std::string DependencyKey(std::string_view ns, std::string_view kind, std::string_view name) {
  std::string key;
  key.reserve(ns.size() + kind.size() + name.size() + 2);
  key.append(ns).append("/").append(kind).append("/").append(name);
  return key;
}

std::vector<std::string> DependencyKeys(const json::object& pod) {
  const std::string ns = StringAt(pod, "metadata.namespace");
  std::vector<std::string> keys;
  auto add = [&](std::string_view kind, const json::object& ref, std::string_view field) {
    std::string name = StringAt(ref, field);
    if (!name.empty()) keys.push_back(DependencyKey(ns, kind, name));
  };
  for (const json::object* volume : ObjectsAt(pod, "spec.volumes")) {
    if (const json::object* ref = GetObject(*volume, "configMap")) {
      add(kConfigMapDependency, *ref, "name");
    }
    if (const json::object* ref = GetObject(*volume, "secret")) {
      add(kSecretDependency, *ref, "secretName");
    }
    if (const json::object* ref = GetObject(*volume, "persistentVolumeClaim")) {
      add(kClaimDependency, *ref, "claimName");
    }
    for (const json::object* source : ObjectsAt(*volume, "projected.sources")) {
      if (const json::object* ref = GetObject(*source, "configMap")) {
        add(kConfigMapDependency, *ref, "name");
      }
      if (const json::object* ref = GetObject(*source, "secret")) {
        add(kSecretDependency, *ref, "name");
      }
    }
  }
  for (std::string_view list : {"spec.initContainers", "spec.containers"}) {
    for (const json::object* c : ObjectsAt(pod, list)) {
      for (const json::object* from : ObjectsAt(*c, "envFrom")) {
        if (const json::object* ref = GetObject(*from, "configMapRef")) {
          add(kConfigMapDependency, *ref, "name");
        }
        if (const json::object* ref = GetObject(*from, "secretRef")) {
          add(kSecretDependency, *ref, "name");
        }
      }
      for (const json::object* env : ObjectsAt(*c, "env")) {
        for (auto [path, kind] : {std::pair{"valueFrom.configMapKeyRef", kConfigMapDependency},
                                  std::pair{"valueFrom.secretKeyRef", kSecretDependency}}) {
          const json::value* ref = Find(*env, path);
          if (ref != nullptr && ref->is_object()) add(kind, ref->get_object(), "name");
        }
      }
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

}  // namespace flotilla::member::kubelet
