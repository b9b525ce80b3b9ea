#include "api/kinds/util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/kinds/test_util.h"

namespace flotilla::api::kinds {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(SemanticEqual, ZeroValuesEqualAbsentFields) {
  struct Case {
    std::string a, b;
    bool equal;
  };
  const Case cases[] = {
      {R"({})", R"({"x":null,"y":"","z":0,"w":false,"v":{},"u":[]})", true},
      {R"({"a":{"b":[]}})", R"({"a":{}})", true},
      {R"({"a":1})", R"({"a":1.0})", true},
      {R"({"a":1})", R"({"a":2})", false},
      {R"({"a":[1,2]})", R"({"a":[2,1]})", false},
      {R"({"a":"x"})", R"({})", false},
      {R"({"a":{"b":"c"}})", R"({"a":{"b":"c","d":null}})", true},
  };
  for (const Case& c : cases) {
    json::value a = Obj(c.a);
    json::value b = Obj(c.b);
    EXPECT_EQ(SemanticEqual(&a, &b), c.equal) << c.a << " vs " << c.b;
    EXPECT_EQ(SemanticEqual(&b, &a), c.equal) << c.b << " vs " << c.a;
  }
  json::value empty = json::object();
  EXPECT_TRUE(SemanticEqual(nullptr, &empty));
}

TEST(GoRepr, LabelSelectorAsKubernetesPrintsIt) {
  json::value sel = Obj(R"({"matchLabels":{"b":"2","a":"1"}})");
  EXPECT_EQ(GoLabelSelector(&sel),
            R"(v1.LabelSelector{MatchLabels:map[string]string{"a":"1", "b":"2"}, )"
            R"(MatchExpressions:[]v1.LabelSelectorRequirement(nil)})");
  json::value exprs =
      Obj(R"({"matchExpressions":[{"key":"tier","operator":"In","values":["db"]}]})");
  EXPECT_EQ(GoLabelSelector(&exprs),
            R"(v1.LabelSelector{MatchLabels:map[string]string(nil), )"
            R"(MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{)"
            R"(Key:"tier", Operator:"In", Values:[]string{"db"}}}})");
  EXPECT_EQ(GoLabelSelector(nullptr), R"("null")");
  json::value empty_map = json::object();
  EXPECT_EQ(GoStringMap(&empty_map), "map[string]string{}");
  EXPECT_EQ(GoStringSlice(nullptr), "[]string(nil)");
}

TEST(Format, LabelsAndSelectors) {
  json::object labels = Obj(R"({"tier":"web","app":"shop"})");
  EXPECT_EQ(FormatLabels(&labels), "app=shop,tier=web");
  EXPECT_EQ(FormatLabels(nullptr), "<none>");
  json::value sel = Obj(
      R"({"matchLabels":{"app":"shop"},"matchExpressions":[{"key":"env","operator":"NotIn","values":["qa","dev"]},{"key":"canary","operator":"DoesNotExist"}]})");
  EXPECT_EQ(FormatLabelSelector(&sel), "app=shop,!canary,env notin (dev,qa)");
  json::value everything = json::object();
  EXPECT_EQ(FormatLabelSelector(&everything), "<none>");
  json::value bad = Obj(R"({"matchExpressions":[{"key":"a","operator":"Near"}]})");
  EXPECT_EQ(FormatLabelSelector(&bad), "<error>");
}

TEST(IsValidPortName, IanaServiceNames) {
  EXPECT_THAT(IsValidPortName("http"), IsEmpty());
  EXPECT_THAT(IsValidPortName("h2c-1"), IsEmpty());
  EXPECT_THAT(IsValidPortName("80"), ElementsAre("must contain at least one letter (a-z)"));
  EXPECT_THAT(IsValidPortName("a--b"), ElementsAre("must not contain consecutive hyphens"));
  EXPECT_THAT(IsValidPortName("-ab"), ElementsAre("must not begin or end with a hyphen"));
  EXPECT_THAT(
      IsValidPortName("Web"),
      ElementsAre("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"));
  EXPECT_THAT(IsValidPortName("abcdefghijklmnop"),
              ElementsAre("must be no more than 15 characters"));
}

TEST(TimestampSince, UnknownWithoutATime) {
  TimePoint now;
  ASSERT_TRUE(ParseRfc3339("2024-05-01T12:00:00Z", &now));
  json::value t("2024-05-01T11:57:00Z");
  EXPECT_EQ(TimestampSince(&t, now), "3m");
  json::value bad("yesterday");
  EXPECT_EQ(TimestampSince(&bad, now), "<unknown>");
  EXPECT_EQ(TimestampSince(nullptr, now), "<unknown>");
}

TEST(Defaulting, SetIfUnsetKeepsValuesAndSetIfEmptyReplacesEmptyStrings) {
  json::object o = Obj(R"({"a":0,"b":null,"c":"","d":"x"})");
  SetIfUnset(o, "a", 5);
  SetIfUnset(o, "b", 5);
  SetIfEmpty(o, "c", "y");
  SetIfEmpty(o, "d", "y");
  SetIfUnset(o, "e", true);
  EXPECT_EQ(json::value(o), json::value(Obj(R"({"a":0,"b":5,"c":"y","d":"x","e":true})")));
}

}  // namespace
}  // namespace flotilla::api::kinds
