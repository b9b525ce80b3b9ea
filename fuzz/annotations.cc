// Any text as the value of one of the federation's annotations (by the first
// byte): the preferences parsed and checked directly, and the annotation on
// a workload created through the request path (dryRun=All), where the
// federation's admission must answer a clean 2xx or 4xx (a 422 saying what
// is wrong).
#include <array>
#include <string>

#include "api/federated.h"
#include "federation/common/cluster_selector.h"
#include "fuzz/api_server.h"
#include "fuzz/targets.h"
#include "planner/preferences.h"

namespace flotilla::fuzz {
namespace {

struct Case {
  const char* annotation;
  const char* collection;
  const char* kind;
};

constexpr std::array<Case, 12> kCases = {{
    {api::kReplicaSetPreferencesAnnotation, "replicasets", "ReplicaSet"},
    {api::kDeploymentPreferencesAnnotation, "deployments", "Deployment"},
    {api::kStatefulSetPreferencesAnnotation, "statefulsets", "StatefulSet"},
    {api::kClusterSelectorAnnotation, "deployments", "Deployment"},
    {api::kClusterUpdateOrderAnnotation, "deployments", "Deployment"},
    {api::kPlacementClusterAnnotation, "replicasets", "ReplicaSet"},
    {api::kLocationAffinityAnnotation, "deployments", "Deployment"},
    {api::kMigrationWindowAnnotation, "deployments", "Deployment"},
    {api::kAntiAffinityAnnotation, "deployments", "Deployment"},
    {api::kMigrateToAnnotation, "replicasets", "ReplicaSet"},
    {api::kStatefulSetLbNeededAnnotation, "statefulsets", "StatefulSet"},
    {api::kHpaPreferencesAnnotation, "deployments", "Deployment"},
}};

json::object Workload(const Case& c, std::string_view value) {
  json::object spec{
      {"replicas", 2},
      {"selector", {{"matchLabels", {{"app", "web"}}}}},
      {"template",
       {{"metadata", {{"labels", {{"app", "web"}}}}},
        {"spec",
         {{"containers", json::array{json::object{{"name", "web"}, {"image", "nginx"}}}}}}}}};
  if (std::string_view(c.kind) == "StatefulSet") spec["serviceName"] = "web";
  return {{"apiVersion", "apps/v1"},
          {"kind", c.kind},
          {"metadata",
           {{"name", "web"},
            {"labels", {{api::kApplicationLabel, "shop"}}},
            {"annotations",
             {{c.annotation, value},
              {api::kLocationAffinityAnnotation, api::kPreferentiallyCoupled}}}}},
          {"spec", std::move(spec)}};
}

}  // namespace

void Annotations(std::span<const uint8_t> data) {
  if (data.empty()) return;
  const Case& c = kCases[data[0] % kCases.size()];
  std::string_view value = AsText(data.subspan(1));
  if (auto prefs = planner::ParsePreferences(value); prefs.ok()) {
    (void)planner::ValidatePreferences(*prefs);
  }
  (void)federation::ClusterSelector::Parse(value);
  json::object obj = Workload(c, value);
  if (std::string_view(c.annotation) == api::kLocationAffinityAnnotation) {
    obj["metadata"].as_object()["annotations"].as_object()[c.annotation] = value;
  }
  std::string target =
      std::string("/apis/apps/v1/namespaces/default/") + c.collection + "?dryRun=All";
  ExpectClean(Call("POST", target, "application/json", ToJson(obj)), target);
}

}  // namespace flotilla::fuzz
