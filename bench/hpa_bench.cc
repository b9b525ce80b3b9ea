// Federated HPA benchmark: load in one member cluster, over the real
// `flotilla server` and `flotilla member` processes (docs/benchmarks.md,
// "Federated HPAs").
//
// Three member clusters m-1..m-3 in one member process, a federated
// Deployment of 3 replicas (100m of cpu each) and a federated HPA of min 3,
// max 12 at 50% cpu: each member gets a local HPA of 1/4. Then 2 CPUs of
// demand appear in m-1 only (`flotilla member ctl demand`), and every
// --poll-ms the members' local HPAs and Deployments are read:
//   ceiling_s:  until m-1's HPA is at its ceiling of 4 (its own scaling);
//   moved_s:    until the federation gave m-1 more max;
//   above_s:    until m-1 runs more ready pods than its first share of 4;
//   settled_s:  until it runs all it was given;
//   hpa_writes: the changes of a local HPA's min or max by the federation in
//               that time: the writes of the rebalance. (That it writes no
//               local replica count meanwhile is asserted by the tests,
//               test_federation_hpa.py, on the federation's own counter.)
// The peer, on one member alone: the same Deployment and an HPA of max 12
// there, the same demand: how long the member's own HPA takes to run more
// than 4 (the floor any federation adds to).
//
// The members' HPAs sync every --hpa-sync-period (15s, Kubernetes'
// default) and the federation runs with its defaults (--member-change-delay
// 2s, --hpa-freeze-window 30s). Prints one JSON object.
//
// Usage: hpa_bench [--flotilla PATH] [--hpa-sync-period 15s] [--poll-ms 100]
//                  [--timeout-s 600]
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include "base/log.h"
#include "bench/federation_bench.h"

namespace flotilla::bench {
namespace {

inline const client::ResourceRef kHpas{"autoscaling", "v2", "horizontalpodautoscalers", true};

struct Config {
  std::string flotilla;
  std::string work_dir;
  std::string hpa_sync_period = "15s";
  int poll_ms = 100;
  int timeout_s = 600;
};

json::object Deployment(int64_t replicas) {
  json::object labels{{"app", "web"}};
  json::object container{
      {"name", "app"}, {"image", "nginx"}, {"resources", {{"requests", {{"cpu", "100m"}}}}}};
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", {{"name", "web"}}},
          {"spec",
           {{"replicas", replicas},
            {"selector", {{"matchLabels", labels}}},
            {"template",
             {{"metadata", {{"labels", labels}}},
              {"spec",
               {{"terminationGracePeriodSeconds", 0}, {"containers", json::array{container}}}}}}}}};
}

json::object Hpa(int64_t min, int64_t max) {
  return {
      {"apiVersion", "autoscaling/v2"},
      {"kind", "HorizontalPodAutoscaler"},
      {"metadata", {{"name", "web"}}},
      {"spec",
       {{"scaleTargetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "web"}}},
        {"minReplicas", min},
        {"maxReplicas", max},
        {"metrics", json::array{json::object{
                        {"type", "Resource"},
                        {"resource",
                         {{"name", "cpu"},
                          {"target", {{"type", "Utilization"}, {"averageUtilization", 50}}}}}}}}}}};
}

// What a poll saw of one member.
struct Seen {
  int64_t min = 0, max = 0;          // of the local HPA (0: none)
  int64_t current = 0, desired = 0;  // its status
  int64_t replicas = 0, ready = 0;   // of the local Deployment
};

Seen Read(client::Client& member) {
  Seen s;
  if (auto h = member.Get(kHpas, "bench", "web"); h.ok()) {
    s.min = IntAt(*h, "spec.minReplicas", 1);
    s.max = IntAt(*h, "spec.maxReplicas");
    s.current = IntAt(*h, "status.currentReplicas");
    s.desired = IntAt(*h, "status.desiredReplicas");
  }
  if (auto d = member.Get(kDeployments, "bench", "web"); d.ok()) {
    s.replicas = IntAt(*d, "spec.replicas");
    s.ready = IntAt(*d, "status.readyReplicas");
  }
  return s;
}

Status Demand(const Config& c, const std::string& kubeconfig, const std::string& cpu) {
  std::string cmd = c.flotilla + " member ctl demand deployment/web " + cpu +
                    " -n bench --kubeconfig " + kubeconfig + " >/dev/null";
  return std::system(cmd.c_str()) == 0 ? Status::Ok() : Status::Internal("ctl demand failed");
}

// Polls until `done` or the timeout; returns the seconds since `start`.
template <typename Done>
std::optional<double> Until(const Config& c, Steady::time_point start, Done done) {
  auto deadline = Steady::now() + std::chrono::seconds(c.timeout_s);
  while (Steady::now() < deadline) {
    if (done()) return SecondsSince(start);
    std::this_thread::sleep_for(std::chrono::milliseconds(c.poll_ms));
  }
  return std::nullopt;
}

json::value Figure(std::optional<double> s) { return s ? json::value(*s) : json::value(nullptr); }

json::object Federated(const Config& c) {
  std::string dir = c.work_dir + "/federated";
  auto fleet = StartFleet(c.flotilla, dir, 3,
                          {"--nodes", "1", "--node-cpu", "100", "--node-pods", "200",
                           "--pod-startup", "200ms", "--hpa-sync-period", c.hpa_sync_period},
                          c.timeout_s);
  if (!fleet.ok()) return {{"error", fleet.status().ToString()}};
  client::Client& fed = *fleet->fed;
  std::vector<client::Client*> members = fleet->Members();
  if (auto s = fed.Create(kDeployments, "bench", Deployment(3)); !s.ok()) {
    return {{"error", s.status().ToString()}};
  }
  auto start = Steady::now();
  auto ready = Until(c, start, [&] {
    for (client::Client* m : members) {
      if (Read(*m).ready < 1) return false;
    }
    return true;
  });
  if (auto s = fed.Create(kHpas, "bench", Hpa(3, 12)); !s.ok()) {
    return {{"error", s.status().ToString()}};
  }
  auto shared = Until(c, start, [&] {
    for (client::Client* m : members) {
      Seen s = Read(*m);
      if (s.min != 1 || s.max != 4 || s.current < 1) return false;
    }
    return true;
  });
  if (!ready || !shared) return {{"error", "the local HPAs did not get 1/4 each"}};

  // Load in m-1 only.
  std::vector<Seen> last;
  for (client::Client* m : members) last.push_back(Read(*m));
  int hpa_writes = 0;
  std::optional<double> ceiling, moved, above;
  auto t0 = Steady::now();
  if (Status s = Demand(c, fleet->members.kubeconfigs[0], "2000m"); !s.ok()) {
    return {{"error", s.ToString()}};
  }
  auto settled = Until(c, t0, [&] {
    for (size_t i = 0; i < members.size(); ++i) {
      Seen s = Read(*members[i]);
      if (s.min != last[i].min || s.max != last[i].max) ++hpa_writes;
      last[i] = s;
    }
    const Seen& a = last[0];
    if (!ceiling && a.current == 4 && a.desired == 4 && a.max == 4) ceiling = SecondsSince(t0);
    if (!moved && a.max > 4) moved = SecondsSince(t0);
    if (!above && a.ready > 4) above = SecondsSince(t0);
    return moved && a.ready == a.max && a.desired == a.max;
  });
  return {{"members", 3},
          {"ceiling_s", Figure(ceiling)},
          {"moved_s", Figure(moved)},
          {"above_s", Figure(above)},
          {"settled_s", Figure(settled)},
          {"max_in_loaded_cluster", last[0].max},
          {"hpa_writes", hpa_writes}};
}

json::object OneMember(const Config& c) {
  std::string dir = c.work_dir + "/member";
  std::filesystem::create_directories(dir);
  auto member = StartMembers(c.flotilla, dir,
                             {"--nodes", "1", "--node-cpu", "100", "--node-pods", "200",
                              "--pod-startup", "200ms", "--hpa-sync-period", c.hpa_sync_period},
                             1);
  if (!member.ok()) return {{"error", member.status().ToString()}};
  auto client = ClientFor(member->kubeconfigs[0]);
  if (!client.ok()) return {{"error", client.status().ToString()}};
  client::Client& m = **client;
  if (Status s = EnsureNamespace(m, "bench"); !s.ok()) return {{"error", s.ToString()}};
  if (auto s = m.Create(kDeployments, "bench", Deployment(1)); !s.ok()) {
    return {{"error", s.status().ToString()}};
  }
  if (auto s = m.Create(kHpas, "bench", Hpa(1, 12)); !s.ok()) {
    return {{"error", s.status().ToString()}};
  }
  auto start = Steady::now();
  if (!Until(c, start, [&] {
        Seen s = Read(m);
        return s.ready >= 1 && s.current >= 1;
      })) {
    return {{"error", "the HPA did not start"}};
  }
  auto t0 = Steady::now();
  if (Status s = Demand(c, member->kubeconfigs[0], "2000m"); !s.ok()) {
    return {{"error", s.ToString()}};
  }
  auto above = Until(c, t0, [&] { return Read(m).ready > 4; });
  return {{"above_s", Figure(above)}};
}

int Run(Config c) {
  InitLogging("error");
  char tmpl[] = "/tmp/hpa-bench-XXXXXX";
  c.work_dir = mkdtemp(tmpl);
  json::object out{{"hpa_sync_period", c.hpa_sync_period}};
  out["federated"] = Federated(c);
  std::cerr << json::serialize(out["federated"]) << std::endl;
  out["one_member"] = OneMember(c);
  std::cout << json::serialize(out) << std::endl;
  std::filesystem::remove_all(c.work_dir);
  return 0;
}

}  // namespace
}  // namespace flotilla::bench

int main(int argc, char** argv) {
  flotilla::bench::Config c;
  c.flotilla = flotilla::bench::FlotillaOfThisBuild();
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) {
      std::cerr << "usage: hpa_bench [--flotilla PATH] [--hpa-sync-period 15s] [--poll-ms 100] "
                   "[--timeout-s 600]\n";
      return 2;
    }
    std::string v = argv[++i];
    if (a == "--flotilla") {
      c.flotilla = v;
    } else if (a == "--hpa-sync-period") {
      c.hpa_sync_period = v;
    } else if (a == "--poll-ms") {
      c.poll_ms = std::stoi(v);
    } else if (a == "--timeout-s") {
      c.timeout_s = std::stoi(v);
    } else {
      std::cerr << "unknown flag " << a << "\n";
      return 2;
    }
  }
  return flotilla::bench::Run(c);
}
