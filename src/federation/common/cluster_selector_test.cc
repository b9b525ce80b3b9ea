#include "federation/common/cluster_selector.h"

#include <gtest/gtest.h>

#include "api/federated.h"

namespace flotilla::federation {
namespace {

using Labels = std::map<std::string, std::string>;

ClusterSelector MustParse(std::string_view text) {
  StatusOr<ClusterSelector> s = ClusterSelector::Parse(text);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : ClusterSelector();
}

// The fields of an Invalid status's causes, in order.
std::vector<std::string> CauseFields(std::string_view text) {
  StatusOr<ClusterSelector> s = ClusterSelector::Parse(text, "sel");
  EXPECT_FALSE(s.ok());
  if (s.ok()) return {};
  EXPECT_TRUE(s.status().Is(Reason::kInvalid)) << s.status().ToString();
  std::vector<std::string> fields;
  for (const StatusCause& c : s.status().causes()) fields.push_back(c.field);
  return fields;
}

TEST(ClusterSelectorTest, DefaultAndEmptyListMatchEverything) {
  EXPECT_TRUE(ClusterSelector().Matches(Labels{}));
  EXPECT_TRUE(MustParse("[]").Matches(Labels{{"a", "b"}}));
  EXPECT_TRUE(MustParse("[]").Empty());
}

TEST(ClusterSelectorTest, InAndNotIn) {
  ClusterSelector in = MustParse(R"([{"key":"region","operator":"In","values":["eu","us"]}])");
  EXPECT_TRUE(in.Matches(Labels{{"region", "eu"}}));
  EXPECT_TRUE(in.Matches(Labels{{"region", "us"}}));
  EXPECT_FALSE(in.Matches(Labels{{"region", "asia"}}));
  EXPECT_FALSE(in.Matches(Labels{}));
  ClusterSelector notin = MustParse(R"([{"key":"region","operator":"NotIn","values":["eu"]}])");
  EXPECT_FALSE(notin.Matches(Labels{{"region", "eu"}}));
  EXPECT_TRUE(notin.Matches(Labels{{"region", "us"}}));
  EXPECT_TRUE(notin.Matches(Labels{}));  // absent key matches NotIn
}

TEST(ClusterSelectorTest, ExistsAndDoesNotExist) {
  ClusterSelector exists = MustParse(R"([{"key":"gpu","operator":"Exists"}])");
  EXPECT_TRUE(exists.Matches(Labels{{"gpu", ""}}));
  EXPECT_FALSE(exists.Matches(Labels{{"cpu", "x"}}));
  ClusterSelector absent = MustParse(R"([{"key":"gpu","operator":"DoesNotExist","values":[]}])");
  EXPECT_FALSE(absent.Matches(Labels{{"gpu", "yes"}}));
  EXPECT_TRUE(absent.Matches(Labels{}));
}

TEST(ClusterSelectorTest, GtAndLtCompareIntegers) {
  ClusterSelector gt = MustParse(R"([{"key":"tier","operator":"Gt","values":["2"]}])");
  EXPECT_TRUE(gt.Matches(Labels{{"tier", "10"}}));  // not a string comparison
  EXPECT_FALSE(gt.Matches(Labels{{"tier", "2"}}));
  EXPECT_FALSE(gt.Matches(Labels{{"tier", "high"}}));
  EXPECT_FALSE(gt.Matches(Labels{}));
  ClusterSelector lt = MustParse(R"([{"key":"tier","operator":"Lt","values":["-1"]}])");
  EXPECT_TRUE(lt.Matches(Labels{{"tier", "-5"}}));
  EXPECT_FALSE(lt.Matches(Labels{{"tier", "-1"}}));
}

TEST(ClusterSelectorTest, RequirementsAreAnded) {
  ClusterSelector s = MustParse(R"([{"key":"region","operator":"In","values":["eu"]},
                                   {"key":"tier","operator":"Gt","values":["1"]}])");
  EXPECT_TRUE(s.Matches(Labels{{"region", "eu"}, {"tier", "2"}}));
  EXPECT_FALSE(s.Matches(Labels{{"region", "eu"}, {"tier", "1"}}));
  EXPECT_FALSE(s.Matches(Labels{{"region", "us"}, {"tier", "2"}}));
}

TEST(ClusterSelectorTest, AcceptsTheOriginalFederationsOperators) {
  EXPECT_TRUE(
      MustParse(R"([{"key":"a","operator":"in","values":["x"]}])").Matches(Labels{{"a", "x"}}));
  EXPECT_TRUE(MustParse(R"([{"key":"a","operator":"notin","values":["x"]}])").Matches(Labels{}));
  EXPECT_TRUE(MustParse(R"([{"key":"a","operator":"exists"}])").Matches(Labels{{"a", "x"}}));
  EXPECT_TRUE(MustParse(R"([{"key":"a","operator":"!"}])").Matches(Labels{}));
  EXPECT_TRUE(
      MustParse(R"([{"key":"a","operator":"gt","values":["1"]}])").Matches(Labels{{"a", "2"}}));
  EXPECT_TRUE(
      MustParse(R"([{"key":"a","operator":"lt","values":["1"]}])").Matches(Labels{{"a", "0"}}));
  EXPECT_TRUE(
      MustParse(R"([{"key":"a","operator":"=","values":["x"]}])").Matches(Labels{{"a", "x"}}));
  EXPECT_TRUE(MustParse(R"([{"key":"a","operator":"!=","values":["x"]}])").Matches(Labels{}));
}

TEST(ClusterSelectorTest, MatchesAClustersLabels) {
  ClusterSelector s = MustParse(R"([{"key":"region","operator":"In","values":["eu"]}])");
  json::object eu =
      json::parse(R"({"metadata":{"name":"a","labels":{"region":"eu"}}})").as_object();
  json::object bare = json::parse(R"({"metadata":{"name":"b"}})").as_object();
  EXPECT_TRUE(s.Matches(eu));
  EXPECT_FALSE(s.Matches(bare));
  EXPECT_TRUE(ClusterSelector().Matches(bare));
}

TEST(ClusterSelectorTest, OfReadsTheAnnotation) {
  json::object obj = json::parse(R"({"metadata":{"name":"x"}})").as_object();
  StatusOr<ClusterSelector> none = ClusterSelector::Of(obj);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->Empty());
  obj["metadata"].as_object()["annotations"] =
      json::object{{api::kClusterSelectorAnnotation, R"([{"key":"a","operator":"Exists"}])"}};
  StatusOr<ClusterSelector> some = ClusterSelector::Of(obj);
  ASSERT_TRUE(some.ok());
  EXPECT_FALSE(some->Matches(Labels{}));
  obj["metadata"].as_object()["annotations"] =
      json::object{{api::kClusterSelectorAnnotation, "nope"}};
  StatusOr<ClusterSelector> bad = ClusterSelector::Of(obj);
  ASSERT_FALSE(bad.ok());
  ASSERT_EQ(bad.status().causes().size(), 1u);
  EXPECT_EQ(bad.status().causes()[0].field, kClusterSelectorField);
}

TEST(ClusterSelectorTest, RejectsBadJsonAndNonLists) {
  EXPECT_EQ(CauseFields("[{"), std::vector<std::string>{"sel"});
  EXPECT_EQ(CauseFields(""), std::vector<std::string>{"sel"});
  EXPECT_EQ(CauseFields(R"({"key":"a","operator":"Exists"})"), std::vector<std::string>{"sel"});
  EXPECT_EQ(CauseFields(R"(["a"])"), std::vector<std::string>{"sel[0]"});
}

TEST(ClusterSelectorTest, NamesEachBadField) {
  EXPECT_EQ(CauseFields(R"([{"key":"a","operator":"Near"}])"),
            std::vector<std::string>{"sel[0].operator"});
  EXPECT_EQ(CauseFields(R"([{"key":"a","operator":"Exists","value":"x"}])"),
            std::vector<std::string>{"sel[0].value"});
  EXPECT_EQ(CauseFields(R"([{"operator":"Exists"},{"key":"a"}])"),
            (std::vector<std::string>{"sel[0].key", "sel[1].operator"}));
  EXPECT_EQ(CauseFields(R"([{"key":"bad key!","operator":"Exists"}])"),
            std::vector<std::string>{"sel[0].key"});
  EXPECT_EQ(CauseFields(R"([{"key":"a","operator":"In","values":"x"}])"),
            std::vector<std::string>{"sel[0].values"});
  EXPECT_EQ(CauseFields(R"([{"key":"a","operator":"In","values":[1]}])"),
            std::vector<std::string>{"sel[0].values[0]"});
  EXPECT_EQ(CauseFields(R"([{"key":"a","operator":7}])"),
            std::vector<std::string>{"sel[0].operator"});
}

TEST(ClusterSelectorTest, ChecksHowManyValuesEachOperatorTakes) {
  EXPECT_EQ(CauseFields(R"([{"key":"a","operator":"In","values":[]}])"),
            std::vector<std::string>{"sel[0].values"});
  EXPECT_EQ(CauseFields(R"([{"key":"a","operator":"NotIn"}])"),
            std::vector<std::string>{"sel[0].values"});
  EXPECT_EQ(CauseFields(R"([{"key":"a","operator":"Exists","values":["x"]}])"),
            std::vector<std::string>{"sel[0].values"});
  EXPECT_EQ(CauseFields(R"([{"key":"a","operator":"Gt","values":["1","2"]}])"),
            std::vector<std::string>{"sel[0].values"});
  EXPECT_EQ(CauseFields(R"([{"key":"a","operator":"Lt","values":["one"]}])"),
            std::vector<std::string>{"sel[0].values[0]"});
}

TEST(ClusterSelectorTest, DefaultPathNamesTheAnnotation) {
  StatusOr<ClusterSelector> s = ClusterSelector::Parse(R"([{"key":"a","operator":"Near"}])");
  ASSERT_FALSE(s.ok());
  ASSERT_EQ(s.status().causes().size(), 1u);
  EXPECT_EQ(s.status().causes()[0].field,
            "metadata.annotations[federation.alpha.kubernetes.io/cluster-selector][0].operator");
  EXPECT_NE(s.status().message().find("[0].operator"), std::string::npos);
}

TEST(ClusterSelectorTest, ThePlacementClusterAdmitsOnlyThatCluster) {
  auto obj = ParseJsonObject(R"({"metadata": {"annotations": {
      "federation.kubernetes.io/cluster": "c2",
      "federation.alpha.kubernetes.io/cluster-selector":
          "[{\"key\": \"tier\", \"operator\": \"Exists\"}]"}}})");
  ASSERT_TRUE(obj.ok());
  StatusOr<ClusterSelector> s = ClusterSelector::Of(*obj);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto cluster = [](const std::string& name, bool tier) {
    json::object c{{"metadata", json::object{{"name", name}}}};
    if (tier) c["metadata"].as_object()["labels"] = json::object{{"tier", "1"}};
    return c;
  };
  EXPECT_TRUE(s->Matches(cluster("c2", true)));
  EXPECT_FALSE(s->Matches(cluster("c1", true)));
  EXPECT_FALSE(s->Matches(cluster("c2", false)));  // the selector still holds
  EXPECT_FALSE(s->Empty());
}

}  // namespace
}  // namespace flotilla::federation
