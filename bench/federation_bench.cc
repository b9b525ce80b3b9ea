// Federation benchmark: the real `flotilla server` (the federation) and
// `flotilla member` processes, driven over HTTPS with the flotilla REST
// client, as a user and kubectl would drive them.
//
// 1. Propagation latency, for --latency-members (10,100): members in one
//    `flotilla member --clusters N` process, all joined; --samples federated
//    ReplicaSets of N replicas (one per member, rebalance true) created one
//    after the other; for each, the time from sending the create to the
//    moment its local ReplicaSet has been seen (watch event) in every member.
//    p50, p99, max, the same to the first member it appeared in and to the
//    create's return, the three slowest samples broken down so, and the CPU
//    time the federation and the members' process used per sample. --gap-ms
//    pauses between samples, so that a sample does not share the machine
//    with the previous one's pods starting. With the phase `configmaps`:
//    --samples ConfigMaps written at --configmap-rate a second whatever the
//    previous ones did (the sync controller copies them to every member),
//    the same figures.
// 2. Scale: --rs federated ReplicaSets of one replica each over
//    --scale-members members, created by 8 writers; the time until a local
//    ReplicaSet exists for every one of them (converged), the time until the
//    federation reports every one ready (status.readyReplicas 1), and the
//    server's RSS (now and peak).
// 2b. Custom (phase `custom`): the same as Scale with --rs objects of a
//    custom kind (a CRD made on the federation, and an interpreter
//    customization that gives each one replica, so each goes to one
//    member): the time for the CRD to reach every member, and for every
//    object to have its member copy; the server's RSS.
// 2c. Policies (phase `policies`): 1,000 ClusterPropagationPolicies, each
//    placing one team's ReplicaSets in one member, then --rs ReplicaSets
//    (teams round-robin): the time until every one has its local copy and
//    the server's CPU for it; then one policy moves its team to another
//    member: the time until those moved, until the server is idle again
//    (it re-checks every object), and the CPU; the server's RSS.
// 3. Failover with the server's default settings: three member processes,
//    30 replicas (default preferences); one member is stopped (SIGSTOP); the
//    times until its Cluster is NotReady, until the other two's local
//    ReplicaSets hold all 30 replicas and until 30 pods run there.
// 4. Clusters: --clusters (1000) clusters in member processes of
//    --clusters-per-process (100), started together and joined by 8 joiners;
//    per cluster the time from its join to its Ready condition, and from the
//    first join to the last Ready; the federation's and the members' CPU
//    over --idle-s (60) seconds from 10 s after all are Ready; --cluster-samples (30)
//    ConfigMaps written at --cluster-rate (1) a second, timed to every
//    cluster as in `configmaps`; the server's threads and memory.
// 5. Jobs (phase `jobs`): a federated batch/v1 Job of --job-completions
//    (10,000) completions, --job-parallelism (1,000) at once, pods that run
//    1 s, divided over --scale-members members: the time from its create to
//    Complete (status.succeeded), the server's CPU and RSS (peak). Then a
//    lost share: three member processes, a Job of 300 completions whose pods
//    never finish (30 at once, 100 per member); one member stopped
//    (SIGSTOP): the times until its Cluster is NotReady and until its
//    unfinished completions are queued on the other two (the Job's ledger:
//    docs/federation.md, "A lost cluster").
// 6. Proxy (phase `proxy`): --samples GETs of one member ConfigMap directly
//    and through the federation's cluster proxy, interleaved by hundreds:
//    p50 and p99 of each, GETs/s of 8 clients each way, and the
//    federation's CPU per proxied GET.
// 6b. Agents (phase `agents`): --agent-clusters (100) members joined
//    directly and as many connected by `flotilla agent` processes, the same
//    ConfigMaps timed to each set, the federation's memory per member and
//    per tunnel, the agents' memory and CPU, proxied GETs either way.
// 7. Protocols (phase `protocols`): HTTP/2 against HTTP/1.1 on the
//    federation's API, the REST client either way, 8 and 64 threads:
//    GETs and creates per second, p50, p99, the server's new descriptors.
// 8. Cold start (phase `coldstart`): --cold (30,000) Deployments of one
//    replica and as many ConfigMaps they use, placed by team policies over
//    --scale-members members, written while the federation runs only its
//    cluster controller; the federation restarted with every controller and
//    timed from its start until every one has its member copy; its CPU and
//    peak RSS.
// 9. Large members (phase `large`): --large-members (10) members of
//    --large-nodes (5,000) nodes each (their Leases lasting
//    --large-lease-seconds, 40), a process each at nice 10, with --large-pods
//    (100,000) replicas of --large-rs (100) federated ReplicaSets spread
//    over them: the time until all are ready, the federation's CPU, RSS and
//    descriptors idle, and, with the last member stopped, the time until
//    its replicas are placed and ready in the others.
//
// Prints one JSON object; docs/benchmarks.md ("Federation") says how the
// published figures were taken. Wall-clock time is what is measured here.
//
// Usage: federation_bench [--flotilla PATH]
//                         [--phases
//                         latency,configmaps,scale,custom,policies,failover,clusters,jobs,proxy,
//                         protocols,agents,coldstart,large]
//                         [--agent-clusters 100] [--agents-named-first true|false]
//                         [--latency-members 10,100] [--samples 100] [--gap-ms 0]
//                         [--configmap-rate 4]
//                         [--rs 10000] [--scale-members 10] [--timeout-s 600]
//                         [--clusters 1000] [--clusters-per-process 100] [--idle-s 60]
//                         [--cluster-samples 30] [--cluster-rate 1]
//                         [--job-completions 10000] [--job-parallelism 1000]
//                         [--cold 30000]
//                         [--large-members 10] [--large-nodes 5000] [--large-rs 100]
//                         [--large-pods 100000] [--large-lease-seconds 40]
//                         [--server-args FLAG,...]  (the clusters phase's server)
#include "bench/federation_bench.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <sstream>
#include <thread>

#include "base/descriptors.h"
#include "base/log.h"
#include "base/mutex.h"
#include "bench/proc_stats.h"
#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "federation/cluster/join.h"
#include "federation/sync/interpreted.h"
#include "runtime/parallel.h"

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
  int clusters = 1000;
  int clusters_per_process = 100;
  int agent_clusters = 100;
  bool agents_named_first = true;
  int idle_s = 60;
  int cluster_samples = 30;
  double cluster_rate = 1;
  int job_completions = 10000;
  int job_parallelism = 1000;
  int cold = 30000;
  int large_members = 10;
  int large_nodes = 5000;
  int large_rs = 100;
  int large_pods = 100000;
  int large_lease_seconds = 40;  // the members' nodes' Lease duration (renewed every quarter)
  // Extra flags of the clusters phase's server (--member-http2=false).
  std::vector<std::string> server_args;
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

double TotalCpuSeconds(const std::vector<pid_t>& pids) {
  double sum = 0;
  for (pid_t p : pids) sum += CpuSeconds(p);
  return sum;
}

long long TotalThreads(const std::vector<pid_t>& pids) {
  long long sum = 0;
  for (pid_t p : pids) sum += StatusField(p, "Threads");
  return sum;
}

// The samples of one propagation run, and the CPU the federation and the
// members' processes spent meanwhile.
class PropagationFigures {
 public:
  PropagationFigures(pid_t server, std::vector<pid_t> members)
      : server_pid_(server),
        members_pids_(std::move(members)),
        server_cpu_(CpuSeconds(server_pid_)),
        members_cpu_(TotalCpuSeconds(members_pids_)) {}
  explicit PropagationFigures(const Fleet& fleet)
      : PropagationFigures(fleet.server.child->pid(), {fleet.members.child->pid()}) {}

  // A sample sent at `sent`, whose create returned at `created`.
  void Add(Steady::time_point sent, Steady::time_point created,
           const LocalCopyWatcher::Arrival& at) {
    auto ms = [&](Steady::time_point t) {
      return std::chrono::duration<double, std::milli>(t - sent).count();
    };
    samples_.push_back({samples_.size(), ms(created), ms(at.first), ms(at.last)});
  }
  void Timeout() { ++timeouts_; }

  // The figures of `samples` sent to `members`.
  json::object Report(int members, int samples) {
    double server_cpu = CpuSeconds(server_pid_) - server_cpu_;
    double members_cpu = TotalCpuSeconds(members_pids_) - members_cpu_;
    auto sorted = [&](double Sample::*field) {
      std::vector<double> v;
      for (const Sample& s : samples_) v.push_back(s.*field);
      std::sort(v.begin(), v.end());
      return v;
    };
    std::vector<double> ms = sorted(&Sample::last_ms), first_ms = sorted(&Sample::first_ms),
                        create_ms = sorted(&Sample::create_ms);
    // The three slowest samples, each broken down: a late first member
    // means the fan-out started late, a late create a slow federated write.
    std::vector<Sample> by_last = samples_;
    std::sort(by_last.begin(), by_last.end(),
              [](const Sample& a, const Sample& b) { return a.last_ms > b.last_ms; });
    json::array slowest;
    for (size_t i = 0; i < std::min<size_t>(3, by_last.size()); ++i) {
      const Sample& s = by_last[i];
      slowest.push_back({{"sample", static_cast<int64_t>(s.index)},
                         {"create_ms", s.create_ms},
                         {"first_member_ms", s.first_ms},
                         {"last_member_ms", s.last_ms}});
    }
    // Every sample's last member, in the order sent: a trend over the run
    // (later samples slower) shows here and not in the percentiles.
    json::array last_ms;
    for (const Sample& s : samples_) last_ms.push_back(std::round(s.last_ms));
    return {{"members", members},
            {"samples", static_cast<int64_t>(samples_.size())},
            {"timeouts", timeouts_},
            {"p50_ms", Percentile(ms, 0.50)},
            {"p99_ms", Percentile(ms, 0.99)},
            {"max_ms", ms.empty() ? -1.0 : ms.back()},
            {"first_member_p50_ms", Percentile(first_ms, 0.50)},
            {"first_member_p99_ms", Percentile(first_ms, 0.99)},
            {"create_p50_ms", Percentile(create_ms, 0.50)},
            {"create_p99_ms", Percentile(create_ms, 0.99)},
            {"slowest", std::move(slowest)},
            {"last_member_ms_in_order", std::move(last_ms)},
            {"server_cpu_ms_per_sample", server_cpu * 1e3 / std::max(1, samples)},
            {"members_cpu_ms_per_sample", members_cpu * 1e3 / std::max(1, samples)},
            {"server_rss_mib", RssMiB(server_pid_)},
            {"server_threads", StatusField(server_pid_, "Threads")},
            {"members_threads", TotalThreads(members_pids_)}};
  }

 private:
  const pid_t server_pid_;
  const std::vector<pid_t> members_pids_;
  const double server_cpu_, members_cpu_;
  // Times from sending a sample: its create's return, its first member
  // copy, its last.
  struct Sample {
    size_t index;
    double create_ms, first_ms, last_ms;
  };
  std::vector<Sample> samples_;  // in the order sent
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
    Steady::time_point created_at = Steady::now();
    auto at = (*watcher)->WaitFor(name, members, std::chrono::seconds(30));
    if (at) {
      figures.Add(sent, created_at, *at);
    } else {
      figures.Timeout();
    }
  }
  json::object out = figures.Report(members, c.samples);
  out["gap_ms"] = c.gap_ms;
  out["broken_watches"] = (*watcher)->broken_watches();
  return out;
}

// Writes `samples` federated ConfigMaps into "bench" at `rate` a second,
// whatever the previous ones did (the sync controller copies them to every
// member), then records the time from each create to its copy in all
// `members`.
Status TimeConfigMaps(client::Client& fed, LocalCopyWatcher& watcher, int members, int samples,
                      double rate, PropagationFigures& figures) {
  const auto interval = std::chrono::duration_cast<Steady::duration>(
      std::chrono::duration<double>(1.0 / std::max(0.01, rate)));
  std::vector<Steady::time_point> sent, created;
  Steady::time_point start = Steady::now();
  for (int i = 0; i < samples; ++i) {
    std::this_thread::sleep_until(start + i * interval);
    sent.push_back(Steady::now());
    json::object cm{{"apiVersion", "v1"},
                    {"kind", "ConfigMap"},
                    {"metadata", {{"name", "cm-" + std::to_string(i)}}},
                    {"data", {{"key", "value " + std::to_string(i)}}}};
    FLOTILLA_RETURN_IF_ERROR(fed.Create(kConfigMaps, "bench", cm).status());
    created.push_back(Steady::now());
  }
  for (int i = 0; i < samples; ++i) {
    auto at = watcher.WaitFor("cm-" + std::to_string(i), members, std::chrono::seconds(30));
    if (at) {
      figures.Add(sent[i], created[i], *at);
    } else {
      figures.Timeout();
    }
  }
  return Status::Ok();
}

json::object ConfigMapLatency(const Config& c, int members) {
  std::string dir = c.work_dir + "/configmaps-" + std::to_string(members);
  auto fleet = StartFleet(c.flotilla, dir, members, {"--nodes", "1"}, c.timeout_s);
  if (!fleet.ok()) return {{"error", fleet.status().ToString()}};
  auto watcher = LocalCopyWatcher::Start(fleet->Members(), kConfigMaps);
  if (!watcher.ok()) return {{"error", watcher.status().ToString()}};
  PropagationFigures figures(*fleet);
  if (Status s =
          TimeConfigMaps(*fleet->fed, **watcher, members, c.samples, c.configmap_rate, figures);
      !s.ok()) {
    return {{"error", s.ToString()}};
  }
  json::object out = figures.Report(members, c.samples);
  out["rate_per_s"] = c.configmap_rate;
  out["broken_watches"] = (*watcher)->broken_watches();
  return out;
}

// Calls `create` for 0..n-1 from 8 writer threads; how many returned false.
int CreateByWriters(int n, const std::function<bool(int)>& create) {
  std::atomic<int> next{0}, failed{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < 8; ++w) {
    writers.emplace_back([&] {
      for (int i = next++; i < n; i = next++) {
        if (!create(i)) ++failed;
      }
    });
  }
  for (auto& t : writers) t.join();
  return failed.load();
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
  int failed = CreateByWriters(c.rs, [&](int i) {
    return fleet->fed->Create(kReplicaSets, "bench", ReplicaSet("rs-" + std::to_string(i), 1, ""))
        .ok();
  });
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
          {"create_failures", failed},
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

const client::ResourceRef kWidgets{"bench.example.com", "v1", "widgets", true};

// The CRD of the custom phase, and the interpreter customization that gives
// its objects replicas (divided like the ReplicaSets of the scale phase).
constexpr char kWidgetCrd[] = R"({"apiVersion":"apiextensions.k8s.io/v1",
  "kind":"CustomResourceDefinition","metadata":{"name":"widgets.bench.example.com"},
  "spec":{"group":"bench.example.com","scope":"Namespaced",
    "names":{"plural":"widgets","singular":"widget","kind":"Widget"},
    "versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
      "schema":{"openAPIV3Schema":{"type":"object","properties":{
        "spec":{"type":"object","properties":{"replicas":{"type":"integer","minimum":0},
                                             "size":{"type":"integer"},
                                             "color":{"type":"string"}}},
        "status":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}]}})";
constexpr char kWidgetCustomization[] = R"({"apiVersion":"config.karmada.io/v1alpha1",
  "kind":"ResourceInterpreterCustomization","metadata":{"name":"widgets"},
  "spec":{"target":{"apiVersion":"bench.example.com/v1","kind":"Widget"},
    "customizations":{
      "replicaResource":{"luaScript":"function GetReplicas(obj) return obj.spec.replicas, nil end"},
      "replicaRevision":{"luaScript":
        "function ReviseReplica(obj, n) obj.spec.replicas = n return obj end"}}}})";

// Custom objects at scale: c.rs Widgets of one replica each over
// c.scale_members members, divided by the interpreter (one member each),
// created by 8 writers; the time until every one has its member copy, and
// the server's RSS. The same shape as Scale, for the same-run comparison.
json::object Custom(const Config& c) {
  std::string dir = c.work_dir + "/custom";
  auto fleet = StartFleet(c.flotilla, dir, c.scale_members, {"--nodes", "1"}, c.timeout_s);
  if (!fleet.ok()) return {{"error", fleet.status().ToString()}};
  if (Status s =
          fleet->fed
              ->Create(client::kCustomResourceDefinitions, "", json::parse(kWidgetCrd).as_object())
              .status();
      !s.ok()) {
    return {{"error", s.ToString()}};
  }
  if (Status s = fleet->fed
                     ->Create(federation::kResourceInterpreterCustomizations, "",
                              json::parse(kWidgetCustomization).as_object())
                     .status();
      !s.ok()) {
    return {{"error", s.ToString()}};
  }
  // Every member serves the kind before the objects come.
  Steady::time_point crd_start = Steady::now();
  for (client::Client* m : fleet->Members()) {
    while (!m->List(kWidgets, "bench", {}).ok()) {
      if (SecondsSince(crd_start) > c.timeout_s)
        return {{"error", "the CRD never reached a member"}};
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  double crd_s = SecondsSince(crd_start);
  auto watcher = LocalCopyWatcher::Start(fleet->Members(), kWidgets);
  if (!watcher.ok()) return {{"error", watcher.status().ToString()}};
  pid_t server = fleet->server.child->pid();
  double rss_idle = RssMiB(server);

  Steady::time_point start = Steady::now();
  int failed = CreateByWriters(c.rs, [&](int i) {
    json::object widget{{"apiVersion", "bench.example.com/v1"},
                        {"kind", "Widget"},
                        {"metadata", {{"name", "widget-" + std::to_string(i)}}},
                        {"spec", {{"replicas", 1}, {"size", i}, {"color", "blue"}}}};
    return fleet->fed->Create(kWidgets, "bench", widget).ok();
  });
  double created_s = SecondsSince(start);
  auto last =
      (*watcher)->WaitForNames(static_cast<size_t>(c.rs), std::chrono::seconds(c.timeout_s));
  double converged_s = last ? std::chrono::duration<double>(*last - start).count() : -1;
  return {{"members", c.scale_members},
          {"widgets", c.rs},
          {"crd_to_every_member_s", crd_s},
          {"create_failures", failed},
          {"created_s", created_s},
          {"member_copies", static_cast<int64_t>((*watcher)->names())},
          {"converged_s", converged_s},
          {"server_rss_mib_idle", rss_idle},
          {"server_rss_mib_converged", RssMiB(server)},
          {"server_rss_mib_peak", RssMiB(server, "VmHWM")}};
}

const client::ResourceRef kClusterPropagationPolicies{"policy.karmada.io", "v1alpha1",
                                                      "clusterpropagationpolicies", false};

// ClusterPropagationPolicy `name`: the objects of `kinds` (apiVersion and
// kind) labelled team=`team` go to member `member` only.
json::object TeamPolicy(const std::string& name, const std::string& team, const std::string& member,
                        const std::vector<std::pair<std::string, std::string>>& kinds) {
  json::array selectors;
  for (const auto& [api_version, kind] : kinds) {
    selectors.push_back(json::object{{"apiVersion", api_version},
                                     {"kind", kind},
                                     {"labelSelector", {{"matchLabels", {{"team", team}}}}}});
  }
  return {{"apiVersion", "policy.karmada.io/v1alpha1"},
          {"kind", "ClusterPropagationPolicy"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"resourceSelectors", std::move(selectors)},
            {"placement",
             {{"clusterAffinity", {{"clusterNames", json::array{json::string(member)}}}}}}}}};
}

// The policies phase's team-<i>: its ReplicaSets (team=t<i>) go to `member`.
json::object ReplicaSetTeamPolicy(int i, const std::string& member) {
  return TeamPolicy("team-" + std::to_string(i), "t" + std::to_string(i), member,
                    {{"apps/v1", "ReplicaSet"}});
}

// Over `idle_s` seconds of nothing asked: the server's and the members'
// CPU, then the server's RSS, threads and descriptors and the members'
// threads and RSS, into `out`.
void MeasureIdle(int idle_s, pid_t server, const std::vector<pid_t>& members, json::object& out) {
  double server_cpu = CpuSeconds(server), members_cpu = TotalCpuSeconds(members);
  std::this_thread::sleep_for(std::chrono::seconds(idle_s));
  out["idle_s"] = idle_s;
  out["server_idle_cpu_percent"] = (CpuSeconds(server) - server_cpu) * 100 / idle_s;
  out["members_idle_cpu_percent"] = (TotalCpuSeconds(members) - members_cpu) * 100 / idle_s;
  out["server_rss_mib_idle"] = RssMiB(server);
  out["server_threads_idle"] = StatusField(server, "Threads");
  out["server_descriptors_idle"] = OpenDescriptors(server);
  out["members_threads_idle"] = TotalThreads(members);
  double members_rss = 0;
  for (pid_t p : members) members_rss += RssMiB(p);
  out["members_rss_mib"] = members_rss;
}

// Waits until the server's CPU use falls under 5% of a core over a second:
// the work a change started is done. Returns the seconds from `start`, or
// -1 after `timeout_s`.
double UntilIdle(pid_t server, Steady::time_point start, int timeout_s) {
  while (SecondsSince(start) < timeout_s) {
    double before = CpuSeconds(server);
    std::this_thread::sleep_for(std::chrono::seconds(1));
    if (CpuSeconds(server) - before < 0.05) return SecondsSince(start) - 1;
  }
  return -1;
}

// Policies at scale (issue 39): kPolicies ClusterPropagationPolicies, each
// placing the ReplicaSets of one team label in one member; then c.rs
// ReplicaSets of one replica, teams round-robin, created by 8 writers: the
// time until every one has its local copy, with the server's CPU and RSS.
// Then one policy changes its cluster (every object is checked again, as
// on any policy change): the time until its ReplicaSets are in the new
// member, until the server is idle again, and the CPU that took.
json::object Policies(const Config& c) {
  constexpr int kPolicies = 1000;
  std::string dir = c.work_dir + "/policies";
  int per_member = c.rs + 100;
  auto fleet = StartFleet(c.flotilla, dir, c.scale_members,
                          {"--nodes", "1", "--node-pods", std::to_string(per_member)}, c.timeout_s);
  if (!fleet.ok()) return {{"error", fleet.status().ToString()}};
  auto member = [&](int i) { return "m-" + std::to_string(i % c.scale_members + 1); };
  pid_t server = fleet->server.child->pid();
  double rss_idle = RssMiB(server);
  Steady::time_point policies_start = Steady::now();
  int policy_failures = CreateByWriters(kPolicies, [&](int i) {
    return fleet->fed->Create(kClusterPropagationPolicies, "", ReplicaSetTeamPolicy(i, member(i)))
        .ok();
  });
  double policies_s = SecondsSince(policies_start);
  // The federation knows the last policy once a probe of its team lands in
  // its member (informers deliver in order).
  auto team_rs = [&](const std::string& name, int team) {
    json::object rs = ReplicaSet(name, 1, "");
    rs["metadata"].as_object()["labels"] = json::object{{"team", "t" + std::to_string(team)}};
    return rs;
  };
  if (!fleet->fed->Create(kReplicaSets, "bench", team_rs("probe", kPolicies - 1)).ok()) {
    return {{"error", "probe not created"}};
  }
  client::Client* probe_member = fleet->member_clients[(kPolicies - 1) % c.scale_members].get();
  while (!probe_member->Get(kReplicaSets, "bench", "probe").ok()) {
    if (SecondsSince(policies_start) > c.timeout_s) return {{"error", "probe never placed"}};
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto watcher = LocalCopyWatcher::Start(fleet->Members());
  if (!watcher.ok()) return {{"error", watcher.status().ToString()}};
  double rss_policies = RssMiB(server);
  double cpu_before = CpuSeconds(server);
  Steady::time_point start = Steady::now();
  int failed = CreateByWriters(c.rs, [&](int i) {
    return fleet->fed
        ->Create(kReplicaSets, "bench", team_rs("rs-" + std::to_string(i), i % kPolicies))
        .ok();
  });
  double created_s = SecondsSince(start);
  // The probe is seen too.
  auto last =
      (*watcher)->WaitForNames(static_cast<size_t>(c.rs) + 1, std::chrono::seconds(c.timeout_s));
  double converged_s = last ? std::chrono::duration<double>(*last - start).count() : -1;
  double idle_s = UntilIdle(server, start, c.timeout_s);
  double place_cpu = CpuSeconds(server) - cpu_before;
  double rss_converged = RssMiB(server);
  // Every ReplicaSet in its team's member.
  int misplaced = 0;
  for (int i = 0; i < c.rs; i += std::max(1, c.rs / 200)) {  // a sample of 200
    misplaced += !fleet->member_clients[(i % kPolicies) % c.scale_members]
                      ->Get(kReplicaSets, "bench", "rs-" + std::to_string(i))
                      .ok();
  }

  // One policy moves its team to another member.
  std::string to = member(1);
  json::object changed = ReplicaSetTeamPolicy(0, to);
  cpu_before = CpuSeconds(server);
  Steady::time_point change_start = Steady::now();
  Status patched = fleet->fed
                       ->Patch(kClusterPropagationPolicies, "", "team-0", client::PatchType::kMerge,
                               json::serialize(json::object{{"spec", changed["spec"]}}))
                       .status();
  if (!patched.ok()) return {{"error", patched.ToString()}};
  client::Client* target = fleet->member_clients[1 % c.scale_members].get();
  double moved_s = -1;
  while (SecondsSince(change_start) < c.timeout_s) {
    bool all = true;
    for (int i = 0; i < c.rs && all; i += kPolicies) {
      all = target->Get(kReplicaSets, "bench", "rs-" + std::to_string(i)).ok();
    }
    if (all) {
      moved_s = SecondsSince(change_start);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  double replace_idle_s = UntilIdle(server, change_start, c.timeout_s);
  double replace_cpu = CpuSeconds(server) - cpu_before;
  return {{"members", c.scale_members},
          {"policies", kPolicies},
          {"replicasets", c.rs},
          {"policy_create_failures", policy_failures},
          {"policies_created_s", policies_s},
          {"create_failures", failed},
          {"created_s", created_s},
          {"local_replicasets", static_cast<int64_t>((*watcher)->names())},
          {"converged_s", converged_s},
          {"idle_after_s", idle_s},
          {"place_server_cpu_s", place_cpu},
          {"misplaced_of_200_sampled", misplaced},
          {"one_policy_changed_moved_s", moved_s},
          {"one_policy_changed_idle_s", replace_idle_s},
          {"one_policy_changed_server_cpu_s", replace_cpu},
          {"server_rss_mib_idle", rss_idle},
          {"server_rss_mib_policies", rss_policies},
          {"server_rss_mib_converged", rss_converged},
          {"server_rss_mib_peak", RssMiB(server, "VmHWM")}};
}

// Cold start (Karmada v1.17's dependency distribution test): c.cold objects
// of each kind, Deployment web-<i> of one replica whose pod takes its
// environment from ConfigMap cfg-<i>, both labelled with one of
// c.scale_members teams, each team placed in one member by a
// ClusterPropagationPolicy. They are written while the federation runs its
// cluster controller only; then the federation is stopped and started again
// with every controller, and timed from that start until every Deployment
// and ConfigMap has its member copy; with the server's CPU and peak RSS.
json::object ColdStart(const Config& c) {
  std::string dir = c.work_dir + "/coldstart";
  int per_member = c.cold / c.scale_members + 100;
  auto fleet = StartFleet(c.flotilla, dir, c.scale_members,
                          {"--nodes", "1", "--node-pods", std::to_string(per_member)}, c.timeout_s,
                          {"--controllers=cluster"});
  if (!fleet.ok()) return {{"error", fleet.status().ToString()}};
  auto member = [&](int i) { return "m-" + std::to_string(i % c.scale_members + 1); };
  for (int t = 0; t < c.scale_members; ++t) {
    if (Status s =
            fleet->fed
                ->Create(kClusterPropagationPolicies, "",
                         TeamPolicy("cold-" + std::to_string(t), "c" + std::to_string(t), member(t),
                                    {{"apps/v1", "Deployment"}, {"v1", "ConfigMap"}}))
                .status();
        !s.ok()) {
      return {{"error", s.ToString()}};
    }
  }
  auto labels = [&](int i) {
    return json::object{{"app", "web-" + std::to_string(i)},
                        {"team", "c" + std::to_string(i % c.scale_members)}};
  };
  Steady::time_point write_start = Steady::now();
  int failed = CreateByWriters(2 * c.cold, [&](int n) {
    int i = n / 2;
    std::string id = std::to_string(i);
    if (n % 2 == 0) {
      json::object cm{{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata", {{"name", "cfg-" + id}, {"labels", labels(i)}}},
                      {"data", {{"GREETING", "hello from " + id}, {"MODE", "cold"}}}};
      return fleet->fed->Create(kConfigMaps, "bench", cm).ok();
    }
    json::object selector{{"app", "web-" + id}};
    json::object container{{"name", "app"},
                           {"image", "nginx:1.27"},
                           {"envFrom", json::array{{{"configMapRef", {{"name", "cfg-" + id}}}}}}};
    json::object d{
        {"apiVersion", "apps/v1"},
        {"kind", "Deployment"},
        {"metadata", {{"name", "web-" + id}, {"labels", labels(i)}}},
        {"spec",
         {{"replicas", 1},
          {"selector", {{"matchLabels", selector}}},
          {"template",
           {{"metadata", {{"labels", selector}}},
            {"spec",
             {{"terminationGracePeriodSeconds", 0}, {"containers", json::array{container}}}}}}}}};
    return fleet->fed->Create(kDeployments, "bench", d).ok();
  });
  double written_s = SecondsSince(write_start);

  auto deployments = LocalCopyWatcher::Start(fleet->Members(), kDeployments);
  if (!deployments.ok()) return {{"error", deployments.status().ToString()}};
  auto configmaps = LocalCopyWatcher::Start(fleet->Members(), kConfigMaps);
  if (!configmaps.ok()) return {{"error", configmaps.status().ToString()}};
  fleet->fed.reset();
  fleet->server.child->Stop();

  Steady::time_point start = Steady::now();
  auto server = StartServer(c.flotilla, dir + "/server", {});
  if (!server.ok()) return {{"error", server.status().ToString()}};
  double ready_s = SecondsSince(start);
  pid_t pid = server->child->pid();
  auto timeout = std::chrono::seconds(c.timeout_s);
  auto last_deployment = (*deployments)->WaitForNames(static_cast<size_t>(c.cold), timeout);
  auto last_configmap = (*configmaps)->WaitForNames(static_cast<size_t>(c.cold), timeout);
  auto since = [&](const std::optional<Steady::time_point>& t) {
    return t ? std::chrono::duration<double>(*t - start).count() : -1.0;
  };
  double converged_s = last_deployment && last_configmap
                           ? std::max(since(last_deployment), since(last_configmap))
                           : -1;
  double cpu_s = CpuSeconds(pid);
  double idle_s = UntilIdle(pid, start, c.timeout_s);
  // Each in its team's member, with the ConfigMap it uses beside it.
  int misplaced = 0;
  for (int i = 0; i < c.cold; i += std::max(1, c.cold / 200)) {  // a sample of 200
    client::Client* m = fleet->member_clients[i % c.scale_members].get();
    misplaced += !m->Get(kDeployments, "bench", "web-" + std::to_string(i)).ok() ||
                 !m->Get(kConfigMaps, "bench", "cfg-" + std::to_string(i)).ok();
  }
  json::object out{{"members", c.scale_members},
                   {"deployments", c.cold},
                   {"configmaps", c.cold},
                   {"create_failures", failed},
                   {"written_s", written_s},
                   {"server_ready_s", ready_s},
                   {"member_deployments", static_cast<int64_t>((*deployments)->names())},
                   {"member_configmaps", static_cast<int64_t>((*configmaps)->names())},
                   {"deployments_converged_s", since(last_deployment)},
                   {"configmaps_converged_s", since(last_configmap)},
                   {"converged_s", converged_s},
                   {"server_cpu_s_converged", cpu_s},
                   {"idle_after_s", idle_s},
                   {"misplaced_of_200_sampled", misplaced},
                   {"server_rss_mib_converged", RssMiB(pid)},
                   {"server_rss_mib_peak", RssMiB(pid, "VmHWM")}};
  server->child->Stop();
  return out;
}

// When each Cluster of the federation was first seen Ready (a watch on
// clusters). Thread-safe.
class ReadyClusters {
 public:
  static StatusOr<std::unique_ptr<ReadyClusters>> Start(client::Client& fed) {
    std::unique_ptr<ReadyClusters> r(new ReadyClusters());
    ReadyClusters* self = r.get();
    client::WatchOptions opts;
    opts.allow_bookmarks = false;
    FLOTILLA_ASSIGN_OR_RETURN(
        r->watch_, fed.StartWatch(
                       kClusters, "", opts,
                       [self](const client::WatchEvent& e) {
                         if (ReadyStatus(e.object) != "True") return;
                         self->Ready(std::string(
                             GetString(*GetObject(e.object, "metadata"), "name").value_or("")));
                       },
                       [](const Status&) {}));
    return r;
  }
  ~ReadyClusters() { watch_->Stop(); }

  // Waits until `count` clusters are Ready; false after `timeout`.
  bool WaitFor(size_t count, std::chrono::seconds timeout) {
    MutexLock lock(mu_);
    return cv_.WaitFor(lock, timeout, [&]() REQUIRES(mu_) { return ready_.size() >= count; });
  }
  std::map<std::string, Steady::time_point> ready() const {
    MutexLock lock(mu_);
    return ready_;
  }

 private:
  ReadyClusters() = default;
  void Ready(const std::string& name) {
    Steady::time_point now = Steady::now();
    {
      MutexLock lock(mu_);
      ready_.emplace(name, now);  // the first time only
    }
    cv_.NotifyAll();
  }

  mutable Mutex mu_;
  CondVar cv_;
  std::map<std::string, Steady::time_point> ready_ GUARDED_BY(mu_);
  std::unique_ptr<client::Watch> watch_;
};

// runtime::ParallelFor over calls that may fail; the first error.
Status ParallelDo(int n, int threads, const std::function<Status(int)>& f) {
  Mutex mu;
  Status first = Status::Ok();
  runtime::ParallelFor(n, threads, [&](size_t i) {
    Status s = f(static_cast<int>(i));
    MutexLock lock(mu);
    if (!s.ok() && first.ok()) first = std::move(s);
  });
  return first;
}

// Starts `processes` member processes of `per_process` clusters each
// (p<P>-1.. in process P) and waits for them in parallel; their kubeconfigs
// by cluster name.
StatusOr<std::vector<Process>> StartMemberProcesses(const Config& c, const std::string& dir,
                                                    int processes, int per_process,
                                                    std::map<std::string, std::string>& joins) {
  std::vector<Process> out;
  for (int p = 0; p < processes; ++p) {
    std::string name = "p" + std::to_string(p + 1);
    FLOTILLA_ASSIGN_OR_RETURN(
        Process started,
        LaunchMembers(c.flotilla, dir + "/" + name,
                      {"--clusters", std::to_string(per_process), "--name", name, "--nodes", "1"}));
    out.push_back(std::move(started));
  }
  FLOTILLA_RETURN_IF_ERROR(ParallelDo(processes, processes, [&](int p) {
    return AwaitMembers(out[p], dir + "/p" + std::to_string(p + 1), per_process);
  }));
  for (int p = 0; p < processes; ++p) {
    for (int i = 0; i < per_process; ++i) {
      joins["p" + std::to_string(p + 1) + "-" + std::to_string(i + 1)] = out[p].kubeconfigs[i];
    }
  }
  return out;
}

// Many clusters: c.clusters in member processes of c.clusters_per_process,
// joined by 8 joiners (`flotilla join` as a library call); per cluster the
// time from its join to its Ready condition; the federation's and the
// members' CPU while idle for c.idle_s (health probes are most of what the
// federation does then); c.cluster_samples ConfigMaps at c.cluster_rate
// timed to every cluster; the server's threads and memory.
json::object Clusters(const Config& c) {
  // Children inherit it: a federation of 1,000 members holds a connection
  // per watch of each member.
  uint64_t descriptors = RaiseDescriptorLimit(1 << 20);
  std::string dir = c.work_dir + "/clusters";
  std::filesystem::create_directories(dir);
  auto server = StartServer(c.flotilla, dir + "/server", c.server_args);
  if (!server.ok()) return {{"error", server.status().ToString()}};
  pid_t server_pid = server->child->pid();
  auto fed = ClientFor(server->kubeconfigs[0]);
  if (!fed.ok()) return {{"error", fed.status().ToString()}};
  if (Status s = EnsureNamespace(**fed, "bench"); !s.ok()) return {{"error", s.ToString()}};
  int per_process = std::max(1, c.clusters_per_process);
  int processes = (c.clusters + per_process - 1) / per_process;
  std::map<std::string, std::string> kubeconfigs;
  Steady::time_point start = Steady::now();
  auto members = StartMemberProcesses(c, dir, processes, per_process, kubeconfigs);
  if (!members.ok()) return {{"error", members.status().ToString()}};
  double members_started_s = SecondsSince(start);
  std::vector<pid_t> member_pids;
  for (const Process& p : *members) member_pids.push_back(p.child->pid());
  std::vector<std::pair<std::string, std::string>> clusters(kubeconfigs.begin(), kubeconfigs.end());
  int n = static_cast<int>(clusters.size());
  std::vector<std::unique_ptr<client::Client>> member_clients(n);
  if (Status s = ParallelDo(n, 8,
                            [&](int i) {
                              FLOTILLA_ASSIGN_OR_RETURN(member_clients[i],
                                                        ClientFor(clusters[i].second));
                              return EnsureNamespace(*member_clients[i], "bench");
                            });
      !s.ok()) {
    return {{"error", s.ToString()}};
  }
  double rss_before_join = RssMiB(server_pid);

  auto ready = ReadyClusters::Start(**fed);
  if (!ready.ok()) return {{"error", ready.status().ToString()}};
  std::vector<Steady::time_point> joined(n);
  Steady::time_point join_start = Steady::now();
  if (Status s =
          ParallelDo(n, 8,
                     [&](int i) {
                       federation::cluster::JoinOptions opts;
                       opts.name = clusters[i].first;
                       client::KubeconfigLoadOptions load;
                       load.explicit_path = clusters[i].second;
                       FLOTILLA_ASSIGN_OR_RETURN(opts.member, client::LoadRestConfig(load));
                       FLOTILLA_RETURN_IF_ERROR(federation::cluster::Join(**fed, opts).status());
                       joined[i] = Steady::now();
                       return Status::Ok();
                     });
      !s.ok()) {
    return {{"error", s.ToString()}};
  }
  double joins_s = SecondsSince(join_start);
  bool all_ready = (*ready)->WaitFor(n, std::chrono::seconds(c.timeout_s));
  std::vector<double> join_to_ready_s;
  Steady::time_point last_ready = join_start;
  std::map<std::string, Steady::time_point> at = (*ready)->ready();
  for (int i = 0; i < n; ++i) {
    auto it = at.find(clusters[i].first);
    if (it == at.end()) continue;
    join_to_ready_s.push_back(std::chrono::duration<double>(it->second - joined[i]).count());
    last_ready = std::max(last_ready, it->second);
  }
  std::sort(join_to_ready_s.begin(), join_to_ready_s.end());
  json::object out{
      {"clusters", n},
      {"member_processes", processes},
      {"descriptor_limit", static_cast<int64_t>(descriptors)},
      {"members_started_s", members_started_s},
      {"joins_s", joins_s},
      {"ready", static_cast<int64_t>(join_to_ready_s.size())},
      {"all_ready", all_ready},
      {"first_join_to_all_ready_s", std::chrono::duration<double>(last_ready - join_start).count()},
      {"join_to_ready_p50_s", Percentile(join_to_ready_s, 0.50)},
      {"join_to_ready_p99_s", Percentile(join_to_ready_s, 0.99)},
      {"join_to_ready_max_s", join_to_ready_s.empty() ? -1.0 : join_to_ready_s.back()},
      {"server_rss_mib_before_join", rss_before_join}};
  if (!all_ready) return out;

  // The last joins' informers list their members meanwhile: settle first.
  std::this_thread::sleep_for(std::chrono::seconds(10));
  MeasureIdle(c.idle_s, server_pid, member_pids, out);

  std::vector<client::Client*> watched;
  for (auto& m : member_clients) watched.push_back(m.get());
  auto watcher = LocalCopyWatcher::Start(watched, kConfigMaps);
  if (!watcher.ok()) return {{"error", watcher.status().ToString()}};
  PropagationFigures figures(server_pid, member_pids);
  if (Status s = TimeConfigMaps(**fed, **watcher, n, c.cluster_samples, c.cluster_rate, figures);
      !s.ok()) {
    out["error"] = s.ToString();
    return out;
  }
  json::object cm = figures.Report(n, c.cluster_samples);
  cm["rate_per_s"] = c.cluster_rate;
  cm["broken_watches"] = (*watcher)->broken_watches();
  out["configmaps"] = std::move(cm);
  out["server_rss_mib_end"] = RssMiB(server_pid);
  out["server_rss_mib_peak"] = RssMiB(server_pid, "VmHWM");
  return out;
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

// A federation server and `count` member processes PREFIX-1..count, each
// one cluster started with `member_args` (one node unless told), all
// joined, namespace "bench" everywhere: one member can be stopped alone.
struct SeparateMembers {
  Process server;
  std::unique_ptr<client::Client> fed;
  std::vector<Process> members;
  std::vector<std::unique_ptr<client::Client>> clients;
};

StatusOr<SeparateMembers> StartSeparateMembers(const Config& c, const std::string& dir,
                                               const std::string& prefix, int count = 3,
                                               const std::vector<std::string>& member_args = {
                                                   "--nodes", "1"}) {
  std::filesystem::create_directories(dir);
  SeparateMembers out;
  FLOTILLA_ASSIGN_OR_RETURN(out.server, StartServer(c.flotilla, dir + "/server", {}));
  FLOTILLA_ASSIGN_OR_RETURN(out.fed, ClientFor(out.server.kubeconfigs[0]));
  std::map<std::string, std::string> joins;
  for (int i = 1; i <= count; ++i) {
    std::string name = prefix + "-" + std::to_string(i);
    std::vector<std::string> args{"--name", name};
    args.insert(args.end(), member_args.begin(), member_args.end());
    FLOTILLA_ASSIGN_OR_RETURN(Process m, StartMembers(c.flotilla, dir + "/" + name, args, 1));
    FLOTILLA_ASSIGN_OR_RETURN(auto client, ClientFor(m.kubeconfigs[0]));
    FLOTILLA_RETURN_IF_ERROR(EnsureNamespace(*client, "bench"));
    joins[name] = m.kubeconfigs[0];
    out.members.push_back(std::move(m));
    out.clients.push_back(std::move(client));
  }
  FLOTILLA_RETURN_IF_ERROR(EnsureNamespace(*out.fed, "bench"));
  FLOTILLA_RETURN_IF_ERROR(JoinAndWaitReady(*out.fed, joins, std::chrono::seconds(c.timeout_s)));
  return out;
}

json::object Failover(const Config& c) {
  auto started = StartSeparateMembers(c, c.work_dir + "/failover", "f");
  if (!started.ok()) return {{"error", started.status().ToString()}};
  std::vector<Process>& members = started->members;
  std::vector<std::unique_ptr<client::Client>>& clients = started->clients;
  std::unique_ptr<client::Client>* fed = &started->fed;
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

// The sums of spec.replicas and status.readyReplicas over the ReplicaSets
// of namespace "bench" in `clients`; -1 for a client that did not answer.
struct ReplicaSums {
  int64_t spec = 0, ready = 0;
};
ReplicaSums SumReplicaSets(const std::vector<client::Client*>& clients) {
  ReplicaSums sums;
  for (client::Client* cl : clients) {
    auto list = cl->List(kReplicaSets, "bench", {});
    if (!list.ok()) return {-1, -1};
    for (const json::object& rs : list->items) {
      sums.spec += GetInt(*GetObject(rs, "spec"), "replicas").value_or(0);
      if (const json::object* status = GetObject(rs, "status")) {
        sums.ready += GetInt(*status, "readyReplicas").value_or(0);
      }
    }
  }
  return sums;
}

// The large phase's member processes' niceness (Large says why).
constexpr int kLargeMemberNice = 10;

// Gives every thread of process `pid` the niceness `nice` (a thread made
// later takes its maker's).
void Renice(pid_t pid, int nice) {
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    pid_t tid = std::atoi(task.path().filename().c_str());
    if (tid > 0) setpriority(PRIO_PROCESS, static_cast<id_t>(tid), nice);
  }
}

// Large members (phase `large`): --large-members (10) member processes of
// one cluster of --large-nodes (5,000) nodes each, joined; --large-rs (100)
// federated ReplicaSets of --large-pods (100,000) replicas in all, with the
// default placement (spread evenly); the time until the federation counts
// them all ready; the federation's CPU and RSS idle after, its peak RSS;
// then the last member stopped (SIGSTOP): the times until its Cluster is
// NotReady, until its replicas are placed in the others (the sum of their
// local ReplicaSets' spec), and until they are ready there.
json::object Large(const Config& c) {
  Steady::time_point members_start = Steady::now();
  auto started = StartSeparateMembers(
      c, c.work_dir + "/large", "l", c.large_members,
      {"--nodes", std::to_string(c.large_nodes), "--node-lease-duration-seconds",
       std::to_string(c.large_lease_seconds)});
  if (!started.ok()) return {{"error", started.status().ToString()}};
  double joined_s = SecondsSince(members_start);
  client::Client& fed = *started->fed;
  std::vector<pid_t> member_pids;
  std::vector<client::Client*> members, rest;
  for (size_t i = 0; i < started->members.size(); ++i) {
    member_pids.push_back(started->members[i].child->pid());
    members.push_back(started->clients[i].get());
    if (i + 1 < started->members.size()) rest.push_back(started->clients[i].get());
    // Clusters of their own elsewhere in truth: on this machine they yield
    // the CPU to the federation, whose probes would otherwise wait behind
    // their work and find them NotReady.
    Renice(member_pids.back(), kLargeMemberNice);
  }
  pid_t server = started->server.child->pid();
  json::object out{{"members", c.large_members},
                   {"members_nice", kLargeMemberNice},
                   {"nodes_per_member", c.large_nodes},
                   {"replicasets", c.large_rs},
                   {"pods", c.large_pods},
                   {"node_lease_duration_seconds", c.large_lease_seconds},
                   {"members_started_and_ready_s", joined_s},
                   {"server_rss_mib_members_ready", RssMiB(server)}};

  Steady::time_point start = Steady::now();
  double server_cpu = CpuSeconds(server), members_cpu = TotalCpuSeconds(member_pids);
  int failed = CreateByWriters(c.large_rs, [&](int i) {
    int64_t replicas = c.large_pods / c.large_rs + (i < c.large_pods % c.large_rs ? 1 : 0);
    return fed.Create(kReplicaSets, "bench", ReplicaSet("web-" + std::to_string(i), replicas, ""))
        .ok();
  });
  out["create_failures"] = failed;
  double ready_s = -1;
  while (SecondsSince(start) < c.timeout_s) {
    if (SumReplicaSets({&fed}).ready >= c.large_pods) {
      ready_s = SecondsSince(start);
      break;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  out["all_ready_s"] = ready_s;
  out["server_cpu_s_to_ready"] = CpuSeconds(server) - server_cpu;
  out["members_cpu_s_to_ready"] = TotalCpuSeconds(member_pids) - members_cpu;
  out["server_idle_after_ready_s"] = UntilIdle(server, Steady::now(), c.timeout_s);

  MeasureIdle(c.idle_s, server, member_pids, out);
  out["server_rss_mib_peak"] = RssMiB(server, "VmHWM");

  ReplicaSums before = SumReplicaSets(rest);
  std::string lost_name = "l-" + std::to_string(c.large_members);
  pid_t lost = member_pids.back();
  kill(lost, SIGSTOP);
  Steady::time_point stopped = Steady::now();
  server_cpu = CpuSeconds(server);
  double not_ready_s = -1, replaced_s = -1, ready_elsewhere_s = -1;
  while (ready_elsewhere_s < 0 && SecondsSince(stopped) < c.timeout_s) {
    if (not_ready_s < 0 && ClusterReady(fed, lost_name) == "False") {
      not_ready_s = SecondsSince(stopped);
    }
    ReplicaSums now = SumReplicaSets(rest);
    if (replaced_s < 0 && now.spec >= c.large_pods) replaced_s = SecondsSince(stopped);
    if (now.ready >= c.large_pods) ready_elsewhere_s = SecondsSince(stopped);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  out["lost_member_replicas"] = c.large_pods - before.spec;
  out["lost_not_ready_s"] = not_ready_s;
  out["lost_replicas_placed_elsewhere_s"] = replaced_s;
  out["lost_replicas_ready_elsewhere_s"] = ready_elsewhere_s;
  out["server_cpu_s_failover"] = CpuSeconds(server) - server_cpu;
  out["server_rss_mib_after_failover"] = RssMiB(server);
  kill(lost, SIGCONT);
  return out;
}

// The cluster proxy (phase `proxy`): GETs of one ConfigMap of a member,
// directly and through /apis/federation/v1beta1/clusters/m-1/proxy,
// interleaved in rounds; latency of one client, then the throughput of
// `kProxyClients` clients, and the federation's CPU per proxied GET.
json::object Proxy(const Config& c) {
  constexpr int kProxyClients = 8;
  auto fleet = StartFleet(c.flotilla, c.work_dir + "/proxy", 1, {"--nodes", "1"}, c.timeout_s);
  if (!fleet.ok()) return {{"error", fleet.status().ToString()}};
  json::object cm{{"apiVersion", "v1"},
                  {"kind", "ConfigMap"},
                  {"metadata", json::object{{"name", "target"}}},
                  {"data", json::object{{"k", std::string(512, 'x')}}}};
  if (auto made = fleet->member_clients[0]->Create(kConfigMaps, "bench", cm); !made.ok()) {
    return {{"error", made.status().ToString()}};
  }
  client::KubeconfigLoadOptions load;
  load.explicit_path = fleet->server.kubeconfigs[0];
  auto config = client::LoadRestConfig(load);
  if (!config.ok()) return {{"error", config.status().ToString()}};
  config->server += "/apis/federation/v1beta1/clusters/m-1/proxy";
  client::RestOptions opts;
  opts.qps = 0;
  opts.max_idle_connections = 64;
  auto proxied = client::NewRestClient(*config, opts);
  if (!proxied.ok()) return {{"error", proxied.status().ToString()}};
  client::Client* direct = fleet->member_clients[0].get();
  auto timed = [](client::Client& cl, std::vector<double>& ms) {
    Steady::time_point t = Steady::now();
    bool ok = cl.Get(kConfigMaps, "bench", "target").ok();
    ms.push_back(SecondsSince(t) * 1000);
    return ok;
  };
  std::vector<double> direct_ms, proxied_ms;
  int errors = 0;
  int rounds = std::max(1, c.samples / 100);
  pid_t fed_pid = fleet->server.child->pid();
  double fed_cpu = 0;
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < 100; ++i) errors += !timed(*direct, direct_ms);
    double before = CpuSeconds(fed_pid);
    for (int i = 0; i < 100; ++i) errors += !timed(**proxied, proxied_ms);
    fed_cpu += CpuSeconds(fed_pid) - before;
  }
  // Throughput: kProxyClients threads for a fixed count each.
  auto throughput = [&](client::Client& cl) {
    std::atomic<int> failed{0};
    int each = std::max(100, c.samples / kProxyClients);
    Steady::time_point t = Steady::now();
    std::vector<std::thread> threads;
    for (int k = 0; k < kProxyClients; ++k) {
      threads.emplace_back([&] {
        for (int i = 0; i < each; ++i) failed += !cl.Get(kConfigMaps, "bench", "target").ok();
      });
    }
    for (auto& th : threads) th.join();
    errors += failed;
    return kProxyClients * each / SecondsSince(t);
  };
  double direct_rps = throughput(*direct);
  double proxied_rps = throughput(**proxied);
  std::sort(direct_ms.begin(), direct_ms.end());
  std::sort(proxied_ms.begin(), proxied_ms.end());
  return {{"gets_each", static_cast<int64_t>(direct_ms.size())},
          {"errors", errors},
          {"direct_p50_ms", Percentile(direct_ms, 0.50)},
          {"direct_p99_ms", Percentile(direct_ms, 0.99)},
          {"proxied_p50_ms", Percentile(proxied_ms, 0.50)},
          {"proxied_p99_ms", Percentile(proxied_ms, 0.99)},
          {"clients", kProxyClients},
          {"direct_gets_per_s", direct_rps},
          {"proxied_gets_per_s", proxied_rps},
          {"federation_cpu_ms_per_proxied_get",
           fed_cpu * 1000 / static_cast<double>(std::max<size_t>(1, proxied_ms.size()))}};
}

// Agents (phase `agents`): --agent-clusters (100) clusters joined directly
// and as many connected by agents (`flotilla agent`, a process each), in
// two member processes, one federation; the same ConfigMaps
// (--cluster-samples at --cluster-rate a second) timed to each set; the
// federation's memory per direct member and per tunnel; the agents' memory
// and CPU idle and under that load; GETs of one member ConfigMap directly,
// through the cluster proxy to a dialled member, and to an agent's.
json::object Agents(const Config& c) {
  RaiseDescriptorLimit(1 << 20);
  int n = std::max(1, c.agent_clusters);
  std::string dir = c.work_dir + "/agents";
  std::filesystem::create_directories(dir);
  auto server = StartServer(c.flotilla, dir + "/server", c.server_args);
  if (!server.ok()) return {{"error", server.status().ToString()}};
  pid_t server_pid = server->child->pid();
  auto fed = ClientFor(server->kubeconfigs[0]);
  if (!fed.ok()) return {{"error", fed.status().ToString()}};
  if (Status s = EnsureNamespace(**fed, "bench"); !s.ok()) return {{"error", s.ToString()}};
  // The federation writes to its members in name order: which set is
  // named first (a-*) is a choice (--agents-named-first).
  const std::string d = c.agents_named_first ? "d" : "a", a = c.agents_named_first ? "a" : "d";
  auto direct = StartMembers(c.flotilla, dir + "/" + d,
                             {"--clusters", std::to_string(n), "--name", d, "--nodes", "1"}, n);
  if (!direct.ok()) return {{"error", direct.status().ToString()}};
  auto hidden = StartMembers(c.flotilla, dir + "/" + a,
                             {"--clusters", std::to_string(n), "--name", a, "--nodes", "1"}, n);
  if (!hidden.ok()) return {{"error", hidden.status().ToString()}};
  std::vector<std::unique_ptr<client::Client>> d_clients(n), a_clients(n);
  if (Status s =
          ParallelDo(n, 8,
                     [&](int i) {
                       FLOTILLA_ASSIGN_OR_RETURN(d_clients[i], ClientFor(direct->kubeconfigs[i]));
                       FLOTILLA_ASSIGN_OR_RETURN(a_clients[i], ClientFor(hidden->kubeconfigs[i]));
                       FLOTILLA_RETURN_IF_ERROR(EnsureNamespace(*d_clients[i], "bench"));
                       return EnsureNamespace(*a_clients[i], "bench");
                     });
      !s.ok()) {
    return {{"error", s.ToString()}};
  }
  auto settled_rss = [&] {
    std::this_thread::sleep_for(std::chrono::seconds(10));
    return RssMiB(server_pid);
  };
  double rss_none = settled_rss();
  std::map<std::string, std::string> joins;
  for (int i = 0; i < n; ++i) joins[d + "-" + std::to_string(i + 1)] = direct->kubeconfigs[i];
  if (Status s = JoinAndWaitReady(**fed, joins, std::chrono::seconds(c.timeout_s)); !s.ok()) {
    return {{"error", s.ToString()}};
  }
  double rss_direct = settled_rss();
  auto ready = ReadyClusters::Start(**fed);
  if (!ready.ok()) return {{"error", ready.status().ToString()}};
  std::vector<std::unique_ptr<ChildProcess>> agents;
  std::vector<pid_t> agent_pids;
  Steady::time_point agents_start = Steady::now();
  for (int i = 0; i < n; ++i) {
    std::string name = a + "-" + std::to_string(i + 1);
    agents.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{c.flotilla, "agent", "--name", name, "--federation-kubeconfig",
                                 server->kubeconfigs[0], "--cluster-kubeconfig",
                                 hidden->kubeconfigs[i], "--data-dir", dir + "/agents"},
        dir + "/agent-" + name + ".log"));
    if (!agents.back()->started()) return {{"error", "cannot start flotilla agent"}};
    agent_pids.push_back(agents.back()->pid());
  }
  if (!(*ready)->WaitFor(2 * n, std::chrono::seconds(c.timeout_s))) {
    return {{"error", "the agents' clusters did not all become Ready"}};
  }
  double agents_ready_s = SecondsSince(agents_start);
  double rss_agents = settled_rss();
  double agents_cpu = TotalCpuSeconds(agent_pids), fed_cpu = CpuSeconds(server_pid);
  std::this_thread::sleep_for(std::chrono::seconds(c.idle_s));
  double agents_rss = 0;
  for (pid_t p : agent_pids) agents_rss += RssMiB(p);
  json::object out{{"clusters_each_way", n},
                   {"agents_started_to_all_ready_s", agents_ready_s},
                   {"server_rss_mib_no_members", rss_none},
                   {"server_rss_mib_per_direct_member", (rss_direct - rss_none) / n},
                   {"server_rss_mib_per_agent_member", (rss_agents - rss_direct) / n},
                   {"idle_s", c.idle_s},
                   {"server_idle_cpu_percent", (CpuSeconds(server_pid) - fed_cpu) * 100 / c.idle_s},
                   {"agents_idle_cpu_percent_total",
                    (TotalCpuSeconds(agent_pids) - agents_cpu) * 100 / c.idle_s},
                   {"agent_rss_mib_mean", agents_rss / n},
                   {"agent_threads_mean", static_cast<double>(TotalThreads(agent_pids)) / n}};

  // The same ConfigMaps, timed to each set.
  std::vector<client::Client*> d_watched, a_watched;
  for (auto& m : d_clients) d_watched.push_back(m.get());
  for (auto& m : a_clients) a_watched.push_back(m.get());
  auto d_watcher = LocalCopyWatcher::Start(d_watched, kConfigMaps);
  auto a_watcher = LocalCopyWatcher::Start(a_watched, kConfigMaps);
  if (!d_watcher.ok() || !a_watcher.ok()) return {{"error", "watching the members"}};
  PropagationFigures d_figures(server_pid, {direct->child->pid()});
  std::vector<pid_t> a_pids = agent_pids;
  a_pids.push_back(hidden->child->pid());
  PropagationFigures a_figures(server_pid, a_pids);
  agents_cpu = TotalCpuSeconds(agent_pids);
  const auto interval = std::chrono::duration_cast<Steady::duration>(
      std::chrono::duration<double>(1.0 / std::max(0.01, c.cluster_rate)));
  std::vector<Steady::time_point> sent, created;
  Steady::time_point start = Steady::now();
  for (int i = 0; i < c.cluster_samples; ++i) {
    std::this_thread::sleep_until(start + i * interval);
    sent.push_back(Steady::now());
    json::object cm{{"apiVersion", "v1"},
                    {"kind", "ConfigMap"},
                    {"metadata", {{"name", "cm-" + std::to_string(i)}}},
                    {"data", {{"key", "value " + std::to_string(i)}}}};
    if (auto made = (*fed)->Create(kConfigMaps, "bench", cm); !made.ok()) {
      return {{"error", made.status().ToString()}};
    }
    created.push_back(Steady::now());
  }
  for (int i = 0; i < c.cluster_samples; ++i) {
    std::string name = "cm-" + std::to_string(i);
    for (auto [watcher, figures] :
         {std::pair{d_watcher->get(), &d_figures}, std::pair{a_watcher->get(), &a_figures}}) {
      auto at = watcher->WaitFor(name, n, std::chrono::seconds(30));
      if (at) {
        figures->Add(sent[i], created[i], *at);
      } else {
        figures->Timeout();
      }
    }
  }
  double load_s = SecondsSince(start);
  out["agents_cpu_percent_total_under_load"] =
      (TotalCpuSeconds(agent_pids) - agents_cpu) * 100 / load_s;
  out["configmaps_direct"] = d_figures.Report(n, c.cluster_samples);
  out["configmaps_agents"] = a_figures.Report(n, c.cluster_samples);

  // GETs of one member ConfigMap: directly, and through the cluster proxy
  // to a dialled member and to an agent's, interleaved by hundreds.
  json::object cm{{"apiVersion", "v1"},
                  {"kind", "ConfigMap"},
                  {"metadata", json::object{{"name", "target"}}},
                  {"data", json::object{{"k", std::string(512, 'x')}}}};
  (void)d_clients[0]->Create(kConfigMaps, "bench", cm);
  (void)a_clients[0]->Create(kConfigMaps, "bench", cm);
  client::KubeconfigLoadOptions load;
  load.explicit_path = server->kubeconfigs[0];
  auto config = client::LoadRestConfig(load);
  if (!config.ok()) return {{"error", config.status().ToString()}};
  auto proxied_to = [&](const std::string& name) {
    client::RestConfig to = *config;
    to.server += "/apis/federation/v1beta1/clusters/" + name + "/proxy";
    return client::NewRestClient(to, {.qps = 0});
  };
  auto via_d = proxied_to(d + "-1");
  auto via_a = proxied_to(a + "-1");
  if (!via_d.ok() || !via_a.ok()) return {{"error", "the proxy clients"}};
  std::vector<double> direct_ms, proxied_ms, tunnelled_ms;
  int errors = 0;
  auto timed = [&](client::Client& cl, std::vector<double>& ms) {
    Steady::time_point t = Steady::now();
    errors += !cl.Get(kConfigMaps, "bench", "target").ok();
    ms.push_back(SecondsSince(t) * 1000);
  };
  for (int r = 0; r < std::max(1, c.samples / 100); ++r) {
    for (int i = 0; i < 100; ++i) timed(*d_clients[0], direct_ms);
    for (int i = 0; i < 100; ++i) timed(**via_d, proxied_ms);
    for (int i = 0; i < 100; ++i) timed(**via_a, tunnelled_ms);
  }
  for (auto* v : {&direct_ms, &proxied_ms, &tunnelled_ms}) std::sort(v->begin(), v->end());
  out["gets"] = json::object{{"each", static_cast<int64_t>(direct_ms.size())},
                             {"errors", errors},
                             {"direct_p50_ms", Percentile(direct_ms, 0.50)},
                             {"direct_p99_ms", Percentile(direct_ms, 0.99)},
                             {"proxied_dialled_p50_ms", Percentile(proxied_ms, 0.50)},
                             {"proxied_dialled_p99_ms", Percentile(proxied_ms, 0.99)},
                             {"proxied_agent_p50_ms", Percentile(tunnelled_ms, 0.50)},
                             {"proxied_agent_p99_ms", Percentile(tunnelled_ms, 0.99)}};
  return out;
}

// HTTP/2 against HTTP/1.1 on the federation's API, with the same client
// (the REST client, RestOptions::http2 on or off) and the same load: for
// 8 and 64 client threads sharing one client, GETs of one ConfigMap and
// creates of small ones, each protocol in turn, twice; requests/s, p50,
// p99, and the connections the server saw (its descriptors' growth).
json::object Protocols(const Config& c) {
  std::string dir = c.work_dir + "/protocols";
  std::filesystem::create_directories(dir);
  auto server = StartServer(c.flotilla, dir + "/server", {"--controllers=cluster"});
  if (!server.ok()) return {{"error", server.status().ToString()}};
  pid_t pid = server->child->pid();
  client::KubeconfigLoadOptions load;
  load.explicit_path = server->kubeconfigs[0];
  auto config = client::LoadRestConfig(load);
  if (!config.ok()) return {{"error", config.status().ToString()}};
  auto setup = ClientFor(server->kubeconfigs[0]);
  if (!setup.ok()) return {{"error", setup.status().ToString()}};
  if (Status s = EnsureNamespace(**setup, "bench"); !s.ok()) return {{"error", s.ToString()}};
  json::object target{{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata", json::object{{"name", "target"}}},
                      {"data", json::object{{"k", std::string(256, 'x')}}}};
  if (auto made = (*setup)->Create(kConfigMaps, "bench", target); !made.ok()) {
    return {{"error", made.status().ToString()}};
  }
  std::atomic<int64_t> serial{0};
  auto run = [&](bool h2, int threads, bool create) -> json::object {
    client::RestOptions opts;
    opts.qps = 0;
    opts.http2 = h2;
    opts.max_idle_connections = static_cast<size_t>(threads);
    auto cl = client::NewRestClient(*config, opts);
    if (!cl.ok()) return {{"error", cl.status().ToString()}};
    int each = std::max(50, c.samples / threads);
    std::vector<std::vector<double>> ms(threads);
    std::atomic<int> failed{0};
    int64_t fds_before = OpenDescriptors(pid);
    Steady::time_point t = Steady::now();
    std::vector<std::thread> workers;
    for (int k = 0; k < threads; ++k) {
      workers.emplace_back([&, k] {
        for (int i = 0; i < each; ++i) {
          Steady::time_point one = Steady::now();
          bool ok;
          if (create) {
            json::object cm{{"apiVersion", "v1"},
                            {"kind", "ConfigMap"},
                            {"metadata", json::object{{"name", "c" + std::to_string(++serial)}}},
                            {"data", json::object{{"k", "v"}}}};
            ok = (*cl)->Create(kConfigMaps, "bench", cm).ok();
          } else {
            ok = (*cl)->Get(kConfigMaps, "bench", "target").ok();
          }
          ms[k].push_back(SecondsSince(one) * 1000);
          failed += !ok;
        }
      });
    }
    for (auto& w : workers) w.join();
    double seconds = SecondsSince(t);
    int64_t fds_after = OpenDescriptors(pid);
    std::vector<double> all;
    for (auto& v : ms) all.insert(all.end(), v.begin(), v.end());
    std::sort(all.begin(), all.end());
    return {{"protocol", h2 ? "h2" : "http/1.1"},
            {"verb", create ? "create" : "get"},
            {"threads", threads},
            {"requests", static_cast<int64_t>(all.size())},
            {"errors", failed.load()},
            {"per_s", static_cast<double>(all.size()) / seconds},
            {"p50_ms", Percentile(all, 0.50)},
            {"p99_ms", Percentile(all, 0.99)},
            {"server_descriptors_added", fds_after - fds_before}};
  };
  json::array results;
  for (int round = 0; round < 2; ++round) {
    for (bool create : {false, true}) {
      for (int threads : {8, 64}) {
        for (bool h2 : {false, true}) {
          results.push_back(run(h2, threads, create));
          std::cerr << json::serialize(results.back()) << std::endl;
        }
      }
    }
  }
  return {{"runs", std::move(results)}};
}

const client::ResourceRef kBenchJobs{"batch", "v1", "jobs", true};

// A Job of `completions` pods, `parallelism` at once, each running
// `run_for` (the simulation's sim.flotilla.io/run-for) and gone at once
// when deleted.
json::object BatchJob(const std::string& name, int64_t completions, int64_t parallelism,
                      const std::string& run_for) {
  return json::object{
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata", json::object{{"name", name}}},
      {"spec",
       json::object{
           {"completions", completions},
           {"parallelism", parallelism},
           {"template",
            json::object{
                {"metadata",
                 json::object{{"annotations", json::object{{"sim.flotilla.io/run-for", run_for}}}}},
                {"spec", json::object{{"restartPolicy", "Never"},
                                      {"terminationGracePeriodSeconds", 0},
                                      {"containers",
                                       json::array{json::object{{"name", "work"},
                                                                {"image", "busybox:1.36"}}}}}}}}}}};
}

// The federated Job's status.succeeded; -1 when it cannot be read.
int64_t Succeeded(client::Client& fed, const std::string& name) {
  auto job = fed.Get(kBenchJobs, "bench", name);
  if (!job.ok()) return -1;
  const json::value* v = Find(*job, "status.succeeded");
  return v != nullptr && v->is_int64() ? v->get_int64() : 0;
}

json::object Jobs(const Config& c) {
  json::object out;
  {
    std::string dir = c.work_dir + "/jobs";
    int64_t per_member = c.job_parallelism / std::max(1, c.scale_members) + 100;
    auto fleet = StartFleet(
        c.flotilla, dir, c.scale_members,
        {"--nodes", "1", "--node-pods", std::to_string(per_member), "--pod-startup", "200ms"},
        c.timeout_s);
    if (!fleet.ok()) return {{"error", fleet.status().ToString()}};
    pid_t server = fleet->server.child->pid();
    double rss_idle = RssMiB(server);
    double cpu_before = CpuSeconds(server);
    Steady::time_point start = Steady::now();
    auto created = fleet->fed->Create(
        kBenchJobs, "bench", BatchJob("batch", c.job_completions, c.job_parallelism, "1s"));
    if (!created.ok()) return {{"error", created.status().ToString()}};
    double complete_s = -1;
    int64_t succeeded = 0;
    while (SecondsSince(start) < c.timeout_s) {
      succeeded = Succeeded(*fleet->fed, "batch");
      if (succeeded >= c.job_completions) {
        complete_s = SecondsSince(start);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    // What the members' copies say, to check the federation's sum.
    int64_t local_succeeded = 0, local_completions = 0;
    for (client::Client* m : fleet->Members()) {
      auto local = m->Get(kBenchJobs, "bench", "batch");
      if (!local.ok()) continue;
      const json::value* n = Find(*local, "status.succeeded");
      const json::value* want = Find(*local, "spec.completions");
      local_succeeded += n != nullptr && n->is_int64() ? n->get_int64() : 0;
      local_completions += want != nullptr && want->is_int64() ? want->get_int64() : 0;
    }
    out = json::object{{"members", c.scale_members},
                       {"completions", c.job_completions},
                       {"local_completions", local_completions},
                       {"local_succeeded", local_succeeded},
                       {"parallelism", c.job_parallelism},
                       {"pod_run_s", 1},
                       {"succeeded", succeeded},
                       {"complete_s", complete_s},
                       {"server_cpu_s", CpuSeconds(server) - cpu_before},
                       {"server_rss_mib_idle", rss_idle},
                       {"server_rss_mib_end", RssMiB(server)},
                       {"server_rss_mib_peak", RssMiB(server, "VmHWM")}};
    std::cerr << json::serialize(out) << std::endl;
  }  // the fleet's processes stop before the next part

  // A lost share: three member processes, one stopped.
  auto started = StartSeparateMembers(c, c.work_dir + "/jobs-lost", "j");
  if (!started.ok()) return {{"error", started.status().ToString()}};
  std::vector<Process>& members = started->members;
  std::unique_ptr<client::Client>* fed = &started->fed;
  if (auto made = (*fed)->Create(kBenchJobs, "bench", BatchJob("long", 300, 30, "1h"));
      !made.ok()) {
    return {{"error", made.status().ToString()}};
  }
  // Every member runs its share.
  auto shares = [&]() -> std::string {
    auto job = (*fed)->Get(kBenchJobs, "bench", "long");
    const json::value* annotations = job.ok() ? Find(*job, "metadata.annotations") : nullptr;
    if (annotations == nullptr || !annotations->is_object()) return "";
    return std::string(
        GetString(annotations->get_object(), "federation.kubernetes.io/job-shares").value_or(""));
  };
  Steady::time_point placed = Steady::now();
  while (SecondsSince(placed) < c.timeout_s) {
    auto ledger = ParseJsonObject(shares());
    if (ledger.ok() && ledger->size() == 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  kill(members[2].child->pid(), SIGSTOP);
  Steady::time_point stopped = Steady::now();
  double not_ready_s = -1, moved_s = -1;
  while (moved_s < 0 && SecondsSince(stopped) < c.timeout_s) {
    if (not_ready_s < 0 && ClusterReady(**fed, "j-3") == "False") {
      not_ready_s = SecondsSince(stopped);
    }
    auto ledger = ParseJsonObject(shares());
    if (ledger.ok()) {
      int64_t queued = 0;
      bool lost = false;
      for (const auto& [cluster, share] : *ledger) {
        if (!share.is_object()) continue;
        if (cluster == "j-3") {
          lost = GetBool(share.get_object(), "lost").value_or(false);
        } else {
          queued += GetInt(share.get_object(), "queued").value_or(0);
        }
      }
      if (lost && queued >= 100) moved_s = SecondsSince(stopped);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  kill(members[2].child->pid(), SIGCONT);
  out["lost_share"] = json::object{{"completions", 300},
                                   {"lost_cluster_share", 100},
                                   {"not_ready_s", not_ready_s},
                                   {"share_moved_s", moved_s}};
  return out;
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
    } else if (phase == "custom") {
      out["custom"] = Custom(c);
    } else if (phase == "policies") {
      out["policies"] = Policies(c);
      std::cerr << json::serialize(out["policies"]) << std::endl;
    } else if (phase == "failover") {
      out["failover"] = Failover(c);
    } else if (phase == "jobs") {
      out["jobs"] = Jobs(c);
    } else if (phase == "proxy") {
      out["proxy"] = Proxy(c);
      std::cerr << json::serialize(out["proxy"]) << std::endl;
    } else if (phase == "agents") {
      out["agents"] = Agents(c);
      std::cerr << json::serialize(out["agents"]) << std::endl;
    } else if (phase == "protocols") {
      out["protocols"] = Protocols(c);
    } else if (phase == "coldstart") {
      out["coldstart"] = ColdStart(c);
      std::cerr << json::serialize(out["coldstart"]) << std::endl;
    } else if (phase == "large") {
      out["large"] = Large(c);
      std::cerr << json::serialize(out["large"]) << std::endl;
    } else if (phase == "clusters") {
      out["clusters"] = Clusters(c);
      std::cerr << json::serialize(out["clusters"]) << std::endl;
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
    } else if (a == "--agents-named-first") {
      c.agents_named_first = next() == "true";
    } else if (a == "--agent-clusters") {
      c.agent_clusters = std::stoi(next());
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
    } else if (a == "--clusters") {
      c.clusters = std::stoi(next());
    } else if (a == "--clusters-per-process") {
      c.clusters_per_process = std::stoi(next());
    } else if (a == "--idle-s") {
      c.idle_s = std::stoi(next());
    } else if (a == "--cluster-samples") {
      c.cluster_samples = std::stoi(next());
    } else if (a == "--cluster-rate") {
      c.cluster_rate = std::stod(next());
    } else if (a == "--job-completions") {
      c.job_completions = std::stoi(next());
    } else if (a == "--job-parallelism") {
      c.job_parallelism = std::stoi(next());
    } else if (a == "--cold") {
      c.cold = std::stoi(next());
    } else if (a == "--large-members") {
      c.large_members = std::stoi(next());
    } else if (a == "--large-nodes") {
      c.large_nodes = std::stoi(next());
    } else if (a == "--large-rs") {
      c.large_rs = std::stoi(next());
    } else if (a == "--large-pods") {
      c.large_pods = std::stoi(next());
    } else if (a == "--large-lease-seconds") {
      c.large_lease_seconds = std::stoi(next());
    } else if (a == "--server-args") {
      c.server_args = flotilla::bench::SplitCommas(next());
    } else {
      std::cerr
          << "usage: federation_bench [--flotilla PATH] [--work-dir DIR] [--phases "
             "latency,configmaps,scale,custom,policies,failover,clusters,jobs,proxy,protocols,"
             "agents,coldstart,large] [--cold N] "
             "[--large-members N] [--large-nodes N] [--large-rs N] [--large-pods N] "
             "[--large-lease-seconds N] "
             "[--latency-members 10,100] "
             "[--samples N] [--gap-ms MS] [--configmap-rate R] [--rs N] "
             "[--scale-members N] [--timeout-s S] [--clusters N] "
             "[--clusters-per-process N] [--agent-clusters N] [--agents-named-first B] [--idle-s "
             "S] "
             "[--cluster-samples N] "
             "[--cluster-rate R] [--job-completions N] [--job-parallelism N] "
             "[--server-args FLAG,FLAG]\n";
      return 2;
    }
  }
  return flotilla::bench::Run(c);
}
