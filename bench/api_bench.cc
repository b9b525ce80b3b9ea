// API server benchmark: a small HTTPS/1.1 keep-alive load client (Boost.Beast
// over OpenSSL) run against a live `flotilla server`. Measures creates/s and
// gets/s of small ConfigMaps, merge patches/s of node Leases (a kubelet's
// renewal), lists of 1k/2k/10k objects, watch fan-out
// latency to 1,000 watchers and server RSS with N objects stored, and prints
// one JSON object. docs/benchmarks.md says how the published figures were
// taken; scripts/bench-api starts a server and runs this against it.
//
// The request phases use one blocking keep-alive connection per client
// thread (api_bench.h); the watch fan-out is in api_bench_watch.cc.
#include "bench/api_bench.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <sstream>
#include <thread>

#include "base/descriptors.h"
#include "bench/proc_stats.h"

namespace flotilla::bench {
namespace {

size_t CountOf(std::string_view s, std::string_view what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string_view::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// One field of /proc/<pid>/status: "VmRSS" and "VmHWM" in MiB, "Threads".
json::value ProcField(int pid, const std::string& field) {
  if (pid <= 0) return nullptr;
  long long v = StatusField(pid, field);
  return field == "Threads" ? json::value(v) : json::value(std::round(v / 102.4) / 10);
}

struct Request {
  http::verb verb;
  std::string target, body;
  int expect;
};
// Builds the i-th request of a phase (i counts across all workers).
using RequestFn = std::function<Request(int64_t i)>;

std::atomic<int64_t> g_created{0};  // objects this run created

}  // namespace

double ServerCpuSeconds(const Config& cfg) {
  return cfg.server_pid > 0 ? CpuSeconds(cfg.server_pid) : 0;
}

json::object ServerMemory(const Config& cfg) {
  return {{"rss_mib", ProcField(cfg.server_pid, "VmRSS")},
          {"hwm_mib", ProcField(cfg.server_pid, "VmHWM")},
          {"threads", ProcField(cfg.server_pid, "Threads")}};
}

json::object Summarize(std::vector<double>& ms, int64_t errors, double seconds) {
  std::sort(ms.begin(), ms.end());
  auto pct = [&](double p) {
    return ms.empty() ? 0.0 : Round2(ms[std::min(ms.size() - 1, size_t(p * ms.size()))]);
  };
  json::object out{{"requests", ms.size()},
                   {"errors", errors},
                   {"p50_ms", pct(0.5)},
                   {"p99_ms", pct(0.99)},
                   {"max_ms", ms.empty() ? 0.0 : Round2(ms.back())}};
  if (seconds > 0) out["per_second"] = std::round(ms.size() / seconds);
  return out;
}

namespace {

// Runs `workers` connections in parallel, each issuing requests back to back,
// until `count` requests in all (when > 0) or `seconds` have passed.
json::object RunLoad(const Config& cfg, ssl::context& ctx, int workers, int64_t count,
                     double seconds, const RequestFn& make) {
  std::atomic<int64_t> next{0}, errors{0};
  std::vector<std::vector<double>> per_worker(workers);
  double cpu_before = ServerCpuSeconds(cfg);
  auto start = Clock::now();
  auto deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      Conn conn(cfg, ctx);
      if (Status s = conn.Connect(); !s.ok()) {
        std::cerr << s.ToString() << "\n";
        ++errors;
        return;
      }
      for (;;) {
        int64_t i = next++;
        if (count > 0 ? i >= count : Clock::now() >= deadline) return;
        Request r = make(i);
        auto t0 = Clock::now();
        auto code = conn.Do(r.verb, r.target, std::move(r.body));
        if (!code.ok() || *code != r.expect) {
          if (errors++ < 5) {
            std::cerr << r.target << ": "
                      << (code.ok() ? std::to_string(*code) : code.status().ToString()) << "\n";
          }
          if (!code.ok()) return;
          continue;
        }
        per_worker[w].push_back(Ms(Clock::now() - t0));
        if (r.verb == http::verb::post) ++g_created;
      }
    });
  }
  for (auto& t : threads) t.join();
  double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> all;
  for (auto& v : per_worker) all.insert(all.end(), v.begin(), v.end());
  json::object out = Summarize(all, errors, elapsed);
  out["concurrency"] = workers;
  out["server_cpu_ms_per_request"] =
      Round2((ServerCpuSeconds(cfg) - cpu_before) * 1e3 / std::max<size_t>(1, all.size()));
  out["seconds"] = Round2(elapsed);
  return out;
}

RequestFn Creates(const std::string& ns) {
  return [ns](int64_t i) {
    return Request{http::verb::post, NsPath(ns), ConfigMap("cm-" + std::to_string(i), SmallData()),
                   201};
  };
}

json::object Fill(const Config& cfg, ssl::context& ctx, const std::string& ns, int64_t n) {
  return RunLoad(cfg, ctx, cfg.fill_concurrency, n, 1e9, Creates(ns));
}

// For each list size: fills a namespace with that many ConfigMaps, then lists it.
void RunLists(const Config& cfg, ssl::context& ctx, Conn& admin,
              const std::function<std::string(const std::string&)>& ns, json::object& out) {
  for (int size : cfg.list_sizes) {
    std::string list_ns = ns("list-" + std::to_string(size));
    json::object fill = Fill(cfg, ctx, list_ns, size);
    std::string body;
    auto code = admin.Do(http::verb::get, NsPath(list_ns), "", &body);
    json::object r =
        RunLoad(cfg, ctx, cfg.concurrency, cfg.count, cfg.duration, [list_ns](int64_t) {
          return Request{http::verb::get, NsPath(list_ns), "", 200};
        });
    r["items"] = code.ok() ? CountOf(body, "\"uid\":") : 0;
    r["response_bytes"] = body.size();
    r["fill_creates_per_second"] = fill["per_second"];
    out["list_" + std::to_string(size)] = std::move(r);
  }
}

// Lease renewals as kubelets send them: kPatchedLeases node Leases, each
// renewed in turn with a merge patch of its holder, duration and
// renewTime (member/nodes/nodes.cc sends the same).
json::object RunPatches(const Config& cfg, ssl::context& ctx, Conn& admin, const std::string& ns) {
  constexpr int kPatchedLeases = 100;
  const std::string path = "/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases";
  auto spec = [](int lease, int64_t i) {
    return R"({"spec":{"holderIdentity":"node-)" + std::to_string(lease) +
           R"(","leaseDurationSeconds":40,"renewTime":"2026-01-01T00:00:)" +
           std::to_string(10 + i % 50) + "." + std::to_string(100000 + i % 900000) + R"(Z"}})";
  };
  for (int l = 0; l < kPatchedLeases; ++l) {
    std::string body = spec(l, 0);
    body.insert(
        1, R"("apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"node-)" +
               std::to_string(l) + R"("},)");
    auto code = admin.Do(http::verb::post, path, body);
    if (!code.ok() || *code != 201)
      return {{"error", "lease node-" + std::to_string(l) + " not created"}};
  }
  return RunLoad(cfg, ctx, cfg.concurrency, cfg.count, cfg.duration, [path, spec](int64_t i) {
    int lease = static_cast<int>(i % kPatchedLeases);
    return Request{http::verb::patch, path + "/node-" + std::to_string(lease), spec(lease, i + 1),
                   200};
  });
}

// Runs the phases named in cfg.phases in a fixed order, each in fresh namespaces.
json::object RunAll(const Config& cfg, ssl::context& ctx) {
  json::object out{{"server", cfg.server}, {"concurrency", cfg.concurrency}};
  std::string tag =
      "apibench-" + std::to_string(std::time(nullptr) % 100000) + "-" + std::to_string(::getpid());
  Conn admin(cfg, ctx);
  if (Status s = admin.Connect(); !s.ok()) return {{"error", s.ToString()}};
  std::function<std::string(const std::string&)> ns = [&](const std::string& suffix) {
    std::string name = tag + "-" + suffix;
    auto code =
        admin.Do(http::verb::post, "/api/v1/namespaces",
                 R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + name + "\"}}");
    if (!code.ok() || *code != 201) std::cerr << "namespace " << name << " not created\n";
    return name;
  };
  json::object memory{{"start", ServerMemory(cfg)}};
  int64_t n = cfg.count;
  double secs = cfg.duration;
  if (cfg.Has("create")) {
    out["create"] = RunLoad(cfg, ctx, cfg.concurrency, n, secs, Creates(ns("create")));
  }
  if (cfg.Has("get")) {
    std::string get_ns = ns("get");
    auto created = admin.Do(http::verb::post, NsPath(get_ns), ConfigMap("one", SmallData()));
    g_created += created.ok() && *created == 201;
    out["get"] = RunLoad(cfg, ctx, cfg.concurrency, n, secs, [get_ns](int64_t) {
      return Request{http::verb::get, NsPath(get_ns) + "/one", "", 200};
    });
  }
  if (cfg.Has("patch")) out["patch"] = RunPatches(cfg, ctx, admin, ns("patch"));
  if (cfg.Has("list")) RunLists(cfg, ctx, admin, ns, out);
  memory["after_requests"] = ServerMemory(cfg);
  if (cfg.Has("watch")) out["watch"] = RunWatch(cfg, ctx, ns("watch"), g_created);
  if (cfg.Has("fill") && cfg.fill > 0) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    memory["before_fill"] = ServerMemory(cfg);
    // The earlier phases may have stored that many already (a count of 0
    // would make RunLoad run by time instead).
    int64_t missing = cfg.fill - g_created;
    if (missing > 0) {
      out["fill"] = Fill(cfg, ctx, ns("fill"), missing);
      std::this_thread::sleep_for(std::chrono::seconds(2));
    }
    memory["after_fill"] = ServerMemory(cfg);
  }
  memory["objects_created_by_run"] = g_created.load();
  out["server_memory"] = std::move(memory);
  return out;
}

}  // namespace
}  // namespace flotilla::bench

int main(int argc, char** argv) {
  using namespace flotilla::bench;
  Config cfg;
  CLI::App app{"Flotilla API server benchmark (prints JSON)"};
  app.option_defaults()->always_capture_default();
  app.add_option("--server", cfg.server, "https://host:port")->required();
  app.add_option("--token", cfg.token, "Bearer token")->required();
  app.add_option("--ca-file", cfg.ca_file, "CA certificate (PEM) of the server")->required();
  app.add_option("--concurrency", cfg.concurrency, "Connections for request phases");
  auto* dur = app.add_option("--duration", cfg.duration, "Seconds per request phase");
  app.add_option("--count", cfg.count, "Requests per request phase instead")->excludes(dur);
  app.add_option("--server-pid", cfg.server_pid, "Server pid, for RSS from /proc");
  app.add_option("--fill", cfg.fill, "Objects stored in all before the last RSS reading");
  app.add_option("--fill-concurrency", cfg.fill_concurrency, "Connections for fills");
  app.add_option("--watchers", cfg.watchers, "Watch connections");
  app.add_option("--watch-writes", cfg.watch_writes, "Writes seen by the watchers");
  app.add_option("--watch-rate", cfg.watch_rate, "Writes per second during the watch");
  app.add_option("--watch-threads", cfg.watch_threads, "Client threads for watchers");
  app.add_option("--phases", cfg.phases, "Subset of create,get,patch,list,watch,fill");
  app.add_option("--list-sizes", cfg.list_sizes, "Objects per listed namespace")->delimiter(',');
  CLI11_PARSE(app, argc, argv);
  std::string rest = cfg.server.rfind("https://", 0) == 0 ? cfg.server.substr(8) : "";
  size_t colon = rest.rfind(':');
  if (colon == std::string::npos) {
    std::cerr << "--server must be https://host:port\n";
    return 2;
  }
  cfg.host = rest.substr(0, colon);
  cfg.port = rest.substr(colon + 1);
  while (!cfg.port.empty() && cfg.port.back() == '/') cfg.port.pop_back();
  flotilla::RaiseDescriptorLimit();
  ssl::context ctx(ssl::context::tls_client);
  boost::system::error_code ec;
  ctx.load_verify_file(cfg.ca_file, ec);
  if (ec) {
    std::cerr << "loading " << cfg.ca_file << ": " << ec.message() << "\n";
    return 2;
  }
  ctx.set_verify_mode(ssl::verify_peer);
  std::cout << json::serialize(RunAll(cfg, ctx)) << std::endl;
  return 0;
}
