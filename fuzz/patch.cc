// Any bytes as a patch of the three types (by the first byte) to a fixed
// Deployment: applied directly with its strategic-merge metadata, where a
// success must be an object, and sent through the request path (PATCH,
// dryRun=All), where the answer must be a clean 2xx or 4xx.
#include "api/patch.h"

#include <array>
#include <string>

#include "api/schema.h"
#include "fuzz/api_server.h"
#include "fuzz/targets.h"

namespace flotilla::fuzz {
namespace {

constexpr char kDeployment[] = R"({"apiVersion": "apps/v1", "kind": "Deployment",
  "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
  "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
    "template": {"metadata": {"labels": {"app": "web"}},
      "spec": {"containers": [
        {"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80, "name": "http"}],
         "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
        {"name": "sidecar", "image": "busybox", "args": ["sleep", "1d"]}],
        "volumes": [{"name": "data", "emptyDir": {}}],
        "tolerations": [{"key": "k", "operator": "Exists"}]}}}})";

}  // namespace

void Patch(std::span<const uint8_t> data) {
  static constexpr std::array<const char*, 3> kTypes = {"application/merge-patch+json",
                                                        "application/json-patch+json",
                                                        "application/strategic-merge-patch+json"};
  static const json::object original = ParseJson(kDeployment)->as_object();
  static const api::PatchInfoLookup lookup =
      api::SchemaSet::Builtin().PatchInfo("io.k8s.api.apps.v1.Deployment");
  if (data.empty()) return;
  const char* type = kTypes[data[0] % kTypes.size()];
  std::string_view patch = AsText(data.subspan(1));
  auto patched = api::ApplyPatch(type, original, patch, lookup);
  if (patched.ok() && !patched->is_object()) Broken("a patch result that is not an object", patch);
  std::string target = std::string(kExistingDeployment) + "?dryRun=All";
  ExpectClean(Call("PATCH", target, type, patch), target);
}

}  // namespace flotilla::fuzz
