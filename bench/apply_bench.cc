// What server-side apply costs (docs/benchmarks.md, "Server-side apply"):
// the same Deployment written through the API server in process by a plain
// update (PUT, the peer in this run), by an apply that changes it, and by an
// apply that changes nothing; the field manager alone (recording an update,
// computing an apply) without storage; and the share of a stored
// Deployment's bytes that managedFields take, after `kubectl create`-style
// and `kubectl apply --server-side`-style writes and with three managers.
#include <benchmark/benchmark.h>

#include <string>

#include "api/managed_fields.h"
#include "api/schema.h"
#include "apiserver/api_server_test_util.h"

namespace flotilla::apiserver {
namespace {

using testing::RecordingResponder;
using testing::TestServer;

constexpr char kPath[] = "/apis/apps/v1/namespaces/default/deployments";
constexpr char kApply[] = "application/apply-patch+yaml";

// A Deployment as users write them: one container with ports, env,
// resources and a probe, a sidecar, labels and annotations.
json::object TypicalDeployment(int replicas) {
  auto parsed = ParseJsonObject(R"({
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "labels": {"app": "web", "team": "storefront"},
                 "annotations": {"owner": "storefront@example.com"}},
    "spec": {
      "replicas": 3,
      "selector": {"matchLabels": {"app": "web"}},
      "strategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
      "template": {
        "metadata": {"labels": {"app": "web", "team": "storefront"}},
        "spec": {
          "containers": [
            {"name": "web", "image": "registry.example.com/web:1.4.2",
             "ports": [{"name": "http", "containerPort": 8080}],
             "env": [{"name": "MODE", "value": "production"},
                     {"name": "CACHE", "value": "redis:6379"},
                     {"name": "LOG_LEVEL", "value": "info"}],
             "resources": {"requests": {"cpu": "250m", "memory": "256Mi"},
                           "limits": {"cpu": "1", "memory": "512Mi"}},
             "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080},
                                "periodSeconds": 5}},
            {"name": "proxy", "image": "envoyproxy/envoy:v1.28",
             "ports": [{"name": "admin", "containerPort": 9901}]}]}}}})");
  json::object obj = std::move(*parsed);
  obj["spec"].as_object()["replicas"] = replicas;
  return obj;
}

std::string Write(TestServer& server, const std::string& method, const std::string& target,
                  const json::object& body, const std::string& content_type,
                  benchmark::State& state) {
  RecordingResponder resp;
  server.Do(resp, method, target, json::serialize(body), content_type);
  if (resp.code() != 200 && resp.code() != 201) {
    state.SkipWithError(
        ("write answered " + std::to_string(resp.code()) + ": " + resp.body()).c_str());
  }
  return resp.body();
}

// PUT of the whole object with replicas alternating, as a controller's
// update does.
void BM_UpdateDeployment(benchmark::State& state) {
  TestServer server;
  Write(server, "POST", kPath, TypicalDeployment(3), "application/json", state);
  int i = 0;
  for (auto _ : state) {
    Write(server, "PUT", std::string(kPath) + "/web?fieldManager=controller",
          TypicalDeployment(3 + (++i % 2)), "application/json", state);
  }
}
BENCHMARK(BM_UpdateDeployment)->Unit(benchmark::kMicrosecond);

// The same object applied with replicas alternating: merge, conflicts,
// ownership, then the same update path.
void BM_ApplyDeployment(benchmark::State& state) {
  TestServer server;
  Write(server, "PATCH", std::string(kPath) + "/web?fieldManager=kubectl", TypicalDeployment(3),
        kApply, state);
  int i = 0;
  for (auto _ : state) {
    Write(server, "PATCH", std::string(kPath) + "/web?fieldManager=kubectl",
          TypicalDeployment(3 + (++i % 2)), kApply, state);
  }
}
BENCHMARK(BM_ApplyDeployment)->Unit(benchmark::kMicrosecond);

// `kubectl apply --server-side` of an unchanged manifest: nothing is written.
void BM_ApplyUnchanged(benchmark::State& state) {
  TestServer server;
  const json::object config = TypicalDeployment(3);
  Write(server, "PATCH", std::string(kPath) + "/web?fieldManager=kubectl", config, kApply, state);
  for (auto _ : state) {
    Write(server, "PATCH", std::string(kPath) + "/web?fieldManager=kubectl", config, kApply, state);
  }
}
BENCHMARK(BM_ApplyUnchanged)->Unit(benchmark::kMicrosecond);

api::FieldManager DeploymentManager() {
  const api::SchemaSet& schemas = api::SchemaSet::Builtin();
  return api::FieldManager(
      api::Typed(&schemas.Definitions(), schemas.Definition("io.k8s.api.apps.v1.Deployment")));
}

api::FieldManagerRequest Request(const std::string& manager) {
  api::FieldManagerRequest req;
  req.manager = manager;
  req.api_version = "apps/v1";
  req.kind = "Deployment";
  req.now = "2026-11-29T00:00:00Z";
  req.ignored.Insert({api::fieldpath::Element::Field("status")});
  return req;
}

// Recording one update (what every write pays): compare old and new, move
// the changed fields.
void BM_FieldManagerUpdate(benchmark::State& state) {
  api::FieldManager manager = DeploymentManager();
  json::object live = manager.Update({}, TypicalDeployment(3), Request("kubectl-create"));
  EnsureObject(live, "metadata")["uid"] = "u";
  json::object next = TypicalDeployment(4);
  EnsureObject(next, "metadata")["uid"] = "u";
  for (auto _ : state) {
    json::object out = manager.Update(live, next, Request("controller"));
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_FieldManagerUpdate)->Unit(benchmark::kMicrosecond);

// A controller's status write to an applied object: the applier's entry is
// not touched, so it is neither decoded nor written again.
void BM_FieldManagerStatusUpdate(benchmark::State& state) {
  api::FieldManager manager = DeploymentManager();
  auto applied = manager.Apply({}, TypicalDeployment(3), Request("kubectl"));
  if (!applied.ok()) return state.SkipWithError(applied.status().message().c_str());
  json::object live = std::move(*applied);
  EnsureObject(live, "metadata")["uid"] = "u";
  api::FieldManagerRequest status_req = Request("controller");
  status_req.subresource = "status";
  status_req.ignored = {};
  status_req.ignored.Insert({api::fieldpath::Element::Field("spec")});
  json::object next = live;
  next["status"] = json::object{{"replicas", 3}, {"readyReplicas", 1}};
  live = manager.Update(live, next, status_req);
  int i = 0;
  for (auto _ : state) {
    json::object write = live;
    write["status"].as_object()["readyReplicas"] = 2 + (++i % 2);
    json::object out = manager.Update(live, std::move(write), status_req);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_FieldManagerStatusUpdate)->Unit(benchmark::kMicrosecond);

// Computing one apply: merge, prune, compare, conflicts.
void BM_FieldManagerApply(benchmark::State& state) {
  api::FieldManager manager = DeploymentManager();
  auto live = manager.Apply({}, TypicalDeployment(3), Request("kubectl"));
  if (!live.ok()) return state.SkipWithError(live.status().message().c_str());
  EnsureObject(*live, "metadata")["uid"] = "u";
  const json::object config = TypicalDeployment(4);
  for (auto _ : state) {
    auto out = manager.Apply(*live, config, Request("kubectl"));
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_FieldManagerApply)->Unit(benchmark::kMicrosecond);

// The stored bytes of the Deployment, and how many of them managedFields
// are, after the writes `setup` makes.
void ReportShare(benchmark::State& state, TestServer& server) {
  RecordingResponder resp;
  server.Do(resp, "GET", std::string(kPath) + "/web");
  json::object obj = resp.Json();
  size_t total = json::serialize(obj).size();
  json::value* managed = obj["metadata"].as_object().if_contains("managedFields");
  size_t fields = managed != nullptr ? json::serialize(*managed).size() : 0;
  state.counters["stored_bytes"] = static_cast<double>(total);
  state.counters["managed_bytes"] = static_cast<double>(fields);
  state.counters["managed_share_pct"] = 100.0 * static_cast<double>(fields) / total;
}

void BM_ManagedFieldsShare(benchmark::State& state) {
  for (auto _ : state) {
    TestServer server;
    const std::string one = std::string(kPath) + "/web";
    switch (state.range(0)) {
      case 0:  // kubectl create
        Write(server, "POST", std::string(kPath) + "?fieldManager=kubectl-create",
              TypicalDeployment(3), "application/json", state);
        break;
      case 1:  // kubectl apply --server-side
        Write(server, "PATCH", one + "?fieldManager=kubectl", TypicalDeployment(3), kApply, state);
        break;
      default: {  // applied, scaled by an autoscaler, its image set by a pipeline
        Write(server, "PATCH", one + "?fieldManager=kubectl", TypicalDeployment(3), kApply, state);
        json::object scale{{"spec", {{"replicas", 5}}}};
        Write(server, "PATCH", one + "/scale?fieldManager=autoscaler", scale,
              "application/merge-patch+json", state);
        RecordingResponder resp;
        server.Do(resp, "PATCH", one + "?fieldManager=pipeline",
                  R"([{"op":"replace","path":"/spec/template/spec/containers/0/image",)"
                  R"("value":"registry.example.com/web:1.4.3"}])",
                  "application/json-patch+json");
        if (resp.code() != 200) state.SkipWithError(resp.body().c_str());
      }
    }
    state.PauseTiming();
    ReportShare(state, server);
    state.ResumeTiming();
  }
}
BENCHMARK(BM_ManagedFieldsShare)
    ->ArgName("writes")
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace flotilla::apiserver

BENCHMARK_MAIN();
