#include "base/base64.h"

#include <gtest/gtest.h>

namespace flotilla {
namespace {

TEST(Base64Test, RoundTripsRfc4648Vectors) {
  const std::pair<std::string, std::string> cases[] = {{"", ""},
                                                       {"f", "Zg=="},
                                                       {"fo", "Zm8="},
                                                       {"foo", "Zm9v"},
                                                       {"foob", "Zm9vYg=="},
                                                       {"fooba", "Zm9vYmE="},
                                                       {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : cases) {
    EXPECT_EQ(Base64Encode(plain), encoded);
    EXPECT_EQ(Base64Decode(encoded), plain);
  }
}

TEST(Base64Test, RejectsInvalidInput) {
  EXPECT_FALSE(Base64Decode("Zm9").has_value());
  EXPECT_FALSE(Base64Decode("Zm=v").has_value());
  EXPECT_FALSE(Base64Decode("Z!9v").has_value());
}

}  // namespace
}  // namespace flotilla
