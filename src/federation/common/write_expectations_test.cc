#include "federation/common/write_expectations.h"

#include <gtest/gtest.h>

namespace flotilla::federation {
namespace {

runtime::ObjectPtr Version(const std::string& rv) {
  return std::make_shared<const json::object>(
      json::object{{"metadata", json::object{{"name", "web"}, {"resourceVersion", rv}}}});
}

class WriteExpectationsTest : public ::testing::Test {
 protected:
  // A write of the copy in `cluster` made on `seen` that stored `stored`.
  void Write(const std::string& cluster, runtime::ObjectPtr seen, StatusOr<json::object> stored,
             const std::string& key = "ns/web") {
    expectations_.Expect(key, cluster, seen);
    expectations_.Done(key, cluster, stored);
  }

  FakeClock clock_;
  WriteExpectations expectations_{clock_, std::chrono::seconds(30)};
};

TEST_F(WriteExpectationsTest, WithoutWritesNoCacheIsBehind) {
  EXPECT_FALSE(expectations_.Behind("ns/web", "a", nullptr));
  EXPECT_FALSE(expectations_.Behind("ns/web", "a", Version("3")));
}

TEST_F(WriteExpectationsTest, ACreateIsAwaitedUntilTheCacheHoldsACopy) {
  Write("a", nullptr, *Version("4"));
  EXPECT_TRUE(expectations_.Behind("ns/web", "a", nullptr));
  EXPECT_FALSE(expectations_.Behind("ns/web", "b", nullptr));  // per cluster
  EXPECT_FALSE(expectations_.Behind("ns/web", "a", Version("4")));
  // Met once is forgotten: the copy's later changes are the cache's.
  EXPECT_FALSE(expectations_.Behind("ns/web", "a", nullptr));
  EXPECT_EQ(expectations_.size(), 0u);
}

TEST_F(WriteExpectationsTest, AnUpdateIsAwaitedWhileTheCacheHoldsTheVersionItWasMadeOn) {
  Write("a", Version("3"), *Version("5"));
  EXPECT_TRUE(expectations_.Behind("ns/web", "a", Version("3")));
  // Any other version comes after the write (it was made on version 3).
  EXPECT_FALSE(expectations_.Behind("ns/web", "a", Version("7")));
  EXPECT_FALSE(expectations_.Behind("ns/web", "a", Version("3")));
}

TEST_F(WriteExpectationsTest, ADeleteIsAwaitedUntilTheCopyGoesOrChanges) {
  expectations_.Expect("ns/web", "a", Version("3"));
  expectations_.Done("ns/web", "a", Status::Ok());
  EXPECT_TRUE(expectations_.Behind("ns/web", "a", Version("3")));
  EXPECT_FALSE(expectations_.Behind("ns/web", "a", nullptr));
  expectations_.Expect("ns/web", "a", Version("8"));
  expectations_.Done("ns/web", "a", Status::Ok());
  // Still there, being deleted (a finalizer holds it): a newer version.
  EXPECT_FALSE(expectations_.Behind("ns/web", "a", Version("9")));
}

TEST_F(WriteExpectationsTest, AFailedWriteOrOneThatStoredNothingNewIsNotAwaited) {
  Write("a", nullptr, Status(Reason::kAlreadyExists, "exists"));
  EXPECT_FALSE(expectations_.Behind("ns/web", "a", nullptr));
  Write("a", Version("3"), *Version("3"));
  EXPECT_FALSE(expectations_.Behind("ns/web", "a", Version("3")));
  expectations_.Expect("ns/web", "a", Version("3"));
  expectations_.Done("ns/web", "a", Status(Reason::kNotFound, "gone"));
  EXPECT_FALSE(expectations_.Behind("ns/web", "a", Version("3")));
  EXPECT_EQ(expectations_.size(), 0u);
}

TEST_F(WriteExpectationsTest, AnEventOfTheCopyMeetsTheExpectation) {
  // Created and deleted by someone else before the check looks again: the
  // cache holds no copy, as before the create, but delivered the events.
  Write("a", nullptr, *Version("4"));
  expectations_.Observed("ns/web", "a", *Version("4"));
  EXPECT_FALSE(expectations_.Behind("ns/web", "a", nullptr));
  // The event may come before the write returns.
  expectations_.Expect("ns/web", "a", nullptr);
  expectations_.Observed("ns/web", "a", *Version("6"));
  expectations_.Done("ns/web", "a", *Version("6"));
  EXPECT_FALSE(expectations_.Behind("ns/web", "a", nullptr));
}

TEST_F(WriteExpectationsTest, ALateEventOfTheVersionTheWriteWasMadeOnDoesNotCount) {
  Write("a", Version("3"), *Version("5"));
  expectations_.Observed("ns/web", "a", *Version("3"));
  EXPECT_TRUE(expectations_.Behind("ns/web", "a", Version("3")));
}

TEST_F(WriteExpectationsTest, AnExpectationLapses) {
  Write("a", nullptr, *Version("4"));
  clock_.Advance(std::chrono::seconds(29));
  EXPECT_TRUE(expectations_.Behind("ns/web", "a", nullptr));
  clock_.Advance(std::chrono::seconds(1));
  EXPECT_FALSE(expectations_.Behind("ns/web", "a", nullptr));
  EXPECT_EQ(expectations_.size(), 0u);
}

TEST_F(WriteExpectationsTest, ForgetDropsEveryClusterOfOneObjectOnly) {
  Write("a", nullptr, *Version("4"));
  Write("b", nullptr, *Version("5"));
  Write("a", nullptr, *Version("6"), "ns/web2");
  Write("a", nullptr, *Version("7"), "ns/w");
  expectations_.Forget("ns/web");
  EXPECT_FALSE(expectations_.Behind("ns/web", "a", nullptr));
  EXPECT_FALSE(expectations_.Behind("ns/web", "b", nullptr));
  EXPECT_TRUE(expectations_.Behind("ns/web2", "a", nullptr));
  EXPECT_TRUE(expectations_.Behind("ns/w", "a", nullptr));
}

}  // namespace
}  // namespace flotilla::federation
