// Member benchmark: simulated member clusters (member/cluster.h) in this
// process, each with its own HTTPS API server, nodes, scheduler, kubelet and
// controllers, as `flotilla member --clusters N` runs them.
//
// 1. One member and one Deployment of --big replicas: how fast its pods are
//    created and bound to nodes (pods scheduled per second) and when the
//    Deployment reports them all available.
// 2. --members members with a Deployment of --pods replicas each: time until
//    every Deployment is available, then the process's RSS and CPU time, and
//    its CPU use while the members idle for --idle-seconds.
//
// Prints one JSON object; docs/benchmarks.md says how the published figures
// were taken. Wall-clock time is what is measured here, so the real clock is
// used throughout.
//
// Usage: member_bench [--members N] [--pods P] [--big N] [--idle-seconds S]
//                     [--pod-startup-ms MS] [--timeout-s S] [--skip-big] [--skip-fleet]
//                     [--no-stop]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/log.h"
#include "bench/proc_stats.h"
#include "member/cluster.h"

namespace flotilla::member {
namespace {

using Steady = std::chrono::steady_clock;

struct Config {
  int members = 10;
  int pods = 100;
  int big = 1000;
  int idle_seconds = 10;
  int pod_startup_ms = 500;
  bool skip_big = false;
  bool skip_fleet = false;
  int timeout_s = 900;   // per phase
  bool no_stop = false;  // print the fleet's figures and exit without stopping members
};

double SecondsSince(Steady::time_point start) {
  return std::chrono::duration<double>(Steady::now() - start).count();
}

double RssMiB() { return bench::StatusField(0, "VmRSS") / 1024.0; }

// User + system CPU seconds of the whole process so far.
double CpuSeconds() { return bench::CpuSeconds(0); }

int Threads() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

json::object Deployment(int replicas) {
  json::object container{{"name", "app"},
                         {"image", "nginx"},
                         {"resources", {{"requests", {{"cpu", "10m"}, {"memory", "16Mi"}}}}}};
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", {{"name", "web"}}},
          {"spec",
           {{"replicas", replicas},
            {"selector", {{"matchLabels", {{"app", "web"}}}}},
            {"template",
             {{"metadata", {{"labels", {{"app", "web"}}}}},
              {"spec", {{"containers", json::array{container}}}}}}}}};
}

StatusOr<std::unique_ptr<MemberCluster>> StartMember(const Config& c, const std::string& root,
                                                     int index, int pods) {
  MemberOptions o;
  o.name = "member-" + std::to_string(index);
  o.data_dir = root + "/" + o.name;
  o.storage = "memory";
  o.simulation.nodes = std::max(1, (pods + 99) / 100);
  o.simulation.node_pods = 110;
  o.simulation.pod_startup = std::chrono::milliseconds(c.pod_startup_ms);
  return MemberCluster::Start(o);
}

int64_t AvailableReplicas(MemberCluster& m) {
  auto d = m.client().Get(kDeployments, "default", "web");
  if (!d.ok()) return -1;
  const json::value* v = Find(*d, "status.availableReplicas");
  return v != nullptr && v->is_int64() ? v->get_int64() : 0;
}

// Pods created and pods bound to a node.
std::pair<int, int> PodCounts(MemberCluster& m) {
  auto list = m.client().List(kPods, "default", {});
  if (!list.ok()) return {0, 0};
  int bound = 0;
  for (const json::object& pod : list->items) {
    const json::value* node = Find(pod, "spec.nodeName");
    bound += node != nullptr && node->is_string() && !node->get_string().empty();
  }
  return {static_cast<int>(list->items.size()), bound};
}

// Phase 1: one member, one Deployment of `c.big` replicas.
json::object BigDeployment(const Config& c, const std::string& root) {
  auto member = StartMember(c, root, 0, c.big);
  if (!member.ok()) return {{"error", member.status().ToString()}};
  MemberCluster& m = **member;
  Steady::time_point start = Steady::now();
  auto created = m.client().Create(kDeployments, "default", Deployment(c.big));
  if (!created.ok()) return {{"error", created.status().ToString()}};
  double all_created = -1, all_bound = -1, available = -1;
  while (available < 0 && SecondsSince(start) < c.timeout_s) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto [pods, bound] = PodCounts(m);
    if (all_created < 0 && pods >= c.big) all_created = SecondsSince(start);
    if (all_bound < 0 && bound >= c.big) all_bound = SecondsSince(start);
    if (AvailableReplicas(m) >= c.big) available = SecondsSince(start);
  }
  m.Stop();
  return {{"replicas", c.big},
          {"nodes", std::max(1, (c.big + 99) / 100)},
          {"all_pods_created_s", all_created},
          {"all_pods_bound_s", all_bound},
          {"pods_scheduled_per_s", all_bound > 0 ? c.big / all_bound : 0.0},
          {"deployment_available_s", available}};
}

// Phase 2: `c.members` members with `c.pods` replicas each.
json::object Fleet(const Config& c, const std::string& root) {
  double rss_before = RssMiB(), cpu_before = CpuSeconds();
  Steady::time_point start = Steady::now();
  std::vector<std::unique_ptr<MemberCluster>> members;
  for (int i = 1; i <= c.members; ++i) {
    auto m = StartMember(c, root, i, c.pods);
    if (!m.ok()) return {{"error", m.status().ToString()}, {"started", i - 1}};
    members.push_back(std::move(*m));
  }
  double started = SecondsSince(start);
  double rss_empty = RssMiB();
  for (auto& m : members) {
    auto created = m->client().Create(kDeployments, "default", Deployment(c.pods));
    if (!created.ok()) return {{"error", created.status().ToString()}};
  }
  size_t ready = 0;
  while (ready < members.size() && SecondsSince(start) < c.timeout_s) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    while (ready < members.size() && AvailableReplicas(*members[ready]) >= c.pods) ++ready;
  }
  double available = SecondsSince(start);
  double cpu_busy = CpuSeconds() - cpu_before;
  double rss_loaded = RssMiB();
  double cpu_idle_start = CpuSeconds();
  std::this_thread::sleep_for(std::chrono::seconds(c.idle_seconds));
  double idle_cpu = (CpuSeconds() - cpu_idle_start) / c.idle_seconds;
  json::object out{{"members", c.members},
                   {"pods_per_member", c.pods},
                   {"members_available", static_cast<int64_t>(ready)},
                   {"start_members_s", started},
                   {"all_available_s", available},
                   {"cpu_s_to_available", cpu_busy},
                   {"rss_mib_before", rss_before},
                   {"rss_mib_members_started", rss_empty},
                   {"rss_mib_all_pods", rss_loaded},
                   {"rss_mib_per_member", (rss_loaded - rss_before) / c.members},
                   {"idle_cpu_cores", idle_cpu},
                   {"threads", Threads()}};
  if (c.no_stop) {
    std::cout << json::serialize(json::object{{"fleet", out}}) << std::endl;
    std::_Exit(0);
  }
  Steady::time_point stop = Steady::now();
  for (auto& m : members) m->Stop();
  out["stop_s"] = SecondsSince(stop);
  return out;
}

int Run(const Config& c) {
  InitLogging("error");
  char tmpl[] = "/tmp/member-bench-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  std::string root = tmpl;
  json::object out;
  if (!c.skip_big) out["big_deployment"] = BigDeployment(c, root);
  if (!c.skip_fleet) out["fleet"] = Fleet(c, root);
  std::filesystem::remove_all(root);
  std::cout << json::serialize(out) << std::endl;
  return 0;
}

}  // namespace
}  // namespace flotilla::member

int main(int argc, char** argv) {
  flotilla::member::Config c;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
    if (a == "--members")
      c.members = next();
    else if (a == "--pods")
      c.pods = next();
    else if (a == "--big")
      c.big = next();
    else if (a == "--idle-seconds")
      c.idle_seconds = next();
    else if (a == "--pod-startup-ms")
      c.pod_startup_ms = next();
    else if (a == "--skip-big")
      c.skip_big = true;
    else if (a == "--timeout-s")
      c.timeout_s = next();
    else if (a == "--no-stop")
      c.no_stop = true;
    else if (a == "--skip-fleet")
      c.skip_fleet = true;
    else {
      std::cerr << "unknown argument " << a << "\n";
      return 2;
    }
  }
  return flotilla::member::Run(c);
}
