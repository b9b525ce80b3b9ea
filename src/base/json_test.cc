#include "base/json.h"

#include <gtest/gtest.h>

namespace flotilla {
namespace {

TEST(JsonTest, ParsesObjects) {
  auto o = ParseJsonObject(R"({"metadata":{"name":"x","generation":3}})");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(*GetString(*GetObject(*o, "metadata"), "name"), "x");
  EXPECT_EQ(*GetInt(*GetObject(*o, "metadata"), "generation"), 3);
  EXPECT_NE(Find(*o, "metadata.name"), nullptr);
  EXPECT_EQ(Find(*o, "metadata.uid"), nullptr);
}

TEST(JsonTest, MalformedIsBadRequestWithOffset) {
  auto v = ParseJson(R"({"a": )");
  ASSERT_FALSE(v.ok());
  EXPECT_TRUE(v.status().Is(Reason::kBadRequest));
  EXPECT_NE(v.status().message().find("invalid JSON"), std::string::npos);
}

TEST(JsonTest, RejectsTrailingGarbageAndNonObjects) {
  EXPECT_FALSE(ParseJson(R"({"a":1} x)").ok());
  EXPECT_TRUE(ParseJson("{\"a\":1}\n").ok());
  EXPECT_FALSE(ParseJsonObject("[1,2]").ok());
}

TEST(JsonTest, RawMemberFindsATopLevelValueWithoutParsingTheRest) {
  std::string_view doc = R"({"kind":"Pod", "spec" : {"metadata":{"name":"inner"},"s":"a\"}b"},)"
                         R"( "list":[1,[2,"]"],{}],"n":-1.5e3,"t":true,)"
                         "\n\t\"metadata\":{\"name\":\"outer\"},\"after\":\"x\"}";
  EXPECT_EQ(RawMember(doc, "metadata"), R"({"name":"outer"})");
  EXPECT_EQ(RawMember(doc, "kind"), R"("Pod")");
  EXPECT_EQ(RawMember(doc, "list"), R"([1,[2,"]"],{}])");
  EXPECT_EQ(RawMember(doc, "n"), "-1.5e3");
  EXPECT_EQ(RawMember(doc, "t"), "true");
  EXPECT_EQ(RawMember(doc, "after"), R"("x")");
  EXPECT_EQ(RawMember(doc, "name"), std::nullopt) << "nested keys are not top-level";
  EXPECT_EQ(RawMember(doc, "missing"), std::nullopt);
  // What the member's text parses to is the parsed document's member.
  auto whole = ParseJsonObject(doc);
  ASSERT_TRUE(whole.ok());
  auto meta = ParseJsonObject(*RawMember(doc, "metadata"));
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(*meta, whole->at("metadata"));
}

TEST(JsonTest, RawMemberRefusesWhatIsNotAnObject) {
  EXPECT_EQ(RawMember("", "a"), std::nullopt);
  EXPECT_EQ(RawMember("[1]", "a"), std::nullopt);
  EXPECT_EQ(RawMember(R"({"a")", "a"), std::nullopt);
  EXPECT_EQ(RawMember(R"({"a":)", "a"), std::nullopt);
  EXPECT_EQ(RawMember(R"({"a":{"b":1)", "a"), std::nullopt) << "unterminated";
  EXPECT_EQ(RawMember(R"({"a":[1,{"b":"]}"})", "a"), std::nullopt) << "unterminated";
  // What follows the member is not read.
  EXPECT_EQ(RawMember(R"({"a":{"b":1})", "a"), R"({"b":1})");
  EXPECT_EQ(RawMember(R"({"a":"x)", "a"), std::nullopt);
  EXPECT_EQ(RawMember(R"({"b":1 "a":2})", "a"), std::nullopt) << "missing comma";
  EXPECT_EQ(RawMember(R"({})", "a"), std::nullopt);
  EXPECT_EQ(RawMember(R"( {"a":1} )", "a"), "1");
}

// What a real API server returns for what was sent: defaults added, zero
// values written as null, numbers as another JSON type.
TEST(JsonTest, JsonContainsTakesWhatAServerAddsAsNoDifference) {
  auto v = [](std::string_view text) { return *ParseJson(text); };
  json::value sent = v(R"({"replicas": 2, "template": {"metadata": {"labels": {"app": "web"}},
      "spec": {"containers": [{"name": "c", "image": "nginx"}]}}})");
  json::value returned = v(R"({"replicas": 2, "progressDeadlineSeconds": 600,
      "template": {"metadata": {"creationTimestamp": null, "labels": {"app": "web"}},
      "spec": {"containers": [{"name": "c", "image": "nginx", "imagePullPolicy": "Always"}],
               "restartPolicy": "Always"}}})");
  EXPECT_TRUE(JsonContains(returned, sent));
  EXPECT_FALSE(JsonContains(sent, returned));
  // Null, {} and [] in what is wanted count as absent.
  EXPECT_TRUE(JsonContains(v(R"({"a": 1})"), v(R"({"a": 1, "b": null, "c": {}, "d": []})")));
  // A changed value, a missing element, another length: different.
  EXPECT_FALSE(JsonContains(v(R"({"a": 2})"), v(R"({"a": 1})")));
  EXPECT_FALSE(JsonContains(v(R"({"a": [1]})"), v(R"({"a": [1, 2]})")));
  EXPECT_FALSE(JsonContains(v(R"({"a": [1, 2, 3]})"), v(R"({"a": [1, 2]})")));
  EXPECT_FALSE(JsonContains(v(R"({})"), v(R"({"a": "x"})")));
  EXPECT_FALSE(JsonContains(v(R"({"a": "1"})"), v(R"({"a": 1})")));
  // Numbers compare by value whatever their JSON type.
  EXPECT_TRUE(JsonContains(json::value(uint64_t{5}), json::value(int64_t{5})));
  EXPECT_TRUE(JsonContains(json::value(5.0), json::value(int64_t{5})));
  EXPECT_FALSE(JsonContains(json::value(uint64_t{5}), json::value(int64_t{-5})));
}

}  // namespace
}  // namespace flotilla
