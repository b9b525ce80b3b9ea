// Seeded random inputs for the parsers and patches: nothing crashes, and the
// properties that must hold for every input do.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "api/fields.h"
#include "api/labels.h"
#include "api/patch.h"

namespace flotilla::api {
namespace {

constexpr int kIterations = 20000;

std::string RandomText(std::mt19937& rng, const std::vector<std::string>& tokens, int max_len) {
  std::uniform_int_distribution<size_t> pick(0, tokens.size() - 1);
  int len = std::uniform_int_distribution<int>(0, max_len)(rng);
  std::string out;
  for (int i = 0; i < len; ++i) out += tokens[pick(rng)];
  return out;
}

// A canonical form parses back to itself and selects the same objects.
TEST(LabelSelectorProperty, CanonicalFormRoundTrips) {
  const std::vector<std::string> tokens = {
      "a", "b", "x.io/k", "in", "notin", "=", "==", "!=", "!", "(",
      ")", ",", " ",      ">",  "<",     "1", "-",  "_2", "\t"};
  const json::object labels[] = {
      {}, {{"a", "1"}}, {{"a", "b"}, {"b", "in"}}, {{"x.io/k", "2"}, {"b", ""}}};
  std::mt19937 rng(7);
  int parsed = 0;
  for (int i = 0; i < kIterations; ++i) {
    std::string text = RandomText(rng, tokens, 8);
    StatusOr<LabelSelector> s = LabelSelector::Parse(text);
    if (!s.ok()) {
      EXPECT_EQ(s.status().reason(), Reason::kBadRequest) << text;
      continue;
    }
    ++parsed;
    StatusOr<LabelSelector> again = LabelSelector::Parse(s->ToString());
    ASSERT_TRUE(again.ok()) << text << " -> " << s->ToString();
    EXPECT_EQ(again->ToString(), s->ToString()) << text;
    for (const json::object& l : labels) EXPECT_EQ(again->Matches(&l), s->Matches(&l)) << text;
  }
  EXPECT_GT(parsed, 1000);  // the generator reaches valid selectors too
}

std::multiset<std::string> Terms(const FieldSelector& s) {
  std::multiset<std::string> out;
  for (const FieldRequirement& r : s.requirements()) {
    out.insert(r.field + (r.equals ? "=" : "!=") + "\n" + r.value);
  }
  return out;
}

TEST(FieldSelectorProperty, CanonicalFormRoundTrips) {
  const std::vector<std::string> tokens = {"a",   "b.c", "=",    "==", "!=", ",", "\\",
                                           "\\,", "\\=", "\\\\", "x",  " ",  "!"};
  std::mt19937 rng(11);
  int parsed = 0;
  for (int i = 0; i < kIterations; ++i) {
    std::string text = RandomText(rng, tokens, 8);
    StatusOr<FieldSelector> s = FieldSelector::Parse(text);
    if (!s.ok()) {
      EXPECT_EQ(s.status().reason(), Reason::kBadRequest) << text;
      continue;
    }
    ++parsed;
    StatusOr<FieldSelector> again = FieldSelector::Parse(s->ToString());
    ASSERT_TRUE(again.ok()) << text << " -> " << s->ToString();
    // The same terms; their order may change because "==" prints as "=".
    EXPECT_EQ(Terms(*again), Terms(*s)) << text;
  }
  EXPECT_GT(parsed, 1000);
}

// Small random JSON values over a few keys, so that patches hit existing paths.
json::value RandomJson(std::mt19937& rng, int depth) {
  static const char* const kKeys[] = {"a", "b", "name", "$patch", "c"};
  int kind = std::uniform_int_distribution<int>(0, depth > 0 ? 6 : 3)(rng);
  switch (kind) {
    case 0:
      return nullptr;
    case 1:
      return std::uniform_int_distribution<int>(0, 3)(rng);
    case 2:
      return kKeys[std::uniform_int_distribution<int>(0, 4)(rng)];
    case 3:
      return std::uniform_int_distribution<int>(0, 1)(rng) == 1;
    case 4: {
      json::array a;
      int n = std::uniform_int_distribution<int>(0, 3)(rng);
      for (int i = 0; i < n; ++i) a.push_back(RandomJson(rng, depth - 1));
      return a;
    }
    default: {
      json::object o;
      int n = std::uniform_int_distribution<int>(0, 3)(rng);
      for (int i = 0; i < n; ++i) {
        o[kKeys[std::uniform_int_distribution<int>(0, 4)(rng)]] = RandomJson(rng, depth - 1);
      }
      return o;
    }
  }
}

// RFC 7386 patches are idempotent.
TEST(MergePatchProperty, Idempotent) {
  std::mt19937 rng(3);
  for (int i = 0; i < kIterations; ++i) {
    json::value target = RandomJson(rng, 3), patch = RandomJson(rng, 3);
    json::value once = MergePatch(target, patch);
    EXPECT_EQ(ToJson(MergePatch(once, patch)), ToJson(once))
        << ToJson(target) << " + " << ToJson(patch);
  }
}

FieldPatchInfo MergeEverything(const std::vector<std::string>& path) {
  return {"merge", path.empty() || path.back() != "b" ? "name" : ""};
}

// Arbitrary patches never crash or throw and never change their inputs.
TEST(PatchProperty, ArbitraryPatchesFailCleanly) {
  std::mt19937 rng(5);
  const char* const kOps[] = {"add", "remove", "replace", "move", "copy", "test", "x"};
  const char* const kPaths[] = {"", "/a", "/a/0", "/a/-", "/b/name", "/a/b", "/c/1"};
  for (int i = 0; i < kIterations; ++i) {
    json::value original = json::object{{"a", RandomJson(rng, 2)}, {"b", RandomJson(rng, 2)}};
    json::value smp = RandomJson(rng, 3);
    std::string before = ToJson(original);
    json::array ops;
    for (int k = 0; k < 3; ++k) {
      json::object op{{"op", kOps[std::uniform_int_distribution<int>(0, 6)(rng)]},
                      {"path", kPaths[std::uniform_int_distribution<int>(0, 6)(rng)]},
                      {"from", kPaths[std::uniform_int_distribution<int>(0, 6)(rng)]},
                      {"value", RandomJson(rng, 1)}};
      ops.push_back(std::move(op));
    }
    StatusOr<json::value> a = JsonPatch(original, ops);
    StatusOr<json::value> b = StrategicMergePatch(original, smp, MergeEverything);
    StatusOr<json::value> c = StrategicMergePatch(original, smp, {});
    EXPECT_TRUE(a.ok() || a.status().code() >= 400);
    EXPECT_TRUE(b.ok() || b.status().code() >= 400);
    EXPECT_TRUE(c.ok() || c.status().code() >= 400);
    EXPECT_EQ(ToJson(original), before);
  }
}

}  // namespace
}  // namespace flotilla::api
