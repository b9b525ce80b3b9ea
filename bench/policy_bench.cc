// What propagation and override policies cost the federation
// (docs/benchmarks.md, "Policies"): choosing the policy of one object among
// 1,000 propagation policies (the lookup every check of a federated object
// makes), re-reading 1,000 policies (what every policy change costs: the
// federation re-parses them all), and applying override policies to one
// member copy of a Deployment.
//
// The 1,000 policies: 900 PropagationPolicies in the objects' namespace,
// each selecting Deployments by one label value (team=t0..t899), 100
// ClusterPropagationPolicies by name; the objects carry team=t(i % 900).
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "api/policy/overrides.h"
#include "api/policy/policy.h"

namespace flotilla::api::policy {
namespace {

json::object Parse(const std::string& text) { return *ParseJsonObject(text); }

std::vector<json::object> PolicyObjects() {
  std::vector<json::object> out;
  for (int i = 0; i < 900; ++i) {
    out.push_back(Parse(R"({"kind":"PropagationPolicy","metadata":{"name":"team-)" +
                        std::to_string(i) + R"(","namespace":"shop"},"spec":{
        "resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment","namespace":"shop",
          "labelSelector":{"matchLabels":{"team":"t)" +
                        std::to_string(i) + R"("}}}],
        "placement":{"clusterAffinity":{"labelSelector":{"matchLabels":{"location":"cloud"}}},
          "replicaScheduling":{"replicaSchedulingType":"Divided","replicaDivisionPreference":"Weighted",
            "weightPreference":{"staticWeightList":[{"targetCluster":{"clusterNames":["a"]},"weight":2},
                                                   {"targetCluster":{"clusterNames":["b"]},"weight":1}]}}}}})"));
  }
  for (int i = 0; i < 100; ++i) {
    out.push_back(Parse(R"({"kind":"ClusterPropagationPolicy","metadata":{"name":"app-)" +
                        std::to_string(i) + R"("},"spec":{
        "resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment","name":"app-)" +
                        std::to_string(i) + R"("}],
        "placement":{"clusterAffinity":{"fieldSelector":{"matchExpressions":[
          {"key":"provider","operator":"NotIn","values":["aws"]}]}}}}})"));
  }
  return out;
}

// A Deployment of two containers as users write them.
json::object TypicalDeployment() {
  return Parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
      "metadata":{"name":"web","namespace":"shop","labels":{"app":"web"}},
      "spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{
        "metadata":{"labels":{"app":"web"}},"spec":{"containers":[
          {"name":"web","image":"registry.example.com/web:1.4.2","args":["--port=8080"],
           "resources":{"requests":{"cpu":"100m","memory":"128Mi"}}},
          {"name":"proxy","image":"envoyproxy/envoy:v1.30.1"}]}}}})");
}

void BM_ReadThousandPolicies(benchmark::State& state) {
  std::vector<json::object> objects = PolicyObjects();
  for (auto _ : state) {
    std::vector<std::shared_ptr<const PropagationPolicy>> parsed;
    for (const json::object& o : objects) {
      parsed.push_back(
          std::make_shared<const PropagationPolicy>(*PropagationPolicy::FromObject(o)));
    }
    benchmark::DoNotOptimize(parsed);
  }
}
BENCHMARK(BM_ReadThousandPolicies)->Unit(benchmark::kMillisecond);

void BM_SelectAmongThousand(benchmark::State& state) {
  std::vector<PropagationPolicy> policies;
  for (const json::object& o : PolicyObjects())
    policies.push_back(*PropagationPolicy::FromObject(o));
  std::vector<const PropagationPolicy*> ptrs;
  for (const PropagationPolicy& p : policies) ptrs.push_back(&p);
  // 10,000 objects, looked up in turn.
  std::vector<json::object> labels;
  std::vector<std::string> names;
  for (int i = 0; i < 10000; ++i) {
    labels.push_back(Parse(R"({"app":"web","team":"t)" + std::to_string(i % 900) + R"("})"));
    names.push_back("app-" + std::to_string(i));
  }
  size_t i = 0, found = 0;
  for (auto _ : state) {
    ObjectRef ref{.api_version = "apps/v1",
                  .kind = "Deployment",
                  .ns = "shop",
                  .name = names[i],
                  .labels = &labels[i]};
    found += SelectPolicy(ptrs, ref) != nullptr;
    i = (i + 1) % labels.size();
  }
  if (found == 0) state.SkipWithError("no object matched a policy");
  state.counters["objects_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SelectAmongThousand)->Unit(benchmark::kMicrosecond);

void BM_OverrideOneCopy(benchmark::State& state) {
  std::vector<OverridePolicy> policies;
  policies.push_back(*OverridePolicy::FromObject(Parse(R"({"kind":"ClusterOverridePolicy",
      "metadata":{"name":"mirror"},"spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment"}],
      "overrideRules":[{"targetCluster":{"labelSelector":{"matchLabels":{"location":"cloud"}}},
        "overriders":{"imageOverrider":[{"component":"Registry","operator":"replace","value":"mirror.example.com"}]}}]}})")));
  policies.push_back(*OverridePolicy::FromObject(Parse(R"({"kind":"OverridePolicy",
      "metadata":{"name":"web-east","namespace":"shop"},"spec":{"resourceSelectors":[
        {"apiVersion":"apps/v1","kind":"Deployment","name":"web"}],
      "overrideRules":[{"targetCluster":{"clusterNames":["east"]},"overriders":{
        "labelsOverrider":[{"operator":"add","value":{"zone":"east"}}],
        "argsOverrider":[{"containerName":"web","operator":"add","value":["--region=east"]}],
        "plaintext":[{"path":"/spec/replicas","operator":"replace","value":4}]}}]}})")));
  std::vector<const OverridePolicy*> ptrs = {&policies[0], &policies[1]};
  json::object deployment = TypicalDeployment();
  json::object east = Parse(R"({"metadata":{"name":"east","labels":{"location":"cloud"}}})");
  ClusterFacts facts = ClusterFacts::Of(east);
  ObjectRef ref{.api_version = "apps/v1",
                .kind = "Deployment",
                .ns = "shop",
                .name = "web",
                .labels = &deployment["metadata"].as_object()["labels"].as_object()};
  for (auto _ : state) {
    json::object copy = deployment;
    if (!ApplyAll(OverridersFor(ptrs, ref, facts), copy).ok()) state.SkipWithError("failed");
    benchmark::DoNotOptimize(copy);
  }
}
BENCHMARK(BM_OverrideOneCopy)->Unit(benchmark::kMicrosecond);

// The same copy without overrides: the copy alone, the peer of the above.
void BM_CopyWithoutOverrides(benchmark::State& state) {
  json::object deployment = TypicalDeployment();
  for (auto _ : state) {
    json::object copy = deployment;
    benchmark::DoNotOptimize(copy);
  }
}
BENCHMARK(BM_CopyWithoutOverrides)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace flotilla::api::policy

BENCHMARK_MAIN();
