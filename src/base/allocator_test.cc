#include "base/allocator.h"

#include <gtest/gtest.h>

namespace flotilla {
namespace {

TEST(AllocatorTest, AddsTheThreadCacheCountToWhatIsSet) {
  EXPECT_EQ(WithMallocTunables(""), "glibc.malloc.tcache_count=128");
  EXPECT_EQ(WithMallocTunables("glibc.malloc.mxfast=0"),
            "glibc.malloc.mxfast=0:glibc.malloc.tcache_count=128");
  EXPECT_EQ(WithMallocTunables("glibc.malloc.tcache_count_x=1"),
            "glibc.malloc.tcache_count_x=1:glibc.malloc.tcache_count=128");
}

TEST(AllocatorTest, KeepsACountAlreadySet) {
  EXPECT_EQ(WithMallocTunables("glibc.malloc.tcache_count=7"), std::nullopt);
  EXPECT_EQ(WithMallocTunables("glibc.malloc.mxfast=0:glibc.malloc.tcache_count=100"),
            std::nullopt);
  EXPECT_EQ(WithMallocTunables("glibc.malloc.tcache_count"), std::nullopt);
}

}  // namespace
}  // namespace flotilla
