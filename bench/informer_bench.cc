// Informer benchmark: heap bytes per cached object, how many watch events
// per second an informer absorbs (cache update + handler that enqueues the
// key), how long a relist of the whole cache takes, and work queue
// throughput. The FakeClient feeds the informer in the same process.
// Prints one JSON object; docs/benchmarks.md says how the published figures
// were taken.
//
// Usage: informer_bench [--objects N] [--events N]
#include <malloc.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "base/log.h"
#include "runtime/fake_client.h"
#include "runtime/informer.h"
#include "runtime/work_queue.h"

namespace flotilla::runtime {
namespace {

using Steady = std::chrono::steady_clock;

const client::ResourceRef kConfigMaps{"", "v1", "configmaps", true};

struct Config {
  int objects = 100000;
  int events = 200000;
};

double SecondsSince(Steady::time_point start) {
  return std::chrono::duration<double>(Steady::now() - start).count();
}

size_t HeapInUse() {
  malloc_trim(0);
  return mallinfo2().uordblks;
}

// A ConfigMap of about 500 bytes of JSON: name, namespace, two labels, an
// owner reference and some data, like a small workload object.
json::object Object(int i, int version) {
  std::string name = "cm-" + std::to_string(i);
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata",
           {{"name", name},
            {"namespace", "ns-" + std::to_string(i % 10)},
            {"labels", {{"app", "app-" + std::to_string(i % 100)}, {"tier", "web"}}},
            {"ownerReferences", json::array{{{"apiVersion", "apps/v1"},
                                             {"kind", "ReplicaSet"},
                                             {"name", "rs-" + std::to_string(i % 1000)},
                                             {"uid", "uid-rs-" + std::to_string(i % 1000)}}}}}},
          {"data", {{"version", std::to_string(version)}, {"payload", std::string(200, 'x')}}}};
}

void Fill(FakeClient& client, int n) {
  for (int i = 0; i < n; ++i) {
    if (!client.Create(kConfigMaps, "", Object(i, 0)).ok()) std::abort();
  }
}

void WaitFor(const std::function<bool()>& done) {
  while (!done()) std::this_thread::sleep_for(std::chrono::microseconds(200));
}

// Heap growth from starting an informer on `n` objects, per object.
json::object MeasureMemory(const Config& cfg) {
  FakeClient client(RealClock(), /*history_limit=*/1);
  Fill(client, cfg.objects);
  size_t before = HeapInUse();
  auto informer = std::make_unique<Informer>(client, kConfigMaps, RealClock());
  Steady::time_point start = Steady::now();
  informer->Start();
  informer->WaitForSync();
  double sync_seconds = SecondsSince(start);
  size_t after = HeapInUse();
  json::object out;
  out["objects"] = cfg.objects;
  out["initial_list_and_sync_seconds"] = sync_seconds;
  out["heap_bytes_per_object"] = static_cast<double>(after - before) / cfg.objects;
  out["json_bytes_per_object"] = ToJson(Object(cfg.objects / 2, 0)).size();
  return out;
}

// Events queued in the watch while paused, then released: the time until
// the informer has applied them all.
json::object MeasureEvents(const Config& cfg, bool enqueue) {
  FakeClient client(RealClock(), /*history_limit=*/1);
  int keys = std::min(cfg.objects, 10000);
  Fill(client, keys);
  Informer informer(client, kConfigMaps, RealClock());
  WorkQueue queue(RealClock());
  if (enqueue) {
    auto add = [&queue](const ObjectPtr& o) { queue.Add(ObjectKey(*o)); };
    informer.AddEventHandler({add, [add](const ObjectPtr&, const ObjectPtr& o) { add(o); }, add});
  }
  informer.Start();
  informer.WaitForSync();
  WaitFor([&] { return client.OpenWatches() == 1; });
  client.PauseWatches();
  for (int i = 0; i < cfg.events; ++i) {
    json::object obj = Object(i % keys, i + 1);
    if (!client.Update(kConfigMaps, "", obj).ok()) std::abort();
  }
  uint64_t base = informer.Stats().events;
  Steady::time_point start = Steady::now();
  client.ResumeWatches();
  WaitFor([&] { return informer.Stats().events - base >= static_cast<uint64_t>(cfg.events); });
  double seconds = SecondsSince(start);
  json::object out;
  out["events"] = cfg.events;
  out["seconds"] = seconds;
  out["events_per_second"] = cfg.events / seconds;
  out["queue_depth_after"] = queue.Len();
  return out;
}

// A relist of the whole cache after a 410, with 1% of the objects changed.
json::object MeasureRelist(const Config& cfg) {
  FakeClient client(RealClock(), /*history_limit=*/1);
  Fill(client, cfg.objects);
  Informer informer(client, kConfigMaps, RealClock());
  std::atomic<int> updates = 0;
  informer.AddEventHandler({{}, [&](const ObjectPtr&, const ObjectPtr&) { ++updates; }, {}});
  informer.Start();
  informer.WaitForSync();
  WaitFor([&] { return client.OpenWatches() == 1; });
  client.PauseWatches();
  int changed = cfg.objects / 100;
  for (int i = 0; i < changed; ++i) {
    if (!client.Update(kConfigMaps, "", Object(i * 100, 1)).ok()) std::abort();
  }
  Steady::time_point start = Steady::now();
  client.ExpireWatches();
  client.ResumeWatches();
  WaitFor([&] { return updates == changed; });
  json::object out;
  out["objects"] = cfg.objects;
  out["changed"] = changed;
  out["relist_seconds"] = SecondsSince(start);
  return out;
}

// Keys added by one thread and processed (Get + Done) by `workers`.
json::object MeasureQueue(int workers, int ops) {
  WorkQueue queue(RealClock());
  std::atomic<int> done = 0;
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&] {
      while (auto key = queue.Get()) {
        queue.Done(*key);
        ++done;
      }
    });
  }
  Steady::time_point start = Steady::now();
  for (int i = 0; i < ops; ++i) queue.Add(std::to_string(i));
  WaitFor([&] { return done == ops; });
  double seconds = SecondsSince(start);
  queue.ShutDown();
  for (auto& t : threads) t.join();
  json::object out;
  out["workers"] = workers;
  out["keys_per_second"] = ops / seconds;
  return out;
}

}  // namespace
}  // namespace flotilla::runtime

int main(int argc, char** argv) {
  using namespace flotilla::runtime;
  flotilla::InitLogging("warn");
  Config cfg;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--objects") cfg.objects = std::atoi(argv[i + 1]);
    if (flag == "--events") cfg.events = std::atoi(argv[i + 1]);
  }
  flotilla::json::object out;
  out["memory"] = MeasureMemory(cfg);
  out["events_no_handler"] = MeasureEvents(cfg, false);
  out["events_enqueue_handler"] = MeasureEvents(cfg, true);
  out["relist"] = MeasureRelist(cfg);
  out["work_queue_1_worker"] = MeasureQueue(1, 200000);
  out["work_queue_4_workers"] = MeasureQueue(4, 200000);
  std::cout << flotilla::json::serialize(out) << std::endl;
  return 0;
}
