#include "base/token_bucket.h"

#include <gtest/gtest.h>

#include <future>

namespace flotilla {
namespace {

using std::chrono::milliseconds;

TEST(TokenBucketTest, BurstThenOneTokenPerInterval) {
  FakeClock clock;
  TokenBucket bucket(/*qps=*/2, /*burst=*/3, clock);
  EXPECT_EQ(bucket.Reserve(), Duration::zero());
  EXPECT_EQ(bucket.Reserve(), Duration::zero());
  EXPECT_EQ(bucket.Reserve(), Duration::zero());
  // Empty: each further caller reserves a token that does not exist yet.
  EXPECT_EQ(bucket.Reserve(), milliseconds(500));
  EXPECT_EQ(bucket.Reserve(), milliseconds(1000));
  clock.Advance(milliseconds(1000));  // pays back both reservations
  EXPECT_EQ(bucket.Reserve(), milliseconds(500));
}

TEST(TokenBucketTest, RefillStopsAtBurst) {
  FakeClock clock;
  TokenBucket bucket(10, 2, clock);
  EXPECT_EQ(bucket.Reserve(), Duration::zero());
  EXPECT_EQ(bucket.Reserve(), Duration::zero());
  clock.Advance(std::chrono::hours(1));
  EXPECT_EQ(bucket.Reserve(), Duration::zero());
  EXPECT_EQ(bucket.Reserve(), Duration::zero());
  EXPECT_EQ(bucket.Reserve(), milliseconds(100));
}

TEST(TokenBucketTest, NonPositiveQpsDisablesLimiting) {
  FakeClock clock;
  TokenBucket bucket(0, 1, clock);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(bucket.Reserve(), Duration::zero());
}

TEST(TokenBucketTest, TryTakeTakesNothingWhenEmpty) {
  FakeClock clock;
  TokenBucket bucket(2, 1, clock);  // a token every 500ms
  EXPECT_EQ(bucket.TryTake(), Duration::zero());
  auto ms = [](Duration d) { return std::chrono::round<milliseconds>(d).count(); };
  EXPECT_EQ(ms(bucket.TryTake()), 500);
  EXPECT_EQ(ms(bucket.TryTake()), 500);  // nothing was reserved
  clock.Advance(milliseconds(400));
  EXPECT_EQ(ms(bucket.TryTake()), 100);
  clock.Advance(milliseconds(150));
  EXPECT_EQ(bucket.TryTake(), Duration::zero());
}

TEST(TokenBucketTest, WaitBlocksUntilTheClockReachesTheToken) {
  FakeClock clock;
  TokenBucket bucket(1, 1, clock);
  bucket.Wait();  // the burst token: no wait
  auto waiter = std::async(std::launch::async, [&] { bucket.Wait(); });
  EXPECT_EQ(waiter.wait_for(milliseconds(50)), std::future_status::timeout);
  // The waiter may not have reserved yet; advancing in steps lets it finish
  // whenever it did.
  for (int i = 0; i < 100 && waiter.wait_for(milliseconds(10)) != std::future_status::ready; ++i) {
    clock.Advance(std::chrono::seconds(1));
  }
  EXPECT_EQ(waiter.wait_for(milliseconds(0)), std::future_status::ready);
}

}  // namespace
}  // namespace flotilla
