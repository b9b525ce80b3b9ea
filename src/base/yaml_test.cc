#include "base/yaml.h"

#include <gtest/gtest.h>

namespace flotilla {
namespace {

TEST(ParseYaml, PlainScalarsResolveAsYamlCoreSchema) {
  auto v = ParseYaml(
      "a: 1\nb: -2\nc: 1.5\nd: true\ne: null\nf: ~\ng: text\nh: '3'\ni: \"false\"\nj: 0x10\n"
      "k: 18446744073709551615\nl:\nm: [1, two]\n");
  ASSERT_TRUE(v.ok()) << v.status().message();
  const json::object& o = v->as_object();
  EXPECT_EQ(o.at("a"), json::value(1));
  EXPECT_EQ(o.at("b"), json::value(-2));
  EXPECT_EQ(o.at("c"), json::value(1.5));
  EXPECT_EQ(o.at("d"), json::value(true));
  EXPECT_TRUE(o.at("e").is_null());
  EXPECT_TRUE(o.at("f").is_null());
  EXPECT_EQ(o.at("g"), json::value("text"));
  EXPECT_EQ(o.at("h"), json::value("3"));
  EXPECT_EQ(o.at("i"), json::value("false"));
  EXPECT_EQ(o.at("j"), json::value(16));
  EXPECT_EQ(o.at("k"), json::value(UINT64_MAX));
  EXPECT_TRUE(o.at("l").is_null());
  EXPECT_EQ(o.at("m"), (json::array{1, "two"}));
}

TEST(ParseYaml, JsonParsesAsJson) {
  auto v = ParseYaml(R"({"kind":"ConfigMap","data":{"a":"1"},"n":[1,2.5,false,null]})");
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(*v, *ParseJson(R"({"kind":"ConfigMap","data":{"a":"1"},"n":[1,2.5,false,null]})"));
}

TEST(ParseYaml, ExplicitTags) {
  auto v = ParseYaml("a: !!str 12\nb: !!int \"7\"\nc: !!float 2\n");
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->at("a"), json::value("12"));
  EXPECT_EQ(v->at("b"), json::value(7));
  EXPECT_EQ(v->at("c"), json::value(2));
}

TEST(ParseYaml, AnchorsAndAliasesAreCopiedWithinABudget) {
  auto v = ParseYaml("a: &x {k: [1, 2]}\nb: *x\n");
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->at("a"), v->at("b"));
  // Nine levels of ten aliases each would be a billion values.
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    std::string prev(1, static_cast<char>(c - 1));
    bomb += std::string(1, c) + ": &" + std::string(1, c) + " [";
    for (int i = 0; i < 10; ++i) bomb += (i ? ", *" : "*") + prev;
    bomb += "]\n";
  }
  auto refused = ParseYaml(bomb);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "yaml: document contains excessive aliasing");
}

TEST(ParseYaml, KeysAreStringsAsInJson) {
  auto v = ParseYaml("1: a\ntrue: b\n~: c\n");
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->at("1"), json::value("a"));
  EXPECT_EQ(v->at("true"), json::value("b"));
  EXPECT_EQ(v->at("null"), json::value("c"));
}

TEST(ParseYaml, BadInputIsABadRequest) {
  for (const char* text :
       {"a: [1, 2\n", "a: b: c\n", "a: 1\n---\nb: 2\n", "a: .inf\n", "? [1, 2]\n: x\n",
        "a: !!int twelve\n", "a: \"\xff\"\n", "\xc0\x80: b\n"}) {
    auto v = ParseYaml(text);
    ASSERT_FALSE(v.ok()) << text;
    EXPECT_TRUE(v.status().Is(Reason::kBadRequest)) << text;
    EXPECT_NE(v.status().message().find("yaml: "), std::string::npos) << v.status().message();
  }
}

}  // namespace
}  // namespace flotilla
