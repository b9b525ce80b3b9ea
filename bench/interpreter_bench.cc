// What the resource interpreter costs (docs/benchmarks.md, "Resource
// interpreter"): each operation of the test customization
// (src/interpreter/testdata) on its test object, as µs per call, beside
// the same work done natively in C++ (the peer: what a built-in strategy
// pays); the cost of the sandbox alone (a fresh state and a call of an empty
// function); and the memory a call needs: the smallest memory limit under
// which it still succeeds (the state is made per call, so that is all a
// loaded customization holds besides its scripts' text).
//
// Usage: interpreter_bench [--calls N]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include "api/resources.h"
#include "base/file.h"
#include "base/yaml.h"
#include "interpreter/interpreter.h"

namespace flotilla {
namespace {

using Clock = std::chrono::steady_clock;
using interpreter::Customization;
using interpreter::Limits;
using interpreter::Operation;

json::value Load(const std::string& dir, const char* file) {
  auto text = ReadFile(dir + "/" + file);
  if (!text.ok()) {
    std::fprintf(stderr, "%s\n", text.status().ToString().c_str());
    std::exit(1);
  }
  return *ParseYaml(*text);
}

double MicrosPerCall(int calls, const std::function<bool()>& call) {
  auto start = Clock::now();
  for (int i = 0; i < calls; ++i) {
    if (!call()) {
      std::fprintf(stderr, "a call failed\n");
      std::exit(1);
    }
  }
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / calls;
}

// The smallest memory limit (to 1 KiB) under which `call` succeeds.
size_t MemoryNeeded(const std::function<bool(Limits)>& call) {
  size_t lo = 1024, hi = 64u << 20;
  while (hi - lo > 1024) {
    size_t mid = (lo + hi) / 2;
    if (call({.memory = mid})) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return hi;
}

}  // namespace
}  // namespace flotilla

int main(int argc, char** argv) {
  using namespace flotilla;
  int calls = 5000;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--calls") == 0) calls = std::atoi(argv[i + 1]);
  }
  const std::string dir = FLOTILLA_INTERPRETER_TESTDATA;
  json::value customization = Load(dir, "workload-customization.yaml");
  Customization c = *interpreter::Read(customization.as_object());
  json::object obj = Load(dir, "workload.yaml").as_object();
  json::array items = Load(dir, "status-items.yaml").as_array();
  size_t script_bytes = 0;
  for (const std::string& s : c.scripts) script_bytes += s.size();

  std::printf("resource interpreter, %d calls each (test customization, %zu bytes of Lua)\n", calls,
              script_bytes);
  double empty = MicrosPerCall(
      calls, [] { return interpreter::Run({.script = "function F() end", .function = "F"}).ok(); });
  std::printf("  sandbox alone (fresh state, empty function)   %8.1f us/call\n", empty);

  struct Row {
    const char* name;
    std::function<bool(Limits)> lua;
    std::function<bool()> native;  // null: no native peer
  };
  Row rows[] = {
      {"InterpretReplica (GetReplicas)",
       [&](Limits l) { return interpreter::GetReplicas(c, obj, l).ok(); },
       [&] {
         const json::value* tmpl = Find(obj, "spec.template");
         api::Resources r =
             api::PodRequests(json::object{{"spec", *Find(tmpl->as_object(), "spec")}});
         return GetInt(*GetObject(obj, "spec"), "replicas").has_value() && r.milli_cpu > 0;
       }},
      {"ReviseReplica", [&](Limits l) { return interpreter::ReviseReplica(c, obj, 3, l).ok(); },
       [&] {
         json::object copy = obj;
         copy["spec"].as_object()["replicas"] = 3;
         return copy.size() > 0;
       }},
      {"Retain", [&](Limits l) { return interpreter::Retain(c, obj, obj, l).ok(); }, nullptr},
      {"AggregateStatus",
       [&](Limits l) { return interpreter::AggregateStatus(c, obj, items, l).ok(); },
       [&] {
         int64_t sum = 0;
         for (const json::value& i : items)
           sum += *GetInt(*GetObject(i.as_object(), "status"), "replicas");
         json::object copy = obj;
         copy["status"] = json::object{{"replicas", sum}};
         return sum > 0;
       }},
      {"InterpretStatus (ReflectStatus)",
       [&](Limits l) { return interpreter::ReflectStatus(c, obj, l).ok(); }, nullptr},
      {"InterpretHealth", [&](Limits l) { return interpreter::InterpretHealth(c, obj, l).ok(); },
       nullptr},
      {"InterpretDependency (GetDependencies)",
       [&](Limits l) { return interpreter::GetDependencies(c, obj, l).ok(); }, nullptr},
  };
  std::printf("  %-40s %10s %12s %12s\n", "operation", "Lua us", "native us", "Lua memory");
  for (const Row& row : rows) {
    double lua = MicrosPerCall(calls, [&] { return row.lua({}); });
    double native = row.native ? MicrosPerCall(calls * 10, row.native) : 0;
    size_t memory = MemoryNeeded(row.lua);
    char native_text[32] = "-";
    if (row.native) std::snprintf(native_text, sizeof native_text, "%.2f", native);
    std::printf("  %-40s %10.1f %12s %9.0f KiB\n", row.name, lua, native_text, memory / 1024.0);
  }
  return 0;
}
