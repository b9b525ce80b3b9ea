// Migration benchmark: a coupled application moved whole between clusters
// over the real `flotilla server` and `flotilla member` processes
// (docs/benchmarks.md, "Coupled applications").
//
// Three member clusters (one member process, one node of 32 cpu each). The
// application: a Deployment "web" of 15 replicas and a ReplicaSet "db" of 5,
// 500m cpu each, preferentially coupled, preferring m-1. Once it runs whole
// in m-1, both workloads get federation.kubernetes.io/migrate-to: m-2 (what
// `kubectl flotilla migrate` sets); the members' pods are polled every
// 20 ms: the time until every workload runs whole in m-2 and m-1 holds
// none of its local objects, and the lowest number of running pods of the
// application seen meanwhile. The peer, in the same run: the same 20 pods
// created directly on m-3 (a Deployment and a ReplicaSet), the time until
// all run: what starting the application on one cluster costs without a
// federation. Runs --runs (3) migrations back and forth.
//
// Prints one JSON object. Wall-clock time is what is measured.
//
// Usage: migration_bench [--flotilla PATH] [--runs 3] [--timeout-s 300]
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <thread>

#include "base/log.h"
#include "bench/federation_bench.h"

namespace flotilla::bench {
namespace {

constexpr char kNs[] = "bench";

struct Config {
  std::string flotilla;
  int runs = 3;
  int timeout_s = 300;
};

json::object Workload(const std::string& kind, const std::string& name, int64_t replicas,
                      bool federated) {
  json::object labels{{"app", name}};
  json::object container{
      {"name", "app"}, {"image", "nginx:1.27"}, {"resources", {{"requests", {{"cpu", "500m"}}}}}};
  json::object meta{{"name", name}};
  if (federated) {
    std::string prefs = R"({"clusters":{"m-1":{"weight":2},"*":{"weight":1}}})";
    meta["labels"] = {{"federation.kubernetes.io/application", "shop"}};
    meta["annotations"] = {
        {"federation.kubernetes.io/location-affinity", "preferentially-coupled"},
        {kind == "Deployment" ? "federation.kubernetes.io/deployment-preferences"
                              : "federation.kubernetes.io/replica-set-preferences",
         prefs}};
  }
  return {{"apiVersion", "apps/v1"},
          {"kind", kind},
          {"metadata", std::move(meta)},
          {"spec",
           {{"replicas", replicas},
            {"selector", {{"matchLabels", labels}}},
            {"template",
             {{"metadata", {{"labels", labels}}},
              {"spec",
               {{"terminationGracePeriodSeconds", 0}, {"containers", json::array{container}}}}}}}}};
}

// Running pods (not being deleted) of web and db in `member`.
int Running(client::Client& member) {
  auto pods = member.List(kPods, kNs, {.label_selector = "app in (web,db)"});
  if (!pods.ok()) return 0;
  int n = 0;
  for (const json::object& p : pods->items) {
    n += StringAt(p, "status.phase") == "Running" &&
         Find(p, "metadata.deletionTimestamp") == nullptr;
  }
  return n;
}

bool HasLocal(client::Client& member) {
  return member.Get(kDeployments, kNs, "web").ok() || member.Get(kReplicaSets, kNs, "db").ok();
}

Status Annotate(client::Client& fed, const client::ResourceRef& r, const std::string& name,
                const std::string& to) {
  for (int attempt = 0; attempt < 10; ++attempt) {
    FLOTILLA_ASSIGN_OR_RETURN(json::object obj, fed.Get(r, kNs, name));
    EnsureObject(EnsureObject(obj, "metadata"),
                 "annotations")["federation.kubernetes.io/migrate-to"] = to;
    auto written = fed.Update(r, kNs, obj);
    if (written.ok()) return Status::Ok();
    if (!written.status().Is(Reason::kConflict)) return written.status();
  }
  return Status::Conflict("kept conflicting");
}

// Waits (polling every 20 ms) until `done`; false after the timeout.
bool Await(const std::function<bool()>& done, int timeout_s) {
  auto deadline = Steady::now() + std::chrono::seconds(timeout_s);
  while (!done()) {
    if (Steady::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

int Run(const Config& c) {
  InitLogging("error");
  char tmpl[] = "/tmp/migration-bench-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  auto fleet = StartFleet(c.flotilla, dir, 3, {"--nodes", "1", "--node-cpu", "32"}, c.timeout_s);
  if (!fleet.ok()) {
    std::cerr << "starting: " << fleet.status().ToString() << "\n";
    return 1;
  }
  client::Client& fed = *fleet->fed;
  std::vector<client::Client*> m = fleet->Members();
  json::object out;

  // The peer: the application started directly on m-3.
  Steady::time_point t0 = Steady::now();
  if (!m[2]->Create(kDeployments, kNs, Workload("Deployment", "web", 15, false)).ok() ||
      !m[2]->Create(kReplicaSets, kNs, Workload("ReplicaSet", "db", 5, false)).ok() ||
      !Await([&] { return Running(*m[2]) == 20; }, c.timeout_s)) {
    std::cerr << "peer: the application did not start on m-3\n";
    return 1;
  }
  out["peer_start_on_one_member_s"] = SecondsSince(t0);
  (void)m[2]->Delete(kDeployments, kNs, "web");
  (void)m[2]->Delete(kReplicaSets, kNs, "db");
  Await([&] { return Running(*m[2]) == 0; }, c.timeout_s);

  t0 = Steady::now();
  if (!fed.Create(kDeployments, kNs, Workload("Deployment", "web", 15, true)).ok() ||
      !fed.Create(kReplicaSets, kNs, Workload("ReplicaSet", "db", 5, true)).ok() ||
      !Await([&] { return Running(*m[0]) == 20; }, c.timeout_s)) {
    std::cerr << "the application did not start whole in m-1\n";
    return 1;
  }
  out["placed_whole_s"] = SecondsSince(t0);

  json::array runs;
  int from = 0, to = 1;
  for (int run = 0; run < c.runs; ++run) {
    std::string dest = "m-" + std::to_string(to + 1);
    int lowest = 20;
    int samples = 0;
    t0 = Steady::now();
    if (!Annotate(fed, kDeployments, "web", dest).ok() ||
        !Annotate(fed, kReplicaSets, "db", dest).ok()) {
      std::cerr << "annotating failed\n";
      return 1;
    }
    bool moved = Await(
        [&] {
          int at_from = Running(*m[from]), at_to = Running(*m[to]);
          lowest = std::min(lowest, at_from + at_to);
          ++samples;
          return at_to == 20 && !HasLocal(*m[from]);
        },
        c.timeout_s);
    if (!moved) {
      std::cerr << "the move to " << dest << " did not finish\n";
      return 1;
    }
    json::object r{{"to", dest},
                   {"seconds", SecondsSince(t0)},
                   {"lowest_running", lowest},
                   {"samples", samples}};
    std::cerr << json::serialize(r) << std::endl;
    runs.push_back(std::move(r));
    std::swap(from, to);
  }
  out["replicas"] = 20;
  out["migrations"] = std::move(runs);
  std::cout << json::serialize(out) << std::endl;
  fleet->server.child.reset();
  fleet->members.child.reset();
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace flotilla::bench

int main(int argc, char** argv) {
  flotilla::bench::Config c;
  c.flotilla = flotilla::bench::FlotillaOfThisBuild();
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--flotilla") {
      c.flotilla = v;
    } else if (a == "--runs") {
      c.runs = std::stoi(v);
    } else if (a == "--timeout-s") {
      c.timeout_s = std::stoi(v);
    } else {
      std::cerr << "usage: migration_bench [--flotilla PATH] [--runs N] [--timeout-s S]\n";
      return 2;
    }
  }
  return flotilla::bench::Run(c);
}
