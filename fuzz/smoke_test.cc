// Every fuzz target on its seed corpus (fuzz/corpus/NAME/) and on
// deterministic mutations of it, as the test command's short smoke (under
// ASan and UBSan in CI). The long coverage-guided runs are scripts/fuzz's.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <vector>

#include "api/protobuf.h"
#include "fuzz/api_server.h"
#include "fuzz/targets.h"

namespace flotilla::fuzz {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

constexpr int kMutationsPerTarget = 4000;

// The seeds by file name, in name order (directory order is not stable).
std::map<std::string, Bytes> NamedSeeds(std::string_view target) {
  const char* src = std::getenv("FLOTILLA_SOURCE_DIR");
  fs::path dir = fs::path(src != nullptr ? src : ".") / "fuzz/corpus" / std::string(target);
  std::map<std::string, Bytes> seeds;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    seeds[entry.path().filename().string()] =
        Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return seeds;
}

std::vector<Bytes> Seeds(std::string_view target) {
  std::vector<Bytes> seeds;
  for (auto& [name, seed] : NamedSeeds(target)) seeds.push_back(std::move(seed));
  return seeds;
}

// One of libFuzzer's simple mutations of `in`, or a splice with `other`.
Bytes Mutate(const Bytes& in, const Bytes& other, std::mt19937& rng) {
  Bytes out = in;
  auto pick = [&](size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng);
  };
  static constexpr uint8_t kInteresting[] = {'"',  '{',  '}', '[', ']', ',', ':', '\\', 0,
                                             0xff, '\n', '=', '!', '(', ')', '-', '9',  0x80};
  switch (pick(6)) {
    case 0:  // flip a bit
      if (!out.empty()) out[pick(out.size())] ^= static_cast<uint8_t>(1u << pick(8));
      break;
    case 1:  // insert a byte that means something to some parser
      out.insert(out.begin() + static_cast<long>(pick(out.size() + 1)),
                 kInteresting[pick(std::size(kInteresting))]);
      break;
    case 2: {  // erase a run
      if (out.empty()) break;
      size_t at = pick(out.size());
      out.erase(out.begin() + static_cast<long>(at),
                out.begin() + static_cast<long>(std::min(out.size(), at + 1 + pick(16))));
      break;
    }
    case 3: {  // repeat a run
      if (out.empty()) break;
      size_t at = pick(out.size()), n = std::min(out.size() - at, 1 + pick(32));
      Bytes run(out.begin() + static_cast<long>(at), out.begin() + static_cast<long>(at + n));
      out.insert(out.begin() + static_cast<long>(pick(out.size() + 1)), run.begin(), run.end());
      break;
    }
    case 4:  // cut
      out.resize(pick(out.size() + 1));
      break;
    default: {  // splice: a prefix of this one and a suffix of the other
      size_t a = pick(out.size() + 1), b = pick(other.size() + 1);
      out.resize(a);
      out.insert(out.end(), other.begin() + static_cast<long>(b), other.end());
    }
  }
  return out;
}

class SmokeTest : public ::testing::TestWithParam<std::string_view> {};

TEST_P(SmokeTest, SeedsAndMutationsRunClean) {
  const Target* target = FindTarget(GetParam());
  ASSERT_NE(target, nullptr);
  std::vector<Bytes> seeds = Seeds(target->name);
  ASSERT_FALSE(seeds.empty()) << "no seeds in fuzz/corpus/" << target->name;
  for (const Bytes& seed : seeds) target->run(seed);
  std::mt19937 rng(20261126);
  for (int i = 0; i < kMutationsPerTarget; ++i) {
    Bytes input = seeds[static_cast<size_t>(i) % seeds.size()];
    // Up to four mutations stacked, as libFuzzer stacks them.
    for (int m = 0, n = 1 + i % 4; m < n; ++m) {
      input = Mutate(input, seeds[rng() % seeds.size()], rng);
    }
    target->run(input);
  }
}

// The seeds must reach deep: a create seed that the server refuses would
// leave the fuzzer mutating error paths only.
TEST(SeedsTest, ObjectSeedsAreAccepted) {
  static constexpr const char* kCollections[] = {"deployments",
                                                 "replicasets",
                                                 "statefulsets",
                                                 "configmaps",
                                                 "secrets",
                                                 "services",
                                                 "namespaces",
                                                 "horizontalpodautoscalers",
                                                 "horizontalpodautoscalers",
                                                 "clusters"};
  static constexpr const char* kPrefixes[] = {"/apis/apps/v1/namespaces/default/",
                                              "/apis/apps/v1/namespaces/default/",
                                              "/apis/apps/v1/namespaces/default/",
                                              "/api/v1/namespaces/default/",
                                              "/api/v1/namespaces/default/",
                                              "/api/v1/namespaces/default/",
                                              "/api/v1/",
                                              "/apis/autoscaling/v2/namespaces/default/",
                                              "/apis/autoscaling/v1/namespaces/default/",
                                              "/apis/federation/v1beta1/"};
  int accepted = 0;
  for (const Bytes& seed : Seeds("api_object")) {
    uint8_t choice = seed[0];
    if ((choice & 0xC0) != 0) continue;  // strict or update: not plain creates
    std::string_view body = AsText(std::span<const uint8_t>(seed).subspan(1));
    std::string target = std::string(kPrefixes[choice]) + kCollections[choice] + "?dryRun=All";
    Response r = Call("POST", target, "application/json", body);
    EXPECT_EQ(r.code, 201) << target << ": " << r.body;
    ++accepted;
  }
  EXPECT_EQ(accepted, 10);
  for (const auto& [name, seed] : NamedSeeds("protobuf")) {
    if (name == "truncated" || name.starts_with("regression-")) continue;  // broken on purpose
    auto envelope = api::ParseProtobufEnvelope(AsText(seed).substr(1));
    ASSERT_TRUE(envelope.ok()) << name << ": " << envelope.status().ToString();
  }
}

std::vector<std::string_view> Names() {
  std::vector<std::string_view> names;
  for (const Target& t : Targets()) names.push_back(t.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Targets, SmokeTest, ::testing::ValuesIn(Names()),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace flotilla::fuzz
