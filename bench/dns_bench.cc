// DNS benchmark: the federation's DNS server (src/dns) next to unbound, in
// the same run, on the same records and queries, measured with dnsperf.
//
// The records: --services federated Services, each as the federation's
// DNS would publish it over three clusters in two regions (eu: eu-a, eu-b;
// us: us-a): 3 A records at the global name, 2 + 1 at the regional names,
// 1 at each zonal name, and an SRV record for a named port at each of the
// six names (15 records per Service). Flotilla serves them from its
// in-memory zone (src/dns/zone.h, answered by src/dns/server.h with two
// UDP threads, as `flotilla server` runs it); unbound (Debian's, two
// threads) serves the same records as local-data of a static local-zone.
// The queries: per Service, A for the global, a regional and a zonal name
// and SRV for the global one.
//
// Figures, for each server:
//   - queries per second: dnsperf with --clients clients and up to 200
//     queries outstanding for --seconds seconds (the rate it can answer),
//     --rounds rounds alternating between the two servers, the median;
//   - p50/p99 latency at a fixed --latency-qps load (dnsperf -v gives each
//     answer's latency);
//   - memory: heap bytes per record of Flotilla's zone (malloc's count
//     before and after building it); unbound's RSS with the records.
// Both servers share the machine's cores with dnsperf.
// Then, with --failovers N (default 5; 0 skips it), the real `flotilla
// server --dns-address` with three members: the time from a member's
// Endpoints losing their last address to the answer changing
// (dns_failover.cc).
//
// Usage: dns_bench [--services N] [--seconds S] [--latency-qps Q] [--clients C] [--rounds R]
//                  [--failovers N]
#include <malloc.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/log.h"
#include "bench/dns_failover.h"
#include "bench/federation_bench.h"
#include "bench/proc_stats.h"
#include "base/child_process.h"
#include "dns/server.h"

namespace flotilla::dns {
namespace {

namespace fs = std::filesystem;

struct Config {
  int services = 1000;
  int seconds = 10;
  int latency_qps = 20000;
  int clients = 4;
  int rounds = 3;
  int failovers = 5;  // 0: no failover phase
};

struct Records {
  std::string unbound;  // local-data lines
  size_t count = 0;
};

// Adds the same record to Flotilla's zone and to unbound's configuration.
void AddA(ZoneBuilder& zone, Records& r, const std::string& name, const std::string& ip) {
  zone.AddAddress(name, ip);
  r.unbound += "  local-data: \"" + name + ". 30 IN A " + ip + "\"\n";
  ++r.count;
}

void AddSrv(ZoneBuilder& zone, Records& r, const std::string& name, const std::string& target) {
  zone.AddSrv(name, SrvRecord{.priority = 0, .weight = 100, .port = 80, .target = target});
  r.unbound += "  local-data: \"" + name + ". 30 IN SRV 0 100 80 " + target + ".\"\n";
  ++r.count;
}

std::string Name(int i, const std::string& scope) {
  return "web-" + std::to_string(i) + ".bench.flotilla.svc." + (scope.empty() ? "" : scope + ".") +
         "flotilla.local";
}

std::string Ip(int cluster, int i) {
  return "172." + std::to_string(16 + cluster) + "." + std::to_string(i / 250) + "." +
         std::to_string(i % 250 + 1);
}

// A UDP port free now on 127.0.0.1 (for unbound, which takes no port 0).
int FreePort() {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

struct Perf {
  std::vector<double> rounds;  // queries per second of each round
  double qps = 0;              // their median
  double lost = 0;
  double p50_ms = 0, p99_ms = 0;
};

std::string Run(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

double Match(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(pattern))) return 0;
  return std::stod(m[1].str());
}

std::string Dnsperf(int port, const std::string& queries) {
  return "dnsperf -s 127.0.0.1 -p " + std::to_string(port) + " -d " + queries;
}

// One round of the rate: as many queries as it answers.
void Rate(Perf& p, int port, const std::string& queries, const Config& c) {
  std::string rate = Run(Dnsperf(port, queries) + " -l " + std::to_string(c.seconds) + " -c " +
                         std::to_string(c.clients) + " -q 200 2>&1");
  p.rounds.push_back(Match(rate, R"(Queries per second:\s+([\d.]+))"));
  p.lost = std::max(p.lost, Match(rate, R"(Queries lost:\s+\d+ \(([\d.]+)%\))"));
  std::vector<double> sorted = p.rounds;
  std::sort(sorted.begin(), sorted.end());
  p.qps = sorted[sorted.size() / 2];
}

void Latency(Perf& p, int port, const std::string& queries, const Config& c) {
  std::string base = Dnsperf(port, queries);
  // Per-answer latencies at a fixed load.
  std::string verbose = Run(base + " -l 5 -Q " + std::to_string(c.latency_qps) + " -v 2>&1");
  std::vector<double> lat;
  std::regex line(R"(^> \S+ .* ([\d.]+)$)");
  std::istringstream in(verbose);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_match(l, m, line)) lat.push_back(std::stod(m[1].str()) * 1000);
  }
  if (!lat.empty()) {
    std::sort(lat.begin(), lat.end());
    p.p50_ms = lat[lat.size() / 2];
    p.p99_ms = lat[std::min(lat.size() - 1, lat.size() * 99 / 100)];
  }
}

std::string Join(const std::vector<double>& v) {
  std::string out;
  for (double x : v) out += (out.empty() ? "" : " ") + std::to_string(static_cast<long>(x));
  return out;
}

std::string JoinMs(const std::vector<double>& v) {
  std::string out;
  char buf[32];
  for (double x : v) {
    std::snprintf(buf, sizeof(buf), "%.1f", x);
    out += (out.empty() ? "" : " ") + std::string(buf);
  }
  return out;
}

int Main(const Config& c) {
  InitLogging("warn");
  fs::path dir = fs::temp_directory_path() / ("dns_bench." + std::to_string(getpid()));
  fs::create_directories(dir);
  size_t heap_before = mallinfo2().uordblks;
  ZoneBuilder builder(ZoneOptions{.apex = "flotilla.local", .ttl = 30});
  Records records;
  std::ofstream queries(dir / "queries.txt");
  for (int i = 0; i < c.services; ++i) {
    for (int cl = 0; cl < 3; ++cl) AddA(builder, records, Name(i, ""), Ip(cl, i));
    for (int cl = 0; cl < 2; ++cl) AddA(builder, records, Name(i, "eu"), Ip(cl, i));
    AddA(builder, records, Name(i, "us"), Ip(2, i));
    AddA(builder, records, Name(i, "eu-a.eu"), Ip(0, i));
    AddA(builder, records, Name(i, "eu-b.eu"), Ip(1, i));
    AddA(builder, records, Name(i, "us-a.us"), Ip(2, i));
    for (const char* scope : {"", "eu", "us", "eu-a.eu", "eu-b.eu", "us-a.us"}) {
      AddSrv(builder, records, "_http._tcp." + Name(i, scope), Name(i, scope));
    }
    queries << Name(i, "") << " A\n"
            << Name(i, "eu") << " A\n"
            << Name(i, "eu-b.eu") << " A\n"
            << "_http._tcp." + Name(i, "") << " SRV\n";
  }
  queries.close();
  std::shared_ptr<const Zone> zone = builder.Build();
  builder = ZoneBuilder(ZoneOptions{});
  size_t heap_after = mallinfo2().uordblks;

  metrics::Registry registry;
  auto server = Server::Start(
      ServerOptions{.address = "127.0.0.1:0", .udp_sockets = 2}, [zone] { return zone; }, registry);
  if (!server.ok()) {
    std::cerr << server.status().ToString() << "\n";
    return 1;
  }

  // unbound on a free port with the same records.
  int unbound_port = FreePort();
  {
    std::ofstream conf(dir / "unbound.conf");
    conf << "server:\n  interface: 127.0.0.1\n  port: " << unbound_port
         << "\n  do-daemonize: no\n  chroot: \"\"\n  username: \"\"\n  directory: \""
         << dir.string()
         << "\"\n  pidfile: \"\"\n  use-syslog: no\n  logfile: \"\"\n  verbosity: 0\n"
         << "  num-threads: 2\n  so-reuseport: yes\n  do-ip6: no\n  access-control: 127.0.0.0/8 "
            "allow\n"
         << "  local-zone: \"flotilla.local.\" static\n"
         << records.unbound << "remote-control:\n  control-enable: no\n";
  }
  ChildProcess unbound({"/usr/sbin/unbound", "-d", "-c", (dir / "unbound.conf").string()},
                            (dir / "unbound.log").string());
  // Ready when it answers.
  bool up = false;
  for (int i = 0; i < 100 && !up; ++i) {
    up = Run("dig @127.0.0.1 -p " + std::to_string(unbound_port) + " +short +time=1 +tries=1 " +
             Name(0, "") + " A")
             .find("172.") != std::string::npos;
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!up) {
    std::cerr << "unbound did not start; see " << (dir / "unbound.log").string() << "\n";
    return 1;
  }
  // Rounds alternate between the two, so that whatever else the machine
  // does falls on both alike; the medians are reported.
  std::string file = (dir / "queries.txt").string();
  Perf flotilla, peer;
  for (int r = 0; r < c.rounds; ++r) {
    Rate(flotilla, (*server)->port(), file, c);
    Rate(peer, unbound_port, file, c);
  }
  Latency(flotilla, (*server)->port(), file, c);
  Latency(peer, unbound_port, file, c);
  double unbound_rss = bench::StatusField(unbound.pid(), "VmRSS") / 1024.0;
  unbound.Stop();
  (*server)->Stop();
  std::vector<double> failover;
  if (c.failovers > 0) {
    std::string binary = flotilla::bench::FlotillaOfThisBuild();
    auto measured =
        bench::MeasureDnsFailover(binary, (dir / "fleet").string(), FreePort(), c.failovers);
    if (!measured.ok()) {
      std::cerr << "failover phase: " << measured.status().ToString() << "\n";
      return 1;
    }
    failover = *measured;
  }
  std::printf(
      "{\"services\": %d, \"records\": %zu, \"queries_file\": %d,\n"
      " \"flotilla\": {\"qps\": %.0f, \"qps_rounds\": \"%s\", \"lost_pct\": %.2f, \"p50_ms\": "
      "%.3f, \"p99_ms\": %.3f, "
      "\"zone_heap_bytes_per_record\": %.0f},\n"
      " \"unbound\": {\"qps\": %.0f, \"qps_rounds\": \"%s\", \"lost_pct\": %.2f, \"p50_ms\": %.3f, "
      "\"p99_ms\": %.3f, "
      "\"rss_mib\": %.1f},\n"
      " \"latency_load_qps\": %d, \"clients\": %d, \"seconds\": %d,\n"
      " \"endpoints_lost_to_answer_ms\": \"%s\"}\n",
      c.services, records.count, c.services * 4, flotilla.qps, Join(flotilla.rounds).c_str(),
      flotilla.lost, flotilla.p50_ms, flotilla.p99_ms,
      static_cast<double>(heap_after - heap_before) / static_cast<double>(records.count), peer.qps,
      Join(peer.rounds).c_str(), peer.lost, peer.p50_ms, peer.p99_ms, unbound_rss, c.latency_qps,
      c.clients, c.seconds, JoinMs(failover).c_str());
  fs::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace flotilla::dns

int main(int argc, char** argv) {
  flotilla::dns::Config c;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    int v = std::atoi(argv[i + 1]);
    if (flag == "--services")
      c.services = v;
    else if (flag == "--seconds")
      c.seconds = v;
    else if (flag == "--latency-qps")
      c.latency_qps = v;
    else if (flag == "--clients")
      c.clients = v;
    else if (flag == "--rounds")
      c.rounds = std::max(1, v);
    else if (flag == "--failovers")
      c.failovers = v;
    else {
      std::cerr << "usage: dns_bench [--services N] [--seconds S] [--latency-qps Q] [--clients C] "
                   "[--rounds R] [--failovers N]\n";
      return 2;
    }
  }
  return flotilla::dns::Main(c);
}
