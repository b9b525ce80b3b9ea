// The ledger of a federated Job's shares: division, a lost cluster's debt,
// the counts, and the annotation's round trip.
#include "federation/job/shares.h"

#include <gtest/gtest.h>

namespace flotilla::federation::job {
namespace {

TEST(Shares, DivideGivesEachClusterItsShareOfParallelismRoundedUp) {
  Ledger l = Divide(12, 3, {{"a", 4}, {"b", 4}, {"c", 4}, {"d", 0}});
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l["a"].completions, 4);
  EXPECT_EQ(l["a"].parallelism, 1);
  Ledger wide = Divide(10, 8, {{"a", 7}, {"b", 3}});
  EXPECT_EQ(wide["a"].parallelism, 6);  // ceil(8 * 7 / 10)
  EXPECT_EQ(wide["b"].parallelism, 3);  // ceil(2.4), at most its completions
}

TEST(Shares, AWorkQueueDividesParallelism) {
  Ledger l = Divide(std::nullopt, 5, {{"a", 3}, {"b", 2}});
  EXPECT_FALSE(l["a"].completions.has_value());
  EXPECT_EQ(l["a"].parallelism, 3);
  EXPECT_EQ(l["b"].parallelism, 2);
}

TEST(Shares, ALostClusterOwesWhatItDidNotComplete) {
  Share s{.completions = 4, .parallelism = 2, .succeeded = 1, .failed = 2, .queued = 3};
  EXPECT_EQ(CloseLost(s), 6);  // 4 - 1, and what was queued for it
  EXPECT_TRUE(s.lost);
  EXPECT_EQ(s.done, 1);
  EXPECT_EQ(s.failed_done, 2);
  EXPECT_EQ(s.completions, 0);
  EXPECT_EQ(CloseLost(s), 0);  // once
  Ledger l{{"a", s}, {"b", Share{.completions = 8, .succeeded = 5}}};
  EXPECT_EQ(Succeeded(l), 6);
  EXPECT_EQ(Failed(l), 2);
}

TEST(Shares, TheAnnotationRoundTrips) {
  Ledger l{
      {"a",
       Share{.completions = 4, .parallelism = 2, .succeeded = 3, .queued = 2, .retired = "uid-1"}},
      {"b", Share{.completions = 0, .done = 1, .lost = true}},
      {"c", Share{.parallelism = 5, .failed = 7, .failed_job = true}}};
  json::object job{
      {"metadata",
       json::object{{"annotations", json::object{{kSharesAnnotation, SerializeLedger(l)}}}}}};
  EXPECT_EQ(ParseLedger(job), l);
  job["metadata"].as_object()["annotations"].as_object()[kSharesAnnotation] = "not json";
  EXPECT_TRUE(ParseLedger(job).empty());
}

TEST(Shares, TheBreakdownCountsCompletionsPerCluster) {
  Ledger l{{"a", Share{.completions = 4, .parallelism = 2, .succeeded = 3, .done = 2, .queued = 1}},
           {"b", Share{.completions = 0, .done = 1, .lost = true}},
           {"c", Share{.parallelism = 5}}};
  EXPECT_EQ(BreakdownAnnotation(l), R"({"clusters":{"a":{"planned":7,"ready":5,"reachable":true},)"
                                    R"("b":{"planned":1,"ready":1,"reachable":false},)"
                                    R"("c":{"planned":5,"ready":0,"reachable":true}}})");
}

}  // namespace
}  // namespace flotilla::federation::job
