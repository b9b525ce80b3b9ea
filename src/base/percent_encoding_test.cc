#include "base/percent_encoding.h"

#include <gtest/gtest.h>

namespace flotilla {
namespace {

TEST(PercentEncoding, UnreservedStayOthersAreEncoded) {
  EXPECT_EQ(PercentEncode("aZ09-_.~"), "aZ09-_.~");
  EXPECT_EQ(PercentEncode("a/b c%+"), "a%2Fb%20c%25%2B");
  EXPECT_EQ(PercentEncode("\xc3\xa9"), "%C3%A9");
}

TEST(PercentEncoding, DecodeIsTheInverseAndKeepsMalformedSequences) {
  for (std::string s : {"", "a/b c", "%", "x=1&y=2", "\xc3\xa9"}) {
    EXPECT_EQ(PercentDecode(PercentEncode(s), false), s);
  }
  EXPECT_EQ(PercentDecode("a+b%2", true), "a b%2");
  EXPECT_EQ(PercentDecode("a+b%zz", false), "a+b%zz");
  EXPECT_EQ(PercentDecode("%2f%2F", false), "//");
}

}  // namespace
}  // namespace flotilla
