// Storage benchmark: memory per stored object, gets/s, list of 10k keys,
// reopen time, and creates/s on sqlite with 1, 8 and 64 concurrent writers
// (group commit). Prints one JSON object; docs/benchmarks.md says how the
// published figures were taken.
//
// Usage: storage_bench [--dir DIR] [--objects N] [--seconds S]
// (DIR defaults to a fresh directory under /tmp, removed at the end.)
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "storage/store.h"

namespace flotilla::storage {
namespace {

namespace json = boost::json;
using Clock = std::chrono::steady_clock;

struct Config {
  std::string dir;
  int objects = 100000;
  double seconds = 3;
};

constexpr int kNamespaces = 10;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int64_t RssBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

std::string Key(int i) {
  return "/registry/configmaps/ns-" + std::to_string(i % kNamespaces) + "/cm-" + std::to_string(i);
}

// A ~300-byte JSON object, like a small ConfigMap.
std::string Value(const std::string& key, int64_t revision) {
  std::string v = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + key +
                  R"(","resourceVersion":")" + std::to_string(revision) + R"("},"data":{"k":")";
  v.append(std::max<int64_t>(0, 290 - static_cast<int64_t>(v.size())), 'x');
  return v + "\"}}";
}

Mutation ValueFor(const std::string& key) {
  return [&key](int64_t rev, const std::optional<KeyValue>&) -> StatusOr<Encoded> {
    return Value(key, rev);
  };
}

std::unique_ptr<Store> MustOpen(const std::string& path) {
  auto store = OpenSqliteStore(path);
  if (!store.ok()) {
    std::cerr << "open " << path << ": " << store.status().ToString() << "\n";
    std::exit(1);
  }
  return std::move(store).value();
}

// Creates keys [0, n) from `writers` threads.
void Fill(Store& store, int n, int writers) {
  std::atomic<int> next = 0;
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&] {
      for (int i; (i = next++) < n;) {
        std::string key = Key(i);
        if (!store.Create(key, ValueFor(key)).ok()) std::abort();
      }
    });
  }
  for (auto& t : threads) t.join();
}

json::object MeasureMemoryAndReads(const Config& cfg, const std::string& path) {
  json::object out;
  auto store = MustOpen(path);
  int64_t rss_before = RssBytes();
  auto start = Clock::now();
  Fill(*store, cfg.objects, 64);
  double fill_seconds = SecondsSince(start);
  int64_t rss_after = RssBytes();
  out["objects"] = cfg.objects;
  out["value_bytes"] = Value(Key(0), 1).size();
  out["fill_creates_per_sec_64_writers"] = cfg.objects / fill_seconds;
  out["rss_before_mb"] = rss_before / 1048576.0;
  out["rss_after_mb"] = rss_after / 1048576.0;
  out["bytes_per_object"] = double(rss_after - rss_before) / cfg.objects;

  for (int threads : {1, 2}) {
    std::atomic<int64_t> gets = 0;
    std::atomic<bool> stop = false;
    std::vector<std::thread> readers;
    for (int t = 0; t < threads; ++t) {
      readers.emplace_back([&, t] {
        std::mt19937 rng(t);
        int64_t n = 0;
        for (; !stop; ++n) {
          if (!store->Get(Key(rng() % cfg.objects)).ok()) std::abort();
        }
        gets += n;
      });
    }
    start = Clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(cfg.seconds));
    stop = true;
    for (auto& r : readers) r.join();
    out["gets_per_sec_" + std::to_string(threads) + "_threads"] = gets / SecondsSince(start);
  }

  const std::string prefix = "/registry/configmaps/ns-3/";
  start = Clock::now();
  int lists = 0;
  size_t items = 0;
  for (; SecondsSince(start) < cfg.seconds; ++lists) items = store->List(prefix, {})->items.size();
  out["list_keys"] = items;
  out["list_ms"] = SecondsSince(start) * 1000 / lists;
  start = Clock::now();
  for (ListOptions opts{.limit = 500};;) {
    auto page = store->List(prefix, opts);
    if (!page->more) break;
    opts.start_after = page->items.back().key;
  }
  out["list_paged_500_ms"] = SecondsSince(start) * 1000;

  store.reset();
  malloc_trim(0);  // give the closed store's memory back so the reload is measured alone
  rss_before = RssBytes();
  start = Clock::now();
  store = MustOpen(path);
  out["reopen_ms"] = SecondsSince(start) * 1000;
  out["reopen_bytes_per_object"] = double(RssBytes() - rss_before) / cfg.objects;
  return out;
}

// Creates for cfg.seconds from `writers` threads into a fresh store (sqlite
// at `path`, or the memory store when `path` is empty).
json::object MeasureCreates(const Config& cfg, const std::string& path, int writers) {
  auto store = path.empty() ? NewMemoryStore() : MustOpen(path);
  std::atomic<bool> stop = false;
  std::vector<std::vector<double>> latencies(writers);
  std::vector<std::thread> threads;
  auto start = Clock::now();
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; !stop; ++i) {
        std::string key = "/registry/configmaps/w" + std::to_string(w) + "/" + std::to_string(i);
        auto t0 = Clock::now();
        if (!store->Create(key, ValueFor(key)).ok()) std::abort();
        latencies[w].push_back(SecondsSince(t0) * 1000);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(cfg.seconds));
  stop = true;
  for (auto& t : threads) t.join();
  double elapsed = SecondsSince(start);
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  json::object out;
  out["writers"] = writers;
  out["creates"] = all.size();
  out["creates_per_sec"] = all.size() / elapsed;
  out["latency_p50_ms"] = all[all.size() / 2];
  out["latency_p99_ms"] = all[all.size() * 99 / 100];
  return out;
}

Config ParseArgs(int argc, char** argv) {
  Config cfg;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--dir") cfg.dir = argv[i + 1];
    if (flag == "--objects") cfg.objects = std::atoi(argv[i + 1]);
    if (flag == "--seconds") cfg.seconds = std::atof(argv[i + 1]);
  }
  return cfg;
}

int Main(int argc, char** argv) {
  Config cfg = ParseArgs(argc, argv);
  bool own_dir = cfg.dir.empty();
  if (own_dir) {
    std::string tmpl = "/tmp/storage-bench-XXXXXX";
    if (!mkdtemp(tmpl.data())) return 1;
    cfg.dir = tmpl;
  }
  json::object report;
  report["memory_and_reads"] = MeasureMemoryAndReads(cfg, cfg.dir + "/fill.db");
  json::array creates;
  for (int writers : {1, 8, 64}) {
    creates.push_back(
        MeasureCreates(cfg, cfg.dir + "/creates-" + std::to_string(writers) + ".db", writers));
  }
  report["sqlite_creates"] = std::move(creates);
  report["memory_creates"] = json::array{MeasureCreates(cfg, "", 1), MeasureCreates(cfg, "", 8)};
  std::cout << json::serialize(report) << "\n";
  if (own_dir) std::filesystem::remove_all(cfg.dir);
  return 0;
}

}  // namespace
}  // namespace flotilla::storage

int main(int argc, char** argv) { return flotilla::storage::Main(argc, argv); }
