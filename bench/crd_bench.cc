// What CustomResourceDefinitions cost the API server (docs/benchmarks.md,
// "CustomResourceDefinitions"), in process (the API server's request path
// without HTTPS, on a memory store):
//  - a CRD created to its kind served: the create's answer to the CRD's
//    Established condition, and to the first 200 of a list of the kind;
//  - creates, gets and a list of 2,000 objects of a custom kind, beside a
//    built-in kind of the same size (ConfigMaps holding the same fields as
//    data) in the same run;
//  - a large schema (an operator's: 300 fields at three levels) checked,
//    pruned and defaulted per object, beside the built-in check of a
//    Deployment;
//  - a CRD of over 1 MiB (2,000 fields with 600-character descriptions, as
//    operators ship them) applied server-side to Established, applied again
//    unchanged, and its first object created.
//
// Usage: crd_bench [--objects N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "api/crd/structural.h"
#include "api/schema.h"
#include "apiserver/api_server_test_util.h"

namespace flotilla {
namespace {

using apiserver::testing::RecordingResponder;
using apiserver::testing::TestServer;
using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

std::string CrdJson(int i) {
  std::string plural = "widgets" + std::to_string(i);
  return R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
    "metadata":{"name":")" +
         plural + R"(.bench.example.com"},"spec":{"group":"bench.example.com","scope":"Namespaced",
    "names":{"plural":")" +
         plural + R"(","kind":"Widget)" + std::to_string(i) + R"("},
    "versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
      "schema":{"openAPIV3Schema":{"type":"object","properties":{
        "spec":{"type":"object","properties":{
          "size":{"type":"integer","minimum":0,"default":1},
          "color":{"type":"string","enum":["red","green","blue"]},
          "owner":{"type":"string","maxLength":63},
          "tags":{"type":"array","items":{"type":"string"}}}},
        "status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}}}]}})";
}

bool Established(TestServer& s, int i) {
  RecordingResponder r;
  s.Do(r, "GET",
       "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets" + std::to_string(i) +
           ".bench.example.com");
  return r.body().find(R"("type":"Established","status":"True")") != std::string::npos;
}

// A CRD created to Established and to its kind listed, `n` times.
void CrdToServable(TestServer& s, int n) {
  std::vector<double> established, listed;
  for (int i = 0; i < n; ++i) {
    auto start = Clock::now();
    RecordingResponder r;
    s.Do(r, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CrdJson(i));
    if (r.code() != 201) {
      std::fprintf(stderr, "CRD create: %d %s\n", r.code(), r.body().c_str());
      std::exit(1);
    }
    while (!Established(s, i)) std::this_thread::yield();
    established.push_back(Ms(Clock::now() - start));
    for (;;) {
      RecordingResponder l;
      s.Do(l, "GET", "/apis/bench.example.com/v1/namespaces/default/widgets" + std::to_string(i));
      if (l.code() == 200) break;
      std::this_thread::yield();
    }
    listed.push_back(Ms(Clock::now() - start));
  }
  std::sort(established.begin(), established.end());
  std::sort(listed.begin(), listed.end());
  std::printf(
      "CRD created to Established: median %.2f ms, max %.2f ms (%d CRDs, the server "
      "serving up to %d)\n",
      established[n / 2], established.back(), n, n);
  std::printf("CRD created to its kind listed: median %.2f ms, max %.2f ms\n", listed[n / 2],
              listed.back());
}

// A CRD of about 1.3 MiB of JSON.
std::string LargeCrdJson() {
  std::string fields;
  const std::string description(600, 'x');
  for (int i = 0; i < 2000; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "field%04d", i);
    if (!fields.empty()) fields += ",";
    fields +=
        std::string("\"") + name + R"(":{"type":"string","description":")" + description + "\"}";
  }
  return R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
    "metadata":{"name":"bigs.bench.example.com"},"spec":{"group":"bench.example.com",
    "scope":"Namespaced","names":{"plural":"bigs","kind":"Big"},
    "versions":[{"name":"v1","served":true,"storage":true,
      "schema":{"openAPIV3Schema":{"type":"object","properties":{
        "spec":{"type":"object","properties":{)" +
         fields + "}}}}}}]}}";
}

// The large CRD applied server-side to Established, applied again, and its
// first object created.
void LargeCrd(TestServer& s) {
  const std::string crd = LargeCrdJson();
  const std::string path =
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
      "bigs.bench.example.com?fieldManager=bench&force=true";
  auto apply = [&] {
    RecordingResponder r;
    s.Do(r, "PATCH", path, crd, "application/apply-patch+yaml");
    if (r.code() != 200 && r.code() != 201) {
      std::fprintf(stderr, "large CRD apply: %d %.300s\n", r.code(), r.body().c_str());
      std::exit(1);
    }
  };
  auto established = [&] {
    RecordingResponder r;
    s.Do(r, "GET",
         "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/bigs.bench.example.com");
    return r.body().find(R"("type":"Established","status":"True")") != std::string::npos;
  };
  auto start = Clock::now();
  apply();
  double applied = Ms(Clock::now() - start);
  while (!established()) std::this_thread::yield();
  double ready = Ms(Clock::now() - start);
  start = Clock::now();
  apply();
  double again = Ms(Clock::now() - start);
  start = Clock::now();
  for (;;) {
    RecordingResponder r;
    s.Do(r, "POST", "/apis/bench.example.com/v1/namespaces/default/bigs",
         R"({"apiVersion":"bench.example.com/v1","kind":"Big","metadata":{"name":"b"},
             "spec":{"field1999":"set"}})");
    if (r.code() == 201) break;
    if (r.code() != 404) {
      std::fprintf(stderr, "Big create: %d %.300s\n", r.code(), r.body().c_str());
      std::exit(1);
    }
    std::this_thread::yield();
  }
  double object = Ms(Clock::now() - start);
  std::printf(
      "CRD of %.2f MiB applied server-side: answered %.1f ms, Established %.1f ms; applied again "
      "unchanged %.1f ms; its first object created %.2f ms\n",
      crd.size() / 1048576.0, applied, ready, again, object);
}

std::string Widget(int i) {
  return R"({"apiVersion":"bench.example.com/v1","kind":"Widget0","metadata":{"name":"w)" +
         std::to_string(i) +
         R"("},"spec":{"size":3,"color":"green","owner":"team-a","tags":["a","b","c"]}})";
}
std::string ConfigMap(int i) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"w)" + std::to_string(i) +
         R"("},"data":{"size":"3","color":"green","owner":"team-a","tags":"a,b,c"}})";
}

struct Rates {
  double create, get, list_ms, list_kib;
};

Rates Measure(TestServer& s, const std::string& base, std::string (*body)(int), int n) {
  Rates out{};
  auto start = Clock::now();
  for (int i = 0; i < n; ++i) {
    RecordingResponder r;
    s.Do(r, "POST", base, body(i));
    if (r.code() != 201) {
      std::fprintf(stderr, "create %s: %d %s\n", base.c_str(), r.code(), r.body().c_str());
      std::exit(1);
    }
  }
  out.create = n / std::chrono::duration<double>(Clock::now() - start).count();
  start = Clock::now();
  for (int i = 0; i < n; ++i) {
    RecordingResponder r;
    s.Do(r, "GET", base + "/w" + std::to_string(i));
  }
  out.get = n / std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> lists;
  for (int k = 0; k < 5; ++k) {
    start = Clock::now();
    RecordingResponder r;
    s.Do(r, "GET", base);
    lists.push_back(Ms(Clock::now() - start));
    out.list_kib = static_cast<double>(r.body().size()) / 1024;
  }
  std::sort(lists.begin(), lists.end());
  out.list_ms = lists[2];
  return out;
}

// An operator-sized schema: spec with 10 sections of 10 groups of 3 fields.
json::object LargeSchema() {
  json::object sections;
  for (int a = 0; a < 10; ++a) {
    json::object groups;
    for (int b = 0; b < 10; ++b) {
      groups["g" + std::to_string(b)] = json::object{
          {"type", "object"},
          {"properties",
           json::object{
               {"name", json::object{{"type", "string"}, {"maxLength", 63}}},
               {"count", json::object{{"type", "integer"}, {"minimum", 0}, {"default", 1}}},
               {"mode", json::object{{"type", "string"}, {"enum", json::array{"on", "off"}}}}}}};
    }
    sections["s" + std::to_string(a)] =
        json::object{{"type", "object"}, {"properties", std::move(groups)}};
  }
  return json::object{
      {"type", "object"},
      {"properties",
       json::object{{"spec", json::object{{"type", "object"}, {"properties", sections}}}}}};
}

json::object LargeObject() {
  json::object spec;
  for (int a = 0; a < 10; ++a) {
    json::object groups;
    for (int b = 0; b < 10; ++b) {
      groups["g" + std::to_string(b)] = json::object{{"name", "x"}, {"mode", "on"}};
    }
    spec["s" + std::to_string(a)] = std::move(groups);
  }
  return json::object{{"apiVersion", "bench.example.com/v1"},
                      {"kind", "Big"},
                      {"metadata", json::object{{"name", "big"}}},
                      {"spec", std::move(spec)}};
}

void SchemaCost() {
  std::vector<StatusCause> causes;
  auto schema = api::crd::ParseStructural(LargeSchema(), "schema", &causes);
  if (schema == nullptr) {
    std::fprintf(stderr, "large schema: %s\n", causes.front().message.c_str());
    std::exit(1);
  }
  const json::object object = LargeObject();
  constexpr int kRounds = 2000;
  auto start = Clock::now();
  for (int i = 0; i < kRounds; ++i) {
    json::object o = object;
    std::vector<std::string> unknown;
    api::crd::Prune(*schema, o, &unknown);
    api::crd::Default(*schema, o);
    if (!api::crd::Validate(*schema, o).empty()) std::exit(1);
  }
  double custom_us = Ms(Clock::now() - start) * 1000 / kRounds;
  json::object deployment = *ParseJsonObject(R"({"apiVersion":"apps/v1","kind":"Deployment",
      "metadata":{"name":"web"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},
      "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[
        {"name":"web","image":"web:1","args":["--port=8080"],
         "resources":{"requests":{"cpu":"100m","memory":"128Mi"}}}]}}}})");
  start = Clock::now();
  for (int i = 0; i < kRounds; ++i) {
    api::CheckResult result;
    api::SchemaSet::Builtin().Check("io.k8s.api.apps.v1.Deployment", deployment, &result);
  }
  double builtin_us = Ms(Clock::now() - start) * 1000 / kRounds;
  std::printf(
      "large schema (300 fields, 200 set): prune + default + validate %.1f us per "
      "object; built-in schema check of a Deployment %.1f us\n",
      custom_us, builtin_us);
}

}  // namespace
}  // namespace flotilla

int main(int argc, char** argv) {
  using namespace flotilla;
  int n = 2000;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--objects") == 0) n = std::atoi(argv[i + 1]);
  }
  TestServer s;
  if (!s.started().ok() || !s.api().StartCustomResources().ok()) {
    std::fprintf(stderr, "server did not start\n");
    return 1;
  }
  CrdToServable(s, 20);
  Rates custom = Measure(s, "/apis/bench.example.com/v1/namespaces/default/widgets0", Widget, n);
  Rates builtin = Measure(s, "/api/v1/namespaces/default/configmaps", ConfigMap, n);
  std::printf("%d objects, in process (no HTTPS), memory store:\n", n);
  std::printf("  custom kind (Widget):   %8.0f creates/s %8.0f gets/s  list %.2f ms (%.0f KiB)\n",
              custom.create, custom.get, custom.list_ms, custom.list_kib);
  std::printf("  built-in (ConfigMap):   %8.0f creates/s %8.0f gets/s  list %.2f ms (%.0f KiB)\n",
              builtin.create, builtin.get, builtin.list_ms, builtin.list_kib);
  SchemaCost();
  LargeCrd(s);
  return 0;
}
