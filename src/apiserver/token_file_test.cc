#include "apiserver/token_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace flotilla::apiserver {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TokenFileTest, ParsesKubeApiserverFormat) {
  auto entries = ParseTokenCsv(
      "t1,alice,uid-1,\"g1,g2\"\n"
      "\n"
      "t2,bob,uid-2\r\n"
      "t3,carol,uid-3,single\n"
      "\"t,4\",\"da\"\"ve\",uid-4,\"\"",
      "tokens.csv");
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ASSERT_EQ(entries->size(), 4u);
  EXPECT_EQ((*entries)[0].token, "t1");
  EXPECT_EQ((*entries)[0].user, "alice");
  EXPECT_EQ((*entries)[0].uid, "uid-1");
  EXPECT_THAT((*entries)[0].groups, ElementsAre("g1", "g2"));
  EXPECT_EQ((*entries)[0].line, 1);
  EXPECT_EQ((*entries)[1].user, "bob");
  EXPECT_EQ((*entries)[1].uid, "uid-2");
  EXPECT_TRUE((*entries)[1].groups.empty());
  EXPECT_EQ((*entries)[1].line, 3);
  EXPECT_THAT((*entries)[2].groups, ElementsAre("single"));
  EXPECT_EQ((*entries)[3].token, "t,4");
  EXPECT_EQ((*entries)[3].user, "da\"ve");
  EXPECT_TRUE((*entries)[3].groups.empty());
}

TEST(TokenFileTest, SkipsEmptyTokensAsKubeApiserverDoes) {
  auto entries = ParseTokenCsv(",nobody,0\nt,somebody,1\n", "f");
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].user, "somebody");
}

TEST(TokenFileTest, ErrorsNameSourceAndLine) {
  auto too_few = ParseTokenCsv("t1,alice,1\nt2,bob\n", "tokens.csv");
  ASSERT_FALSE(too_few.ok());
  EXPECT_EQ(too_few.status().reason(), Reason::kBadRequest);
  EXPECT_THAT(too_few.status().message(), HasSubstr("tokens.csv line 2"));
  EXPECT_THAT(too_few.status().message(), HasSubstr("at least 3 columns"));

  auto bare = ParseTokenCsv("t1,al\"ice,1\n", "f");
  ASSERT_FALSE(bare.ok());
  EXPECT_THAT(bare.status().message(), HasSubstr("f line 1: bare \""));

  auto unterminated = ParseTokenCsv("\n\nt1,alice,1,\"g1,g2\n", "f");
  ASSERT_FALSE(unterminated.ok());
  EXPECT_THAT(unterminated.status().message(), HasSubstr("f line 3"));

  auto trailing = ParseTokenCsv("t1,\"alice\"x,1\n", "f");
  ASSERT_FALSE(trailing.ok());

  auto no_user = ParseTokenCsv("t1,,1\n", "f");
  ASSERT_FALSE(no_user.ok());
  EXPECT_THAT(no_user.status().message(), HasSubstr("user name is empty"));
}

TEST(TokenFileTest, QuotedFieldMaySpanLinesAndLaterLinesCountThem) {
  auto entries = ParseTokenCsv("t1,alice,1,\"g1,\ng2\"\nt2,bob\n", "f");
  ASSERT_FALSE(entries.ok());
  EXPECT_THAT(entries.status().message(), HasSubstr("f line 3"));
}

TEST(TokenFileTest, FormatRoundTrips) {
  TokenEntry entry{"tok\"en", "user,name", "uid", {"a:b", "c"}};
  std::string line = FormatTokenCsvLine(entry);
  EXPECT_EQ(FormatTokenCsvLine({"t", "u", "i", {"g"}}), "t,u,i,\"g\"\n");
  EXPECT_EQ(FormatTokenCsvLine({"t", "u", "i", {}}), "t,u,i\n");
  auto parsed = ParseTokenCsv(line + line, "f");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[1].token, entry.token);
  EXPECT_EQ((*parsed)[1].user, entry.user);
  EXPECT_EQ((*parsed)[1].uid, entry.uid);
  EXPECT_EQ((*parsed)[1].groups, entry.groups);
  EXPECT_EQ((*parsed)[1].line, 2);
}

}  // namespace
}  // namespace flotilla::apiserver
