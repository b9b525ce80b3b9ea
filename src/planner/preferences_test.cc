// ParsePreferences as the annotation's admission sees it: the seed's field
// names, Go-compatible defaults, and an Invalid status naming the field for
// every bad document.
#include "planner/preferences.h"

#include <gtest/gtest.h>

#include <random>

namespace flotilla::planner {
namespace {

TEST(ParsePreferences, SeedDocument) {
  StatusOr<Preferences> p = ParsePreferences(
      R"({"rebalance": true, "clusters": {"*": {"weight": 1}, "C": {"maxReplicas": 20, "weight": 1},
          "eu-1.example": {"minReplicas": 2}}})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->rebalance);
  ASSERT_EQ(p->clusters.size(), 3u);
  EXPECT_EQ(p->clusters.at("*"), (ClusterPreferences{.weight = 1}));
  EXPECT_EQ(p->clusters.at("C"), (ClusterPreferences{.max_replicas = 20, .weight = 1}));
  EXPECT_EQ(p->clusters.at("eu-1.example"), (ClusterPreferences{.min_replicas = 2}));
}

TEST(ParsePreferences, DefaultsMatchTheGoDecoder) {
  StatusOr<Preferences> p = ParsePreferences(R"({"clusters": {"A": {}}})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE(p->rebalance);
  EXPECT_EQ(p->clusters.at("A"), ClusterPreferences{});
  EXPECT_FALSE(p->clusters.at("A").max_replicas.has_value());

  StatusOr<Preferences> empty = ParsePreferences("{}");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->clusters.empty());  // present but empty: no cluster matches
}

TEST(ParsePreferences, RoundTripsThroughItsJson) {
  Preferences prefs;
  prefs.rebalance = true;
  prefs.clusters["*"] = {.min_replicas = 1, .weight = 3};
  prefs.clusters["a"] = {.min_replicas = 2, .max_replicas = 4, .weight = 0};
  StatusOr<Preferences> back = ParsePreferences(json::serialize(PreferencesToJson(prefs)));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, prefs);
}

TEST(ParsePreferences, ErrorsNameTheField) {
  struct Case {
    const char* doc;
    const char* field;
    const char* type;
  };
  const Case cases[] = {
      {R"({"clusters": {"A": {"minReplicas": 5, "maxReplicas": 2}}})", "clusters[A].maxReplicas",
       "FieldValueInvalid"},
      {R"({"clusters": {"A": {"minReplicas": -1}}})", "clusters[A].minReplicas",
       "FieldValueInvalid"},
      {R"({"clusters": {"A": {"maxReplicas": -1}}})", "clusters[A].maxReplicas",
       "FieldValueInvalid"},
      {R"({"clusters": {"*": {"weight": -1}}})", "clusters[*].weight", "FieldValueInvalid"},
      {R"({"clusters": {"*": {"weight": "heavy"}}})", "clusters[*].weight",
       "FieldValueTypeInvalid"},
      {R"({"clusters": {"*": {"weight": 1e3}}})", "clusters[*].weight", "FieldValueTypeInvalid"},
      {R"({"clusters": {"Bad_Name": {"weight": 1}}})", "clusters[Bad_Name]", "FieldValueInvalid"},
      {R"({"clusters": {"-a": {"weight": 1}}})", "clusters[-a]", "FieldValueInvalid"},
      {R"({"clusters": {"*": {"Weight": 1}}})", "clusters[*].Weight", "FieldValueNotSupported"},
      {R"({"Rebalance": true})", "Rebalance", "FieldValueNotSupported"},
      {R"({"rebalance": 1})", "rebalance", "FieldValueTypeInvalid"},
      {R"({"clusters": 3})", "clusters", "FieldValueTypeInvalid"},
      {R"([1, 2])", "", "FieldValueTypeInvalid"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.doc);
    StatusOr<Preferences> p = ParsePreferences(c.doc);
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.status().reason(), Reason::kInvalid);
    EXPECT_EQ(p.status().code(), 422);
    ASSERT_EQ(p.status().causes().size(), 1u) << p.status().message();
    EXPECT_EQ(p.status().causes()[0].field, c.field);
    EXPECT_EQ(p.status().causes()[0].type, c.type);
    if (*c.field != '\0') {
      EXPECT_NE(p.status().message().find(std::string(c.field) + ": "), std::string::npos)
          << p.status().message();
    }
  }
}

TEST(ParsePreferences, MalformedJsonIsInvalid) {
  StatusOr<Preferences> p = ParsePreferences(R"({"clusters": {"*": {"weight": 1})");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().reason(), Reason::kInvalid);
  EXPECT_NE(p.status().message().find("invalid JSON"), std::string::npos);
}

TEST(ValidatePreferences, ChecksHandBuiltPreferences) {
  Preferences prefs;
  prefs.clusters["a"] = {.min_replicas = 3, .max_replicas = 1};
  Status s = ValidatePreferences(prefs, "metadata.annotations[x]");
  ASSERT_FALSE(s.ok());
  ASSERT_EQ(s.causes().size(), 1u);
  EXPECT_EQ(s.causes()[0].field, "metadata.annotations[x].clusters[a].maxReplicas");
  EXPECT_TRUE(ValidatePreferences(Preferences::Default()).ok());
}

TEST(Preferences, OwnEntryWinsOverStar) {
  Preferences prefs = Preferences::Default();
  prefs.clusters["a"] = {.weight = 7};
  EXPECT_EQ(prefs.For("a")->weight, 7);
  EXPECT_EQ(prefs.For("b")->weight, 1);
  prefs.clusters.erase("*");
  EXPECT_EQ(prefs.For("b"), nullptr);
}

// A small fuzzer: seeded byte mutations of valid documents. Every result is
// either an Invalid status with a message, or preferences that validate and
// round-trip through their JSON.
TEST(ParsePreferences, MutatedDocumentsAreRejectedOrRoundTrip) {
  const std::string seeds[] = {
      R"({"rebalance": true, "clusters": {"*": {"weight": 1}, "C": {"maxReplicas": 20, "weight": 1}}})",
      R"({"clusters": {"a": {"minReplicas": 2, "maxReplicas": 10, "weight": 1000000}}})",
      R"({"rebalance": false, "clusters": {"eu-1.x": {"minReplicas": 0}, "*": {}}})",
  };
  const std::string alphabet = "{}[]\":,-.0123456789eE *aAnulltrfs\\\x01\xff";
  std::mt19937_64 rng(1234);
  int accepted = 0, rejected = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string doc = seeds[round % 3];
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !doc.empty(); ++e) {
      size_t at = rng() % doc.size();
      switch (rng() % 3) {
        case 0:
          doc[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          doc.erase(at, 1 + rng() % 3);
          break;
        default:
          doc.insert(at, 1, alphabet[rng() % alphabet.size()]);
          break;
      }
    }
    SCOPED_TRACE(doc);
    StatusOr<Preferences> p = ParsePreferences(doc);
    if (!p.ok()) {
      ++rejected;
      EXPECT_EQ(p.status().reason(), Reason::kInvalid);
      EXPECT_FALSE(p.status().message().empty());
      continue;
    }
    ++accepted;
    EXPECT_TRUE(ValidatePreferences(*p).ok());
    StatusOr<Preferences> back = ParsePreferences(json::serialize(PreferencesToJson(*p)));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, *p);
  }
  EXPECT_GT(accepted, 200);
  EXPECT_GT(rejected, 5000);
}

TEST(IsValidClusterName, Dns1123Subdomains) {
  for (const char* ok : {"a", "A", "us-east-1", "eu.example.com", "0", "a-b.c-d"}) {
    EXPECT_TRUE(IsValidClusterName(ok)) << ok;
  }
  for (const char* bad : {"", "-a", "a-", "a..b", ".a", "a.", "a_b", "a b", "*", "a/b"}) {
    EXPECT_FALSE(IsValidClusterName(bad)) << bad;
  }
  EXPECT_TRUE(IsValidClusterName(std::string(253, 'a')));
  EXPECT_FALSE(IsValidClusterName(std::string(254, 'a')));
}

}  // namespace
}  // namespace flotilla::planner
