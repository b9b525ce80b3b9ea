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

constexpr Source kConfigMap{"configMap", "name", "configmap", kConfigMapDependency,
                            &Lookups::config_maps};
constexpr Source kSecret{"secret", "secretName", "secret", kSecretDependency, &Lookups::secrets};

// The walks CheckDependencies and DependencyKeys share, so that the objects
// the kubelet waits for and those whose coming wakes a pod are the same.
// Each calls `fn` for every reference in order and stops at the first that
// returns an error ("" goes on), which it returns.

// The ConfigMaps and Secrets `volume` names, itself or as the sources of a
// projected volume: fn(source, reference, the reference's name field).
template <typename Fn>
std::string EachVolumeSource(const json::object& volume, Fn fn) {
  for (const Source* s : {&kConfigMap, &kSecret}) {
    if (const json::object* ref = GetObject(volume, s->volume_field)) {
      return fn(*s, *ref, s->name_field);
    }
  }
  for (const json::object* source : ObjectsAt(volume, "projected.sources")) {
    for (const Source* s : {&kConfigMap, &kSecret}) {
      const json::object* ref = GetObject(*source, s->volume_field);
      if (ref == nullptr) continue;
      if (std::string e = fn(*s, *ref, "name"); !e.empty()) return e;
    }
  }
  return "";
}

// The ConfigMaps and Secrets container `c` takes its environment from:
// fn(source, reference, whether it names one key) for envFrom's
// configMapRef/secretRef, then env's valueFrom configMapKeyRef/secretKeyRef.
template <typename Fn>
std::string EachEnvSource(const json::object& c, Fn fn) {
  for (const json::object* from : ObjectsAt(c, "envFrom")) {
    for (auto [field, source] :
         {std::pair{"configMapRef", &kConfigMap}, std::pair{"secretRef", &kSecret}}) {
      const json::object* ref = GetObject(*from, field);
      if (ref == nullptr) continue;
      if (std::string e = fn(*source, *ref, false); !e.empty()) return e;
    }
  }
  for (const json::object* env : ObjectsAt(c, "env")) {
    for (auto [path, source] : {std::pair{"valueFrom.configMapKeyRef", &kConfigMap},
                                std::pair{"valueFrom.secretKeyRef", &kSecret}}) {
      const json::value* ref = Find(*env, path);
      if (ref == nullptr || !ref->is_object()) continue;
      if (std::string e = fn(*source, ref->get_object(), true); !e.empty()) return e;
    }
  }
  return "";
}

// The claim a persistentVolumeClaim volume names; "" for other volumes.
std::string ClaimOf(const json::object& volume) {
  const json::object* pvc = GetObject(volume, "persistentVolumeClaim");
  return pvc == nullptr ? "" : StringAt(*pvc, "claimName");
}

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
  std::string e = EachVolumeSource(
      volume, [&](const Source& s, const json::object& ref, std::string_view name_field) {
        return CheckVolumeSource(s, ref, name_field, lookups);
      });
  if (!e.empty()) return "MountVolume.SetUp failed for volume \"" + volume_name + "\" : " + e;
  std::string name = ClaimOf(volume);
  if (name.empty()) return "";
  std::shared_ptr<const json::object> claim = lookups.claims(name);
  std::string why;
  if (claim == nullptr) {
    why = "failed to fetch PVC from API server: persistentvolumeclaims \"" + name + "\" not found";
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
  return EachEnvSource(c, [&](const Source& s, const json::object& ref, bool key_ref) {
    if (key_ref) return CheckKeyRef(s, ref, ns, lookups);
    std::string name = StringAt(ref, "name");
    if (Optional(ref) || (lookups.*s.lookup)(name) != nullptr) return std::string();
    return NotFound(s, name);
  });
}

}  // namespace

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
  auto add = [&](std::string_view kind, const std::string& name) {
    if (!name.empty()) keys.push_back(DependencyKey(ns, kind, name));
  };
  auto add_source = [&](const Source& s, const json::object& ref, std::string_view name_field) {
    add(s.kind, StringAt(ref, name_field));
    return std::string();
  };
  for (const json::object* volume : ObjectsAt(pod, "spec.volumes")) {
    EachVolumeSource(*volume, add_source);
    add(kClaimDependency, ClaimOf(*volume));
  }
  for (std::string_view list : {"spec.initContainers", "spec.containers"}) {
    for (const json::object* c : ObjectsAt(pod, list)) {
      EachEnvSource(*c, [&](const Source& s, const json::object& ref, bool) {
        return add_source(s, ref, "name");
      });
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

}  // namespace flotilla::member::kubelet
