#include "base/utf8.h"

#include <gtest/gtest.h>

namespace flotilla {
namespace {

TEST(Utf8Test, ValidAsGoReadsIt) {
  EXPECT_TRUE(ValidUtf8(""));
  EXPECT_TRUE(ValidUtf8("plain"));
  EXPECT_TRUE(ValidUtf8("Zürich 東京 \xF0\x9F\x9A\xA2"));
  EXPECT_FALSE(ValidUtf8("\x95"));              // a lone continuation byte
  EXPECT_FALSE(ValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(ValidUtf8("\xED\xA0\x80"));      // a surrogate
  EXPECT_FALSE(ValidUtf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(ValidUtf8("\xE6\x9D"));          // cut short
}

TEST(Utf8Test, InvalidBytesBecomeReplacementCharacters) {
  EXPECT_EQ(ToValidUtf8("ok"), "ok");
  EXPECT_EQ(ToValidUtf8("a\x95"
                        "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(ToValidUtf8("\xE6\x9D"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // each byte, as Go's encoder
  EXPECT_EQ(ToValidUtf8("\xC3\xBC\xFF"), "\xC3\xBC\xEF\xBF\xBD");
  EXPECT_TRUE(ValidUtf8(ToValidUtf8("\n\xF3\xFF\xFF\xFF\x12")));
}

}  // namespace
}  // namespace flotilla
