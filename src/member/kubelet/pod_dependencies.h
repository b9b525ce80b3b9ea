// What a kubelet needs from the API before it can start a pod's
// containers, and what it reports while it waits (Kubernetes' volume
// manager and container config):
//  - volumes: a configMap or secret volume (or projected source) that is
//    not optional needs its object, and the keys its items name; a
//    persistentVolumeClaim volume needs its claim, bound. Until then the
//    pod's sandbox does not start (containers ContainerCreating) and the
//    kubelet reports FailedMount with kube's message;
//  - container config: env valueFrom configMapKeyRef/secretKeyRef and
//    envFrom configMapRef/secretRef that are not optional need their
//    object (and key). Until then that container waits with reason
//    CreateContainerConfigError and kube's message ("configmap \"app\" not
//    found", "couldn't find key k in ConfigMap ns/app").
// Pure; thread-safe. Internal to src/member/kubelet.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"

namespace flotilla::member::kubelet {

// An object of the pod's namespace by name (as a cache shares it); null
// when there is none.
using Lookup = std::function<std::shared_ptr<const json::object>(const std::string& name)>;

struct Lookups {
  Lookup config_maps, secrets, claims;
};

struct Dependencies {
  // Why the pod's volumes cannot be mounted yet; "" when they can.
  std::string mount_error;
  // By container name: why it cannot be created yet.
  std::map<std::string, std::string> config_errors;
};

Dependencies CheckDependencies(const json::object& pod, const Lookups& lookups);

// The kinds of object a pod may wait for, as DependencyKey names them.
inline constexpr char kConfigMapDependency[] = "ConfigMap";
inline constexpr char kSecretDependency[] = "Secret";
inline constexpr char kClaimDependency[] = "PersistentVolumeClaim";
// "NAMESPACE/KIND/NAME": one object a pod may wait for.
std::string DependencyKey(std::string_view ns, std::string_view kind, std::string_view name);
// Every object CheckDependencies may look up for `pod` (optional ones
// too), as DependencyKeys, each once: what the kubelet indexes its pods by,
// so that an object's arrival wakes the pods that name it and no others.
std::vector<std::string> DependencyKeys(const json::object& pod);

}  // namespace flotilla::member::kubelet
