// Claims in use (claims.h).
#include "api/claims.h"

#include <string>

namespace flotilla::api {

bool PodUsesClaim(const json::object& pod, std::string_view claim) {
  if (StringViewAt(pod, "spec.nodeName").empty()) return false;
  const json::value* volumes = Find(pod, "spec.volumes");
  if (volumes == nullptr || !volumes->is_array()) return false;
  std::string_view phase = StringViewAt(pod, "status.phase");
  bool shut_down = phase == "Succeeded" || phase == "Failed";
  std::string_view pod_name = StringViewAt(pod, "metadata.name");
  for (const json::value& v : volumes->get_array()) {
    if (!v.is_object()) continue;
    const json::object& volume = v.get_object();
    if (StringViewAt(volume, "persistentVolumeClaim.claimName") == claim) return true;
    if (!shut_down && volume.contains("ephemeral") &&
        std::string(pod_name) + "-" + std::string(StringViewAt(volume, "name")) == claim) {
      return true;
    }
  }
  return false;
}

std::vector<std::string> ClaimNames(const json::object& pod) {
  std::vector<std::string> out;
  const json::value* volumes = Find(pod, "spec.volumes");
  if (volumes == nullptr || !volumes->is_array()) return out;
  std::string_view pod_name = StringViewAt(pod, "metadata.name");
  for (const json::value& v : volumes->get_array()) {
    if (!v.is_object()) continue;
    const json::object& volume = v.get_object();
    std::string_view claim = StringViewAt(volume, "persistentVolumeClaim.claimName");
    if (!claim.empty()) out.emplace_back(claim);
    if (volume.contains("ephemeral")) {
      out.push_back(std::string(pod_name) + "-" + std::string(StringViewAt(volume, "name")));
    }
  }
  return out;
}

namespace {

// The annotation `key` of `obj`, if set to a string.
std::optional<std::string_view> Annotation(const json::object& obj, std::string_view key) {
  const json::value* annotations = Find(obj, "metadata.annotations");
  if (annotations == nullptr || !annotations->is_object()) return std::nullopt;
  const json::value* v = annotations->get_object().if_contains(key);
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return std::string_view(v->get_string());
}

}  // namespace

bool IsDefaultStorageClass(const json::object& storage_class) {
  for (std::string_view key : {"storageclass.kubernetes.io/is-default-class",
                               "storageclass.beta.kubernetes.io/is-default-class"}) {
    if (Annotation(storage_class, key) == "true") return true;
  }
  return false;
}

std::optional<std::string> DefaultClassName(const std::vector<const json::object*>& classes) {
  const json::object* chosen = nullptr;
  for (const json::object* cls : classes) {
    if (!IsDefaultStorageClass(*cls)) continue;
    // RFC 3339 times in one format order as text.
    std::string_view created = StringViewAt(*cls, "metadata.creationTimestamp");
    std::string_view name = StringViewAt(*cls, "metadata.name");
    if (chosen == nullptr) {
      chosen = cls;
      continue;
    }
    std::string_view chosen_created = StringViewAt(*chosen, "metadata.creationTimestamp");
    if (created > chosen_created ||
        (created == chosen_created && name < StringViewAt(*chosen, "metadata.name"))) {
      chosen = cls;
    }
  }
  if (chosen == nullptr) return std::nullopt;
  return std::string(StringViewAt(*chosen, "metadata.name"));
}

std::optional<std::string> ClaimClass(const json::object& claim) {
  if (auto beta = Annotation(claim, "volume.beta.kubernetes.io/storage-class"))
    return std::string(*beta);
  const json::value* name = Find(claim, "spec.storageClassName");
  if (name == nullptr || !name->is_string()) return std::nullopt;
  return std::string(name->get_string());
}

}  // namespace flotilla::api
