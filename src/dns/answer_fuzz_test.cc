// The fuzz target (answer_fuzz.cc) driven by the unit suite: seed queries
// of every shape, each mutated many times over (bytes flipped, inserted,
// removed, cut, spliced), with a fixed seed so that a failure repeats. The
// target aborts on any broken promise; ASan and UBSan watch in CI.
#include <gtest/gtest.h>

#include <random>

#include "dns/test_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace flotilla::dns {
namespace {

using testing::Query;
using testing::Wire;

TEST(AnswerFuzzTest, MutatedQueriesKeepEveryPromise) {
  std::vector<std::vector<uint8_t>> seeds;
  for (const Query& q :
       {Query{.name = "web.default.flotilla.svc.flotilla.local"},
        Query{.name = "web.default.flotilla.svc.eu-a.eu.flotilla.local", .edns_payload = 4096},
        Query{.name = "_store._tcp.etcd.default.flotilla.svc.flotilla.local",
        .type = KNOT_RRTYPE_SRV},
        Query{.name = "loop1.flotilla.local", .type = KNOT_RRTYPE_ANY},
        Query{.name = "nothing.flotilla.local", .edns_payload = 512, .edns_version = 1},
        Query{.name = "example.com", .type = KNOT_RRTYPE_AAAA}}) {
    seeds.push_back(Wire(q));
  }
  std::mt19937 rng(20261126);
  size_t runs = 0;
  for (int round = 0; round < 20000; ++round) {
    std::vector<uint8_t> b = seeds[rng() % seeds.size()];
    int mutations = 1 + static_cast<int>(rng() % 4);
    for (int m = 0; m < mutations && !b.empty(); ++m) {
      switch (rng() % 5) {
        case 0:
          b[rng() % b.size()] ^= static_cast<uint8_t>(1 << (rng() % 8));
          break;
        case 1:
          b.insert(b.begin() + static_cast<long>(rng() % (b.size() + 1)),
                   static_cast<uint8_t>(rng()));
          break;
        case 2:
          b.erase(b.begin() + static_cast<long>(rng() % b.size()));
          break;
        case 3:
          b.resize(rng() % (b.size() + 1));
          break;
        case 4: {
          const std::vector<uint8_t>& other = seeds[rng() % seeds.size()];
          size_t at = rng() % (b.size() + 1);
          b.resize(at);
          b.insert(b.end(), other.begin() + static_cast<long>(rng() % other.size()), other.end());
          break;
        }
      }
    }
    LLVMFuzzerTestOneInput(b.data(), b.size());
    ++runs;
  }
  for (const auto& s : seeds) LLVMFuzzerTestOneInput(s.data(), s.size());
  EXPECT_EQ(runs, 20000u);
}

}  // namespace
}  // namespace flotilla::dns
