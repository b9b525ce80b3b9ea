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

}  // namespace
}  // namespace flotilla
