// ParsePreferences as the annotation's admission sees it: the seed's field
// names, Go-compatible defaults, and an Invalid status naming the field for
// every bad document.
#include "planner/preferences.h"

#include <gtest/gtest.h>

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
