// Rollout benchmark: federated Deployments rolled out over the real
// `flotilla server` and `flotilla member` processes (docs/benchmarks.md,
// "Federated Deployments").
//
// 1. One rollout, for --members (3,10) member clusters in one member
//    process: a Deployment of 2 replicas per cluster (maxSurge 1,
//    maxUnavailable 0) is created and rolled out; then its image changes,
//    and the time until the federation reports it rolled out (what `kubectl
//    rollout status` waits for) is taken. A watch on every member's
//    Deployments records when each cluster got the new template and when
//    its rollout finished: per-cluster time, and the federation's own
//    overhead between clusters (one finishing, the next one starting).
//    The peer: the same 2-replica Deployment rolled out on one member
//    directly, without the federation.
// 2. Many at once: --deployments (100) federated Deployments of one replica
//    per cluster over --many-members (10) members; all change image at
//    once; the time until every one is rolled out, and the server's RSS.
//
// Prints one JSON object. Wall-clock time is what is measured.
//
// Usage: rollout_bench [--flotilla PATH] [--phases one,many] [--members 3,10]
//                      [--deployments 100] [--many-members 10] [--timeout-s 600]
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "base/log.h"
#include "base/mutex.h"
#include "bench/federation_bench.h"

namespace flotilla::bench {
namespace {

struct Config {
  std::string flotilla;
  std::string work_dir;
  std::vector<std::string> phases{"one", "many"};
  std::vector<int> members{3, 10};
  int deployments = 100;
  int many_members = 10;
  int timeout_s = 600;
};

std::string ImageOf(const json::object& d) {
  const json::value* c = Find(d, "spec.template.spec.containers");
  if (c == nullptr || !c->is_array() || c->get_array().empty()) return "";
  return StringAt(c->get_array()[0].as_object(), "image");
}

// Rolled out as `kubectl rollout status` sees it.
bool RolledOut(const json::object& d) {
  int64_t want = IntAt(d, "spec.replicas");
  return IntAt(d, "status.observedGeneration") >= IntAt(d, "metadata.generation") &&
         IntAt(d, "status.updatedReplicas") == want && IntAt(d, "status.replicas") == want &&
         IntAt(d, "status.availableReplicas") == want;
}

// Changes the image of `name` (read, modify, write until it lands).
Status SetImage(client::Client& c, const std::string& name, const std::string& image) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    FLOTILLA_ASSIGN_OR_RETURN(json::object d, c.Get(kDeployments, "bench", name));
    d["spec"]
        .as_object()["template"]
        .as_object()["spec"]
        .as_object()["containers"]
        .as_array()[0]
        .as_object()["image"] = image;
    StatusOr<json::object> updated = c.Update(kDeployments, "bench", d);
    if (updated.ok()) return Status::Ok();
    if (!updated.status().Is(Reason::kConflict)) return updated.status();
  }
  return Status::Conflict("the Deployment kept changing");
}

// Polls until every Deployment in `names` is rolled out on `image`;
// returns the seconds since `start`, -1 after the timeout.
double WaitRolledOut(client::Client& c, const std::vector<std::string>& names,
                     const std::string& image, Steady::time_point start, int timeout_s) {
  while (SecondsSince(start) < timeout_s) {
    auto list = c.List(kDeployments, "bench", {});
    size_t done = 0;
    if (list.ok()) {
      for (const json::object& d : list->items) {
        if (ImageOf(d) == image && RolledOut(d) &&
            std::find(names.begin(), names.end(), StringAt(d, "metadata.name")) != names.end()) {
          ++done;
        }
      }
    }
    if (done == names.size()) return SecondsSince(start);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

// When each member cluster got `image` on its Deployment and when that
// rollout finished, from a watch on every member. Thread-safe.
class ClusterTimes {
 public:
  struct Times {
    std::optional<Steady::time_point> started, done;
  };
  static StatusOr<std::unique_ptr<ClusterTimes>> Start(const std::vector<client::Client*>& members,
                                                       const std::string& image) {
    std::unique_ptr<ClusterTimes> t(new ClusterTimes(members.size()));
    client::WatchOptions opts;
    opts.allow_bookmarks = false;
    for (size_t i = 0; i < members.size(); ++i) {
      ClusterTimes* self = t.get();
      FLOTILLA_ASSIGN_OR_RETURN(auto watch, members[i]->StartWatch(
                                                kDeployments, "bench", opts,
                                                [self, i, image](const client::WatchEvent& e) {
                                                  if (ImageOf(e.object) != image) return;
                                                  Steady::time_point now = Steady::now();
                                                  MutexLock lock(self->mu_);
                                                  Times& times = self->times_[i];
                                                  if (!times.started) times.started = now;
                                                  if (!times.done && RolledOut(e.object))
                                                    times.done = now;
                                                },
                                                [](const Status&) {}));
      t->watches_.push_back(std::move(watch));
    }
    return t;
  }
  ~ClusterTimes() {
    for (auto& w : watches_) w->Stop();
  }
  std::vector<Times> Get() const {
    MutexLock lock(mu_);
    return times_;
  }

 private:
  explicit ClusterTimes(size_t members) : times_(members) {}
  mutable Mutex mu_;
  std::vector<Times> times_ GUARDED_BY(mu_);  // by member
  std::vector<std::unique_ptr<client::Watch>> watches_;
};

double Ms(Steady::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// The peer: a 2-replica Deployment rolled out on one member directly.
double SingleClusterRollout(client::Client& member, int timeout_s) {
  if (!member.Create(kDeployments, "bench", Deployment("peer", 2, "nginx:1")).ok()) return -1;
  if (WaitRolledOut(member, {"peer"}, "nginx:1", Steady::now(), timeout_s) < 0) return -1;
  Steady::time_point start = Steady::now();
  if (!SetImage(member, "peer", "nginx:2").ok()) return -1;
  return WaitRolledOut(member, {"peer"}, "nginx:2", start, timeout_s);
}

json::object OneRollout(const Config& c, int members) {
  std::string dir = c.work_dir + "/one-" + std::to_string(members);
  auto fleet =
      StartFleet(c.flotilla, dir, members, {"--nodes", "1", "--node-pods", "1000"}, c.timeout_s);
  if (!fleet.ok()) return {{"error", fleet.status().ToString()}};
  client::Client& fed = *fleet->fed;
  if (!fed.Create(kDeployments, "bench", Deployment("web", 2 * members, "nginx:1")).ok()) {
    return {{"error", "create"}};
  }
  if (WaitRolledOut(fed, {"web"}, "nginx:1", Steady::now(), c.timeout_s) < 0) {
    return {{"error", "first rollout timed out"}};
  }
  auto times = ClusterTimes::Start(fleet->Members(), "nginx:2");
  if (!times.ok()) return {{"error", times.status().ToString()}};
  Steady::time_point start = Steady::now();
  if (Status s = SetImage(fed, "web", "nginx:2"); !s.ok()) return {{"error", s.ToString()}};
  double total_s = WaitRolledOut(fed, {"web"}, "nginx:2", start, c.timeout_s);
  std::vector<ClusterTimes::Times> t = (*times)->Get();
  std::sort(t.begin(), t.end(), [](const auto& a, const auto& b) { return a.started < b.started; });
  double per_cluster_sum = 0, per_cluster_max = 0, gap_sum = 0, gap_max = 0;
  int complete = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (!t[i].started || !t[i].done) continue;
    ++complete;
    double took = Ms(*t[i].done - *t[i].started);
    per_cluster_sum += took;
    per_cluster_max = std::max(per_cluster_max, took);
    if (i > 0 && t[i - 1].done) {
      double gap = Ms(*t[i].started - *t[i - 1].done);
      gap_sum += gap;
      gap_max = std::max(gap_max, gap);
    }
  }
  json::object out{{"members", members},
                   {"replicas", 2 * members},
                   {"rollout_s", total_s},
                   {"clusters_timed", complete},
                   {"per_cluster_ms_mean", complete ? per_cluster_sum / complete : -1},
                   {"per_cluster_ms_max", per_cluster_max},
                   {"between_clusters_ms_mean", complete > 1 ? gap_sum / (complete - 1) : -1},
                   {"between_clusters_ms_max", gap_max}};
  if (!t.empty() && t.front().started)
    out["first_cluster_after_ms"] = Ms(*t.front().started - start);
  if (!t.empty() && t.back().done && total_s >= 0) {
    out["status_after_last_cluster_ms"] = total_s * 1e3 - Ms(*t.back().done - start);
  }
  out["peer_single_cluster_rollout_s"] =
      SingleClusterRollout(*fleet->member_clients[0], c.timeout_s);
  return out;
}

json::object ManyRollouts(const Config& c) {
  std::string dir = c.work_dir + "/many";
  auto fleet = StartFleet(c.flotilla, dir, c.many_members,
                          {"--nodes", "1", "--node-pods", std::to_string(4 * c.deployments + 100)},
                          c.timeout_s);
  if (!fleet.ok()) return {{"error", fleet.status().ToString()}};
  client::Client& fed = *fleet->fed;
  pid_t server = fleet->server.child->pid();
  std::vector<std::string> names;
  for (int i = 0; i < c.deployments; ++i) names.push_back("d-" + std::to_string(i));
  auto each = [&](const std::function<Status(const std::string&)>& fn) {
    std::atomic<size_t> next{0};
    std::atomic<int> failed{0};
    std::vector<std::thread> writers;
    for (int w = 0; w < 8; ++w) {
      writers.emplace_back([&] {
        for (size_t i = next++; i < names.size(); i = next++) failed += fn(names[i]).ok() ? 0 : 1;
      });
    }
    for (auto& t : writers) t.join();
    return failed.load();
  };
  Steady::time_point created = Steady::now();
  int create_failures = each([&](const std::string& name) {
    return fed.Create(kDeployments, "bench", Deployment(name, c.many_members, "nginx:1")).status();
  });
  double first_rollout_s = WaitRolledOut(fed, names, "nginx:1", created, c.timeout_s);
  double rss_before = RssMiB(server);
  Steady::time_point start = Steady::now();
  int update_failures =
      each([&](const std::string& name) { return SetImage(fed, name, "nginx:2"); });
  double rollout_s = WaitRolledOut(fed, names, "nginx:2", start, c.timeout_s);
  return {{"members", c.many_members},
          {"deployments", c.deployments},
          {"replicas_each", c.many_members},
          {"create_failures", create_failures},
          {"update_failures", update_failures},
          {"created_and_rolled_out_s", first_rollout_s},
          {"rollout_s", rollout_s},
          {"server_rss_mib_before", rss_before},
          {"server_rss_mib_after", RssMiB(server)},
          {"server_rss_mib_peak", RssMiB(server, "VmHWM")}};
}

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

int Run(Config c) {
  InitLogging("error");
  char tmpl[] = "/tmp/rollout-bench-XXXXXX";
  c.work_dir = mkdtemp(tmpl);
  json::object out;
  for (const std::string& phase : c.phases) {
    if (phase == "one") {
      json::array runs;
      for (int n : c.members) {
        runs.push_back(OneRollout(c, n));
        std::cerr << json::serialize(runs.back()) << std::endl;
      }
      out["one_rollout"] = std::move(runs);
    } else if (phase == "many") {
      out["many_rollouts"] = ManyRollouts(c);
      std::cerr << json::serialize(out["many_rollouts"]) << std::endl;
    } else {
      std::cerr << "unknown phase " << phase << "\n";
      return 2;
    }
  }
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
      std::cerr << "usage: rollout_bench [--flotilla PATH] [--phases one,many] [--members 3,10] "
                   "[--deployments N] [--many-members N] [--timeout-s S]\n";
      return 2;
    }
    std::string v = argv[++i];
    if (a == "--flotilla") {
      c.flotilla = v;
    } else if (a == "--phases") {
      c.phases = flotilla::bench::SplitCommas(v);
    } else if (a == "--members") {
      c.members.clear();
      for (const std::string& n : flotilla::bench::SplitCommas(v))
        c.members.push_back(std::stoi(n));
    } else if (a == "--deployments") {
      c.deployments = std::stoi(v);
    } else if (a == "--many-members") {
      c.many_members = std::stoi(v);
    } else if (a == "--timeout-s") {
      c.timeout_s = std::stoi(v);
    } else {
      std::cerr << "unknown flag " << a << "\n";
      return 2;
    }
  }
  return flotilla::bench::Run(c);
}
