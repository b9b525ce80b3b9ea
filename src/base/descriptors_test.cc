#include "base/descriptors.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

namespace flotilla {
namespace {

rlimit Current() {
  rlimit lim{};
  EXPECT_EQ(getrlimit(RLIMIT_NOFILE, &lim), 0);
  return lim;
}

TEST(DescriptorsTest, TheSoftLimitRisesToTheHardLimit) {
  rlimit before = Current();
  if (before.rlim_cur > 64) {
    rlimit lowered{64, before.rlim_max};
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lowered), 0);
  }
  uint64_t got = RaiseDescriptorLimit();
  rlimit after = Current();
  EXPECT_EQ(after.rlim_cur, after.rlim_max);
  EXPECT_EQ(after.rlim_max, before.rlim_max);
  EXPECT_EQ(got, after.rlim_cur);
}

TEST(DescriptorsTest, PastTheHardLimitOnlyWhereAllowedAndNeverLower) {
  rlimit before = Current();
  uint64_t want = before.rlim_max == RLIM_INFINITY ? before.rlim_max : before.rlim_max + 1;
  uint64_t got = RaiseDescriptorLimit(want);
  rlimit after = Current();
  EXPECT_EQ(got, after.rlim_cur);
  // Raised past the hard limit where privileged, else to it.
  EXPECT_TRUE(got == want || got == before.rlim_max) << got;
  EXPECT_GE(after.rlim_cur, before.rlim_cur);
  // A smaller want lowers nothing.
  EXPECT_EQ(RaiseDescriptorLimit(16), after.rlim_cur);
}

}  // namespace
}  // namespace flotilla
