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

}  // namespace flotilla::api
