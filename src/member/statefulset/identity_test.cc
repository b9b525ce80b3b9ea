// A stateful pod's ordinal and its claims' names.
#include "member/statefulset/identity.h"

#include <gtest/gtest.h>

namespace flotilla::member::statefulset {
namespace {

TEST(Identity, OrdinalsAndNames) {
  EXPECT_EQ(OrdinalOf("web", "web-0"), 0);
  EXPECT_EQ(OrdinalOf("web", "web-12"), 12);
  EXPECT_EQ(OrdinalOf("web", "web-01"), std::nullopt);
  EXPECT_EQ(OrdinalOf("web", "web-x"), std::nullopt);
  EXPECT_EQ(OrdinalOf("web", "webby-1"), std::nullopt);
  EXPECT_EQ(OrdinalOf("web", "web-"), std::nullopt);
  EXPECT_EQ(OrdinalOf("web", "web-1-2"), std::nullopt);
  EXPECT_EQ(ClaimName("www", "web", 3), "www-web-3");
}

}  // namespace
}  // namespace flotilla::member::statefulset
