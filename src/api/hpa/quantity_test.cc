// Quantities as resource.Quantity reads (MilliValue) and writes
// (NewMilliQuantity(v, DecimalSI).String()) them.
#include "api/hpa/quantity.h"

#include <gtest/gtest.h>

namespace flotilla::api::hpa {
namespace {

TEST(QuantityTest, MilliValueOfTheForms) {
  struct Case {
    std::string text;
    std::optional<int64_t> milli;
  } cases[] = {
      {"100m", 100},         {"0.5", 500},       {"2", 2000},           {"1.5", 1500},
      {"0.0001", 1},         {"1e3", 1000000},   {"2k", 2000000},       {"1Ki", 1024000},
      {"64Mi", 67108864000}, {"+3", 3000},       {"-250m", -250},       {".5", 500},
      {"1.2345m", 2},        {"", std::nullopt}, {"abc", std::nullopt}, {"1x", std::nullopt},
      {"1E", INT64_MAX},  // 10^21 milli saturates
  };
  for (const Case& c : cases) EXPECT_EQ(ParseMilli(c.text), c.milli) << c.text;
}

TEST(QuantityTest, JsonNumbersAreQuantities) {
  EXPECT_EQ(ParseMilli(json::value(2)), 2000);
  EXPECT_EQ(ParseMilli(json::value(0.25)), 250);
  EXPECT_EQ(ParseMilli(json::value("300m")), 300);
  EXPECT_EQ(ParseMilli(json::value(true)), std::nullopt);
}

TEST(QuantityTest, CanonicalDecimalText) {
  EXPECT_EQ(FormatMilli(0), "0");
  EXPECT_EQ(FormatMilli(250), "250m");
  EXPECT_EQ(FormatMilli(1000), "1");
  EXPECT_EQ(FormatMilli(1500), "1500m");
  EXPECT_EQ(FormatMilli(2000000), "2k");
  EXPECT_EQ(FormatMilli(67108864000), "67108864");
}

}  // namespace
}  // namespace flotilla::api::hpa
