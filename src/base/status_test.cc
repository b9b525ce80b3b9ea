#include "base/status.h"

#include <gtest/gtest.h>

namespace flotilla {
namespace {

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), 200);
  EXPECT_EQ(s.reason_string(), "");
}

TEST(StatusTest, ReasonsMapToKubernetesCodes) {
  EXPECT_EQ(Status::NotFound("x").code(), 404);
  EXPECT_EQ(Status::AlreadyExists("x").code(), 409);
  EXPECT_EQ(Status::Conflict("x").code(), 409);
  EXPECT_EQ(Status::Invalid("x").code(), 422);
  EXPECT_EQ(Status::Expired("x").code(), 410);
  EXPECT_EQ(Status::Expired("x").reason_string(), "Expired");
  EXPECT_EQ(Status(Reason::kRequestEntityTooLarge, "x").code(), 413);
  EXPECT_EQ(Status(Reason::kUnsupportedMediaType, "x").code(), 415);
}

TEST(StatusTest, ReasonRoundTrips) {
  EXPECT_EQ(ReasonFromString("Conflict", 409), Reason::kConflict);
  EXPECT_EQ(ReasonFromString("AlreadyExists", 409), Reason::kAlreadyExists);
  EXPECT_EQ(ReasonFromString("", 404), Reason::kNotFound);
  EXPECT_EQ(ReasonFromString("Weird", 503), Reason::kServiceUnavailable);
}

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return Status::Invalid("odd");
  return x / 2;
}

StatusOr<int> Quarter(int x) {
  FLOTILLA_ASSIGN_OR_RETURN(int h, Half(x));
  return Half(h);
}

TEST(StatusOrTest, PropagatesErrors) {
  ASSERT_TRUE(Quarter(8).ok());
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_TRUE(Quarter(6).status().Is(Reason::kInvalid));
  EXPECT_TRUE(Quarter(6).status().message() == "odd");
}

}  // namespace
}  // namespace flotilla
