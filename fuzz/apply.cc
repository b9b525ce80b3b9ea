// Any bytes as a server-side apply body (YAML or JSON) to a fixed
// Deployment: computed directly by the field manager, where a success must
// keep the object's version and kind, and sent through the request
// path (PATCH application/apply-patch+yaml, dryRun=All, forced), where the
// answer must be a clean 2xx or 4xx.
#include <string>

#include "api/managed_fields.h"
#include "api/schema.h"
#include "base/yaml.h"
#include "fuzz/api_server.h"
#include "fuzz/targets.h"

namespace flotilla::fuzz {
namespace {

constexpr char kLive[] = R"({"apiVersion": "apps/v1", "kind": "Deployment",
  "metadata": {"name": "existing", "namespace": "default", "uid": "u",
    "labels": {"app": "web"}},
  "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
    "template": {"metadata": {"labels": {"app": "web"}},
      "spec": {"containers": [
        {"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80, "protocol": "TCP"}],
         "env": [{"name": "A", "value": "1"}]}],
        "volumes": [{"name": "data", "emptyDir": {}}]}}}})";

}  // namespace

void Apply(std::span<const uint8_t> data) {
  static const api::SchemaSet& schemas = api::SchemaSet::Builtin();
  static const api::FieldManager manager(
      api::Typed(&schemas.Definitions(), schemas.Definition("io.k8s.api.apps.v1.Deployment")));
  static const json::object live = *ParseJsonObject(kLive);
  std::string_view body = AsText(data);
  auto config = ParseYaml(body);
  if (config.ok() && config->is_object()) {
    api::FieldManagerRequest req{.manager = "fuzz",
                                 .api_version = "apps/v1",
                                 .kind = "Deployment",
                                 .now = "2026-01-01T00:00:00Z",
                                 .force = true};
    auto applied = manager.Apply(live, config->as_object(), req);
    // A merge keeps the version and kind it was checked for.
    if (applied.ok() && (StringAt(*applied, "apiVersion") != "apps/v1" ||
                         StringAt(*applied, "kind") != "Deployment")) {
      Broken("an apply that changed the object's kind", body);
    }
    if (!applied.ok() && !applied.status().Is(Reason::kBadRequest)) {
      Broken("an apply error that is not a BadRequest: " + applied.status().ToString(), body);
    }
  }
  std::string target =
      std::string(kExistingDeployment) + "?dryRun=All&fieldManager=fuzz&force=true";
  ExpectClean(Call("PATCH", target, "application/apply-patch+yaml", body), target);
}

}  // namespace flotilla::fuzz
