// Cold memory: what the first touch of scattered objects costs after the
// process sat idle, on small (4 KiB) pages and on transparent huge pages
// (docs/benchmarks.md, "Memory touched after idle"). A federated object's
// first reconcile after a quiet spell reads one entry per member cluster
// from objects spread over the heap; on this virtual machine that first
// pass is much slower than the same pass a moment later.
//
// Usage: cold_memory_bench [--idle-ms 2000] [--rounds 8] [--objects 300]
//
// Two 256 MiB regions, one advised MADV_NOHUGEPAGE and one MADV_HUGEPAGE,
// each holding `objects` 256-byte objects at random page-aligned offsets.
// Each round sleeps `idle-ms`, then times a pass that reads and writes every
// object of a region, and a second pass at once. Prints each region's median
// and worst first and second pass.
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr size_t kRegionBytes = size_t{256} << 20;
constexpr size_t kObjectBytes = 256;

struct Region {
  const char* name;
  int advice;
  char* base = nullptr;
  std::vector<char*> objects;
  std::vector<double> first_us, second_us;
};

bool Map(Region& r, int objects, std::mt19937_64& rng) {
  void* p = mmap(nullptr, kRegionBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  r.base = static_cast<char*>(p);
  madvise(r.base, kRegionBytes, r.advice);  // advice only: a kernel without THP ignores it
  std::memset(r.base, 1, kRegionBytes);     // resident, as a long-running heap is
  std::uniform_int_distribution<size_t> page(0, kRegionBytes / 4096 - 1);
  for (int i = 0; i < objects; ++i) r.objects.push_back(r.base + page(rng) * 4096);
  return true;
}

// Reads and writes every object's first and last word; returns microseconds.
double Pass(Region& r) {
  auto start = std::chrono::steady_clock::now();
  uint64_t sum = 0;
  for (char* o : r.objects) {
    auto* words = reinterpret_cast<volatile uint64_t*>(o);
    sum += words[0] + words[kObjectBytes / 8 - 1];
    words[0] = sum;
  }
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
      .count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double Max(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

}  // namespace

int main(int argc, char** argv) {
  int idle_ms = 2000, rounds = 8, objects = 300;
  for (int i = 1; i < argc; i += 2) {
    std::string a = argv[i];
    int* flag = a == "--idle-ms"   ? &idle_ms
                : a == "--rounds"  ? &rounds
                : a == "--objects" ? &objects
                                   : nullptr;
    if (flag == nullptr || i + 1 >= argc || (*flag = std::atoi(argv[i + 1])) <= 0) {
      std::fprintf(stderr, "usage: %s [--idle-ms N] [--rounds N] [--objects N] (N > 0)\n", argv[0]);
      return 2;
    }
  }
  std::mt19937_64 rng(42);
  Region regions[] = {{"small_pages", MADV_NOHUGEPAGE}, {"huge_pages", MADV_HUGEPAGE}};
  for (Region& r : regions) {
    if (!Map(r, objects, rng)) {
      std::perror("mmap");
      return 1;
    }
  }
  for (int round = 0; round < rounds; ++round) {
    for (Region& r : regions) {
      std::this_thread::sleep_for(std::chrono::milliseconds(idle_ms));
      r.first_us.push_back(Pass(r));
      r.second_us.push_back(Pass(r));
    }
  }
  std::printf("{\"idle_ms\":%d,\"rounds\":%d,\"objects\":%d", idle_ms, rounds, objects);
  for (Region& r : regions) {
    std::printf(
        ",\"%s\":{\"first_pass_p50_us\":%.1f,\"first_pass_max_us\":%.1f,"
        "\"second_pass_p50_us\":%.1f,\"second_pass_max_us\":%.1f}",
        r.name, Median(r.first_us), Max(r.first_us), Median(r.second_us), Max(r.second_us));
  }
  std::printf("}\n");
  for (Region& r : regions) munmap(r.base, kRegionBytes);
  return 0;
}
