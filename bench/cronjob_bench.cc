// CronJobs: how late after its scheduled time a run starts.
//
// 1. Fake clock (--fake-runs, 100): the CronJob controller on an in-process
//    API server and a FakeClock, schedule "* * * * *". For each run the
//    clock is moved past the next schedule time (and the controller's
//    100 ms after it) once the controller is idle; measured is the wall time
//    from that move to the run's Job being readable from the server: the
//    controller's own reaction, with the schedule's arithmetic on the fake
//    clock.
// 2. Real clock (--real-runs, 5): `flotilla server` and --members (3)
//    member clusters in one `flotilla member` process, a federated CronJob
//    "* * * * *" whose Jobs run 1 s; for each run, the delay after its
//    scheduled minute until the federated Job is seen on the federation
//    (a watch) and until its first member copy is seen (polled every 20 ms).
//    A run a minute: five runs take five minutes.
//
// Prints one JSON object with p50/p99/max per figure; docs/benchmarks.md
// ("CronJobs") says how the published figures were taken.
//
// Usage: cronjob_bench [--flotilla PATH] [--fake-runs 100] [--real-runs 5]
//                      [--members 3] [--timeout-s 600]
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <thread>

#include "base/mutex.h"
#include "bench/federation_bench.h"
#include "client/client_test_util.h"
#include "client/resources.h"
#include "cronjob/cronjob_controller.h"
#include "runtime/controller_manager.h"
#include "runtime/shared_informers.h"

namespace flotilla::bench {
namespace {

struct CronConfig {
  std::string flotilla;
  int fake_runs = 100;
  int real_runs = 5;
  int members = 3;
  int timeout_s = 600;
};

// 2023-11-14T22:14:00Z: a whole minute.
constexpr int64_t kStart = 1700000040;

json::object CronJob(const std::string& run_for) {
  StatusOr<json::object> cj = ParseJsonObject(R"({"apiVersion":"batch/v1","kind":"CronJob",
      "metadata":{"name":"tick"},
      "spec":{"schedule":"* * * * *","jobTemplate":{"spec":{"template":{
        "metadata":{"annotations":{"sim.flotilla.io/run-for":")" +
                                              run_for + R"("}},
        "spec":{"restartPolicy":"Never","terminationGracePeriodSeconds":0,
                "containers":[{"name":"work","image":"busybox:1.36"}]}}}}}})");
  return cj.ok() ? *cj : json::object{};
}

// The run's Job name: <cronjob>-<scheduled minutes since the epoch>.
std::string RunName(int64_t epoch_minutes) { return "tick-" + std::to_string(epoch_minutes); }

json::object Percentiles(std::vector<double> ms) {
  if (ms.empty()) return {{"runs", 0}};
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) {
    size_t i = static_cast<size_t>(q * static_cast<double>(ms.size() - 1) + 0.5);
    return ms[std::min(i, ms.size() - 1)];
  };
  return {{"runs", static_cast<int64_t>(ms.size())},
          {"p50_ms", at(0.50)},
          {"p99_ms", at(0.99)},
          {"max_ms", ms.back()}};
}

json::object FakeClockRuns(const CronConfig& c) {
  FakeClock clock{TimePoint(std::chrono::seconds(kStart))};
  client::testing::TestCluster cluster({}, &clock);
  std::unique_ptr<client::Client> api = cluster.InProcess();
  runtime::ControllerManager manager(clock);
  runtime::SharedInformers informers(*api, clock, manager);
  cronjob::CronJobController controller(*api, clock, manager, informers);
  if (Status s = manager.Start(); !s.ok()) return {{"error", s.ToString()}};
  json::object cj = CronJob("1s");
  // Every run a separate Job kept: nothing finishes them here.
  cj["spec"].as_object()["concurrencyPolicy"] = "Allow";
  cj["spec"].as_object()["successfulJobsHistoryLimit"] = 0;
  if (auto made = api->Create(client::kCronJobs, "default", cj); !made.ok()) {
    manager.Stop();
    return {{"error", made.status().ToString()}};
  }
  runtime::Controller* cronjobs = manager.Find("cronjob-controller");
  auto idle = [&] {
    runtime::WorkQueueStats q = cronjobs->Metrics().queue;
    return q.depth == 0 && q.processing == 0;
  };
  std::vector<double> ms;
  for (int run = 1; run <= c.fake_runs; ++run) {
    Steady::time_point wait = Steady::now();
    while (!idle() && SecondsSince(wait) < 10) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    // Past the schedule time and the controller's look 100 ms after it.
    clock.Advance(run == 1 ? Duration(std::chrono::milliseconds(60200))
                           : Duration(std::chrono::seconds(60)));
    Steady::time_point moved = Steady::now();
    std::string name = RunName(kStart / 60 + run);
    bool seen = false;
    while (SecondsSince(moved) < 10) {
      if (api->Get(client::kJobs, "default", name).ok()) {
        seen = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (!seen) {
      manager.Stop();
      return {{"error", "run " + std::to_string(run) + ": no Job " + name}};
    }
    ms.push_back(SecondsSince(moved) * 1000);
  }
  manager.Stop();
  json::object out = Percentiles(ms);
  out["what"] = "wall ms from the fake clock passing a run's time to its Job stored";
  return out;
}

json::object RealClockRuns(const CronConfig& c) {
  auto fleet = StartFleet(c.flotilla, "/tmp/cronjob-bench-" + std::to_string(getpid()), c.members,
                          {"--nodes", "1", "--pod-startup", "200ms"}, c.timeout_s);
  if (!fleet.ok()) return {{"error", fleet.status().ToString()}};
  // When each federated Job was first seen (a watch of the federation).
  Mutex mu;
  std::map<std::string, std::chrono::system_clock::time_point> fed_seen;
  auto watch = fleet->fed->StartWatch(
      client::kJobs, "bench", {},
      [&](const client::WatchEvent& e) {
        if (e.type != client::WatchEvent::Type::kAdded) return;
        MutexLock lock(mu);
        fed_seen.emplace(StringAt(e.object, "metadata.name"), std::chrono::system_clock::now());
      },
      [](const Status&) {});
  if (!watch.ok()) return {{"error", watch.status().ToString()}};
  if (auto made = fleet->fed->Create(client::kCronJobs, "bench", CronJob("1s")); !made.ok()) {
    (*watch)->Stop();
    return {{"error", made.status().ToString()}};
  }
  using SystemClock = std::chrono::system_clock;
  // The first scheduled minute after the create, then each minute on.
  int64_t first =
      std::chrono::duration_cast<std::chrono::minutes>(SystemClock::now().time_since_epoch())
          .count() +
      1;
  std::vector<double> fed_ms, member_ms;
  Steady::time_point start = Steady::now();
  for (int run = 0; run < c.real_runs && SecondsSince(start) < c.timeout_s; ++run) {
    int64_t minute = first + run;
    std::string name = RunName(minute);
    SystemClock::time_point due{std::chrono::minutes(minute)};
    bool in_member = false;
    while (!in_member && SecondsSince(start) < c.timeout_s) {
      for (client::Client* m : fleet->Members()) {
        if (m->Get(client::kJobs, "bench", name).ok()) {
          in_member = true;
          break;
        }
      }
      if (!in_member) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!in_member) break;
    member_ms.push_back(
        std::chrono::duration<double, std::milli>(SystemClock::now() - due).count());
    MutexLock lock(mu);
    if (auto it = fed_seen.find(name); it != fed_seen.end()) {
      fed_ms.push_back(std::chrono::duration<double, std::milli>(it->second - due).count());
    }
  }
  (*watch)->Stop();
  return {{"federated_job", Percentiles(fed_ms)},
          {"first_member_copy", Percentiles(member_ms)},
          {"members", c.members}};
}

int Run(const CronConfig& c) {
  json::object out;
  out["fake_clock"] = FakeClockRuns(c);
  std::cerr << json::serialize(out) << std::endl;
  if (c.real_runs > 0) out["real_clock"] = RealClockRuns(c);
  std::cout << json::serialize(out) << std::endl;
  return 0;
}

}  // namespace
}  // namespace flotilla::bench

int main(int argc, char** argv) {
  flotilla::bench::CronConfig c;
  c.flotilla = flotilla::bench::FlotillaOfThisBuild();
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) {
      std::cerr << "usage: cronjob_bench [--flotilla PATH] [--fake-runs 100] [--real-runs 5] "
                   "[--members 3] [--timeout-s 600]\n";
      return 2;
    }
    std::string v = argv[++i];
    if (a == "--flotilla") {
      c.flotilla = v;
    } else if (a == "--fake-runs") {
      c.fake_runs = std::stoi(v);
    } else if (a == "--real-runs") {
      c.real_runs = std::stoi(v);
    } else if (a == "--members") {
      c.members = std::stoi(v);
    } else if (a == "--timeout-s") {
      c.timeout_s = std::stoi(v);
    } else {
      std::cerr << "unknown flag " << a << "\n";
      return 2;
    }
  }
  return flotilla::bench::Run(c);
}
