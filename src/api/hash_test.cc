#include "api/hash.h"

#include <gtest/gtest.h>

namespace flotilla::api {
namespace {

json::value JsonOf(std::string_view text) { return json::parse(text); }

TEST(HashTest, CanonicalJsonSortsKeysAtEveryLevel) {
  EXPECT_EQ(CanonicalJson(JsonOf(R"({"b":1,"a":{"d":[3,{"z":1,"y":2}],"c":null}})")),
            R"({"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1})");
}

TEST(HashTest, PrunedCanonicalLeavesOutWhatIsEmptyOnceItsInsideIs) {
  json::value v = JsonOf(
      R"({"b":{"x":null,"y":{}},"a":[null,{},[],{"q":null}],"c":"","d":[],"e":{"f":{"g":[]}},"h":0})");
  FieldRefs fields;
  for (const auto& [k, x] : v.get_object()) fields.emplace_back(k, &x);
  std::string out = "prefix";
  ASSERT_TRUE(AppendPrunedCanonical(fields, out));
  // Array elements stay; "" and 0 are values, not empties.
  EXPECT_EQ(out, R"(prefix{"a":[null,{},[],{}],"c":"","h":0})");

  json::value empty = JsonOf(R"({"a":null,"b":{"c":[]}})");
  fields.clear();
  for (const auto& [k, x] : empty.get_object()) fields.emplace_back(k, &x);
  out = "prefix";
  EXPECT_FALSE(AppendPrunedCanonical(fields, out));
  EXPECT_EQ(out, "prefix");
  EXPECT_FALSE(AppendPrunedCanonical({}, out));
}

TEST(HashTest, KeysAreEscaped) {
  json::value v = JsonOf(R"({"k\"ey":"v\n"})");
  FieldRefs fields{{v.get_object().begin()->key(), &v.get_object().begin()->value()}};
  std::string out;
  ASSERT_TRUE(AppendPrunedCanonical(fields, out));
  EXPECT_EQ(out, R"({"k\"ey":"v\n"})");
}

}  // namespace
}  // namespace flotilla::api
