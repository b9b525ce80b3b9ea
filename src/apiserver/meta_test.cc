// Object metadata helpers: generated uids.
#include "apiserver/meta.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

namespace flotilla::apiserver {
namespace {

// Version-4 UUIDs in their canonical text, as kube-apiserver's
// (google/uuid) are, and no two alike.
TEST(MetaTest, UidsAreVersion4Uuids) {
  const std::regex uuid4("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  std::set<std::string> seen;
  std::set<char> digits;
  for (int i = 0; i < 1000; ++i) {
    std::string uid = NewUid();
    EXPECT_TRUE(std::regex_match(uid, uuid4)) << uid;
    EXPECT_TRUE(seen.insert(uid).second) << uid;
    digits.insert(uid.begin(), uid.end());
  }
  EXPECT_EQ(digits.size(), 17u);  // every hex digit and the dash turn up
}

}  // namespace
}  // namespace flotilla::apiserver
