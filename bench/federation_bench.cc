// Federation benchmark: the real `flotilla server` (the federation) and
// `flotilla member` processes, driven over HTTPS with the flotilla REST
// client, as a user and kubectl would drive them.
//
// 1. Propagation latency, for --latency-members (10,100): members in one
//    `flotilla member --clusters N` process, all joined; --samples federated
//    ReplicaSets of N replicas (one per member, rebalance true) created one
//    after the other; for each, the time from sending the create to the
//    moment its local ReplicaSet has been seen (watch event) in every member.
//    p50, p99, max, the same to the first member it appeared in, and the CPU time the federation
//    and the members' process used per sample. --gap-ms pauses between samples, so that a sample
//    does not share the machine with the previous one's pods starting. With the phase `configmaps`:
//    --samples ConfigMaps written at
//    --configmap-rate a second whatever the previous ones did (the sync
//    controller copies them to every member), the same figures.
// 2. Scale: --rs federated ReplicaSets of one replica each over
//    --scale-members members, created by 8 writers; the time until a local
//    ReplicaSet exists for every one of them (converged), the time until the
//    federation reports every one ready (status.readyReplicas 1), and the
//    server's RSS (now and peak).
// 3. Failover with the server's default settings: three member processes,
//    30 replicas (default preferences); one member is stopped (SIGSTOP); the
//    times until its Cluster is NotReady, until the other two's local
//    ReplicaSets hold all 30 replicas and until 30 pods run there.
//
// Prints one JSON object; docs/benchmarks.md ("Federation") says how the
// published figures were taken. Wall-clock time is what is measured here.
//
// Usage: federation_bench [--flotilla PATH] [--phases latency,configmaps,scale,failover]
//                         [--latency-members 10,100] [--samples 100] [--gap-ms 0]
//                         [--configmap-rate 4]
//                         [--rs 10000] [--scale-members 10] [--timeout-s 600]
#include "bench/federation_bench.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "base/log.h"
#include "bench/proc_stats.h"

namespace flotilla::bench {
namespace {

constexpr char kEven[] = R"({"rebalance":true,"clusters":{"*":{"weight":1}}})";

struct Config {
  std::string flotilla;
  std::string work_dir;
  std::vector<std::string> phases{"latency", "scale", "failover"};
  std::vector<int> latency_members{10, 100};
  int samples = 100;
  int gap_ms = 0;
  double configmap_rate = 4;
  int rs = 10000;
  int scale_members = 10;
  int timeout_s = 600;
};

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// The nearest-rank percentile of sorted `v`.
double Percentile(const std::vector<double>& v, double p) {
  if (v.empty()) return -1;
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

// The samples of one propagation run, and the CPU the federation and the
// members' process spent meanwhile.
class PropagationFigures {
 public:
  explicit PropagationFigures(const Fleet& fleet)
      : server_pid_(fleet.server.child->pid()),
        members_pid_(fleet.members.child->pid()),
        server_cpu_(CpuSeconds(server_pid_)),
        members_cpu_(CpuSeconds(members_pid_)) {}

  void Add(Steady::time_point sent, const LocalCopyWatcher::Arrival& at) {
    ms_.push_back(std::chrono::duration<double, std::milli>(at.last - sent).count());
    first_ms_.push_back(std::chrono::duration<double, std::milli>(at.first - sent).count());
  }
  void Timeout() { ++timeouts_; }

  // The figures of `samples` sent to `members`.
  json::object Report(int members, int samples) {
    double server_cpu = CpuSeconds(server_pid_) - server_cpu_;
    double members_cpu = CpuSeconds(members_pid_) - members_cpu_;
    std::sort(ms_.begin(), ms_.end());
    std::sort(first_ms_.begin(), first_ms_.end());
    return {{"members", members},
            {"samples", static_cast<int64_t>(ms_.size())},
            {"timeouts", timeouts_},
            {"p50_ms", Percentile(ms_, 0.50)},
            {"p99_ms", Percentile(ms_, 0.99)},
            {"max_ms", ms_.empty() ? -1.0 : ms_.back()},
            {"first_member_p50_ms", Percentile(first_ms_, 0.50)},
            {"first_member_p99_ms", Percentile(first_ms_, 0.99)},
            {"server_cpu_ms_per_sample", server_cpu * 1e3 / std::max(1, samples)},
            {"members_cpu_ms_per_sample", members_cpu * 1e3 / std::max(1, samples)},
            {"server_rss_mib", RssMiB(server_pid_)},
            {"server_threads", StatusField(server_pid_, "Threads")},
            {"members_threads", StatusField(members_pid_, "Threads")}};
  }

 private:
  const pid_t server_pid_, members_pid_;
  const double server_cpu_, members_cpu_;
  std::vector<double> ms_, first_ms_;  // to the last member, and to the first
  int timeouts_ = 0;
};

json::object Latency(const Config& c, int members) {
  std::string dir = c.work_dir + "/latency-" + std::to_string(members);
  auto fleet =
      StartFleet(c.flotilla, dir, members, {"--nodes", "1", "--node-pods", "1000"}, c.timeout_s);
  if (!fleet.ok()) return {{"error", fleet.status().ToString()}};
  auto watcher = LocalCopyWatcher::Start(fleet->Members());
  if (!watcher.ok()) return {{"error", watcher.status().ToString()}};
  PropagationFigures figures(*fleet);
  for (int i = 0; i < c.samples; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(c.gap_ms));
    std::string name = "lat-" + std::to_string(i);
    Steady::time_point sent = Steady::now();
    auto created = fleet->fed->Create(kReplicaSets, "bench", ReplicaSet(name, members, kEven));
    if (!created.ok()) return {{"error", created.status().ToString()}};
    auto at = (*watcher)->WaitFor(name, members, std::chrono::seconds(30));
    if (at) {
      figures.Add(sent, *at);
    } else {
      figures.Timeout();
    }
  }
  json::object out = figures.Report(members, c.samples);
  out["gap_ms"] = c.gap_ms;
  out["broken_watches"] = (*watcher)->broken_watches();
  return out;
}

// Federated ConfigMaps written at c.configmap_rate a second; the time from
// each create to its copy in every member.
json::object ConfigMapLatency(const Config& c, int members) {
  std::string dir = c.work_dir + "/configmaps-" + std::to_string(members);
  auto fleet = StartFleet(c.flotilla, dir, members, {"--nodes", "1"}, c.timeout_s);
  if (!fleet.ok()) return {{"error", fleet.status().ToString()}};
  auto watcher = LocalCopyWatcher::Start(fleet->Members(), kConfigMaps);
  if (!watcher.ok()) return {{"error", watcher.status().ToString()}};
  PropagationFigures figures(*fleet);
  const auto interval = std::chrono::duration_cast<Steady::duration>(
      std::chrono::duration<double>(1.0 / std::max(0.01, c.configmap_rate)));
  std::vector<Steady::time_point> sent;
  Steady::time_point start = Steady::now();
  for (int i = 0; i < c.samples; ++i) {
    std::this_thread::sleep_until(start + i * interval);
    sent.push_back(Steady::now());
    json::object cm{{"apiVersion", "v1"},
                    {"kind", "ConfigMap"},
                    {"metadata", {{"name", "cm-" + std::to_string(i)}}},
                    {"data", {{"key", "value " + std::to_string(i)}}}};
    auto created = fleet->fed->Create(kConfigMaps, "bench", cm);
    if (!created.ok()) return {{"error", created.status().ToString()}};
  }
  for (int i = 0; i < c.samples; ++i) {
    auto at = (*watcher)->WaitFor("cm-" + std::to_string(i), members, std::chrono::seconds(30));
    if (at) {
      figures.Add(sent[i], *at);
    } else {
      figures.Timeout();
    }
  }
  json::object out = figures.Report(members, c.samples);
  out["rate_per_s"] = c.configmap_rate;
  out["broken_watches"] = (*watcher)->broken_watches();
  return out;
}

// How many federated ReplicaSets of `ns` report `ready` ready replicas.
int64_t ReadyFederated(client::Client& fed, int64_t ready) {
  auto list = fed.List(kReplicaSets, "bench", {});
  if (!list.ok()) return -1;
  int64_t n = 0;
  for (const json::object& rs : list->items) {
    const json::value* v = Find(rs, "status.readyReplicas");
    n += v != nullptr && v->is_int64() && v->get_int64() == ready;
  }
  return n;
}

json::object Scale(const Config& c) {
  std::string dir = c.work_dir + "/scale";
  // Room for every pod in any member: names that differ only at the end
  // spread unevenly (docs/planner.md, "FNV-1's weak spot").
  int per_member = c.rs + 100;
  auto fleet = StartFleet(c.flotilla, dir, c.scale_members,
                          {"--nodes", "1", "--node-pods", std::to_string(per_member)}, c.timeout_s);
  if (!fleet.ok()) return {{"error", fleet.status().ToString()}};
  auto watcher = LocalCopyWatcher::Start(fleet->Members());
  if (!watcher.ok()) return {{"error", watcher.status().ToString()}};
  pid_t server = fleet->server.child->pid();
  double rss_idle = RssMiB(server);

  Steady::time_point start = Steady::now();
  std::atomic<int> next{0}, failed{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < 8; ++w) {
    writers.emplace_back([&] {
      for (int i = next++; i < c.rs; i = next++) {
        auto r =
            fleet->fed->Create(kReplicaSets, "bench", ReplicaSet("rs-" + std::to_string(i), 1, ""));
        if (!r.ok()) ++failed;
      }
    });
  }
  for (auto& t : writers) t.join();
  double created_s = SecondsSince(start);
  double rss_created = RssMiB(server);
  auto last =
      (*watcher)->WaitForNames(static_cast<size_t>(c.rs), std::chrono::seconds(c.timeout_s));
  double converged_s = last ? std::chrono::duration<double>(*last - start).count() : -1;
  double rss_converged = RssMiB(server);
  double ready_s = -1;
  while (SecondsSince(start) < c.timeout_s) {
    if (ReadyFederated(*fleet->fed, 1) >= c.rs) {
      ready_s = SecondsSince(start);
      break;
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
  return {{"members", c.scale_members},
          {"replicasets", c.rs},
          {"create_failures", failed.load()},
          {"created_s", created_s},
          {"local_replicasets", static_cast<int64_t>((*watcher)->names())},
          {"converged_s", converged_s},
          {"all_ready_s", ready_s},
          {"server_rss_mib_idle", rss_idle},
          {"server_rss_mib_created", rss_created},
          {"server_rss_mib_converged", rss_converged},
          {"server_rss_mib_end", RssMiB(server)},
          {"server_rss_mib_peak", RssMiB(server, "VmHWM")}};
}

// Local spec.replicas and running pods of "web" over `members`.
std::pair<int64_t, int64_t> Placed(const std::vector<client::Client*>& members) {
  int64_t spec = 0, running = 0;
  for (client::Client* m : members) {
    auto rs = m->Get(kReplicaSets, "bench", "web");
    if (rs.ok()) spec += GetInt(*GetObject(*rs, "spec"), "replicas").value_or(0);
    client::ListOptions opts;
    opts.label_selector = "app=web";
    auto pods = m->List(kPods, "bench", opts);
    if (!pods.ok()) continue;
    for (const json::object& p : pods->items) {
      const json::value* phase = Find(p, "status.phase");
      running += phase != nullptr && phase->is_string() && phase->get_string() == "Running" &&
                 Find(p, "metadata.deletionTimestamp") == nullptr;
    }
  }
  return {spec, running};
}

json::object Failover(const Config& c) {
  std::string dir = c.work_dir + "/failover";
  std::filesystem::create_directories(dir);
  auto server = StartServer(c.flotilla, dir + "/server", {});
  if (!server.ok()) return {{"error", server.status().ToString()}};
  auto fed = ClientFor(server->kubeconfigs[0]);
  if (!fed.ok()) return {{"error", fed.status().ToString()}};
  std::vector<Process> members;
  std::vector<std::unique_ptr<client::Client>> clients;
  std::map<std::string, std::string> joins;
  for (int i = 1; i <= 3; ++i) {
    std::string name = "f-" + std::to_string(i);
    auto m = StartMembers(c.flotilla, dir + "/" + name, {"--name", name, "--nodes", "1"}, 1);
    if (!m.ok()) return {{"error", m.status().ToString()}};
    auto client = ClientFor(m->kubeconfigs[0]);
    if (!client.ok()) return {{"error", client.status().ToString()}};
    if (Status s = EnsureNamespace(**client, "bench"); !s.ok()) return {{"error", s.ToString()}};
    joins[name] = m->kubeconfigs[0];
    members.push_back(std::move(*m));
    clients.push_back(std::move(*client));
  }
  if (Status s = EnsureNamespace(**fed, "bench"); !s.ok()) return {{"error", s.ToString()}};
  if (Status s = JoinAndWaitReady(**fed, joins, std::chrono::seconds(c.timeout_s)); !s.ok()) {
    return {{"error", s.ToString()}};
  }
  std::vector<client::Client*> all{clients[0].get(), clients[1].get(), clients[2].get()};
  std::vector<client::Client*> rest{clients[0].get(), clients[1].get()};
  auto created = (*fed)->Create(kReplicaSets, "bench", ReplicaSet("web", 30, ""));
  if (!created.ok()) return {{"error", created.status().ToString()}};
  Steady::time_point start = Steady::now();
  while (Placed(all).second < 30 && SecondsSince(start) < c.timeout_s) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  double all_running_s = SecondsSince(start);

  pid_t lost = members[2].child->pid();
  kill(lost, SIGSTOP);
  Steady::time_point stopped = Steady::now();
  double not_ready_s = -1, replanned_s = -1, running_s = -1;
  while (running_s < 0 && SecondsSince(stopped) < c.timeout_s) {
    if (not_ready_s < 0 && ClusterReady(**fed, "f-3") == "False") {
      not_ready_s = SecondsSince(stopped);
    }
    auto [spec, running] = Placed(rest);
    if (replanned_s < 0 && spec >= 30) replanned_s = SecondsSince(stopped);
    if (running >= 30) running_s = SecondsSince(stopped);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  kill(lost, SIGCONT);
  return {{"replicas", 30},
          {"initial_all_running_s", all_running_s},
          {"not_ready_s", not_ready_s},
          {"replanned_s", replanned_s},
          {"all_running_elsewhere_s", running_s}};
}

int Run(Config c) {
  InitLogging("error");
  bool temporary = c.work_dir.empty();  // removed at the end; a given one is kept
  if (temporary) {
    char tmpl[] = "/tmp/federation-bench-XXXXXX";
    c.work_dir = mkdtemp(tmpl);
  }
  json::object out;
  for (const std::string& phase : c.phases) {
    if (phase == "latency") {
      json::array runs;
      for (int n : c.latency_members) {
        runs.push_back(Latency(c, n));
        std::cerr << json::serialize(runs.back()) << std::endl;
      }
      out["propagation"] = std::move(runs);
    } else if (phase == "configmaps") {
      json::array runs;
      for (int n : c.latency_members) {
        runs.push_back(ConfigMapLatency(c, n));
        std::cerr << json::serialize(runs.back()) << std::endl;
      }
      out["configmap_propagation"] = std::move(runs);
    } else if (phase == "scale") {
      out["scale"] = Scale(c);
      std::cerr << json::serialize(out["scale"]) << std::endl;
    } else if (phase == "failover") {
      out["failover"] = Failover(c);
    } else {
      std::cerr << "unknown phase " << phase << "\n";
      return 2;
    }
  }
  std::cout << json::serialize(out) << std::endl;
  if (temporary) std::filesystem::remove_all(c.work_dir);
  return 0;
}

}  // namespace
}  // namespace flotilla::bench

int main(int argc, char** argv) {
  flotilla::bench::Config c;
  c.flotilla = flotilla::bench::FlotillaOfThisBuild();
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--flotilla") {
      c.flotilla = next();
    } else if (a == "--work-dir") {
      c.work_dir = next();
    } else if (a == "--phases") {
      c.phases = flotilla::bench::SplitCommas(next());
    } else if (a == "--latency-members") {
      c.latency_members.clear();
      for (const auto& n : flotilla::bench::SplitCommas(next())) {
        c.latency_members.push_back(std::stoi(n));
      }
    } else if (a == "--samples") {
      c.samples = std::stoi(next());
    } else if (a == "--gap-ms") {
      c.gap_ms = std::stoi(next());
    } else if (a == "--configmap-rate") {
      c.configmap_rate = std::stod(next());
    } else if (a == "--rs") {
      c.rs = std::stoi(next());
    } else if (a == "--scale-members") {
      c.scale_members = std::stoi(next());
    } else if (a == "--timeout-s") {
      c.timeout_s = std::stoi(next());
    } else {
      std::cerr << "usage: federation_bench [--flotilla PATH] [--work-dir DIR] [--phases "
                   "latency,configmaps,scale,failover] [--latency-members 10,100] [--samples N] "
                   "[--gap-ms MS] [--configmap-rate R] [--rs N] "
                   "[--scale-members N] [--timeout-s S]\n";
      return 2;
    }
  }
  return flotilla::bench::Run(c);
}
