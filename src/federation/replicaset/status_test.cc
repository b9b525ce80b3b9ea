#include "federation/replicaset/status.h"

#include <gtest/gtest.h>

#include <vector>

namespace flotilla::federation::replicaset {
namespace {

json::object Frs(int64_t generation, int64_t observed) {
  return json::object{{"metadata", json::object{{"generation", generation}}},
                      {"status", json::object{{"observedGeneration", observed}}}};
}

TEST(StatusTest, SumsTheLocalCountsAndObservesOnlyWhenEveryClusterDid) {
  std::vector<LocalStatus> locals = {{.cluster = "A",
                                      .planned = 3,
                                      .replicas = 3,
                                      .fully_labeled = 3,
                                      .ready = 3,
                                      .available = 2,
                                      .observed = true},
                                     {.cluster = "B",
                                      .planned = 4,
                                      .replicas = 4,
                                      .fully_labeled = 4,
                                      .ready = 1,
                                      .available = 1,
                                      .observed = false}};
  json::object status = AggregateStatus(Frs(5, 4), locals);
  EXPECT_EQ(status.at("replicas"), json::value(7));
  EXPECT_EQ(status.at("fullyLabeledReplicas"), json::value(7));
  EXPECT_EQ(status.at("readyReplicas"), json::value(4));
  EXPECT_EQ(status.at("availableReplicas"), json::value(3));
  EXPECT_EQ(status.at("observedGeneration"), json::value(4));
  locals[1].observed = true;
  EXPECT_EQ(AggregateStatus(Frs(5, 4), locals).at("observedGeneration"), json::value(5));
}

TEST(StatusTest, BreakdownNamesClustersWithSomethingToShowAndCapacityOnlyWhenEstimated) {
  std::vector<LocalStatus> locals = {{.cluster = "A", .planned = 22, .replicas = 22, .ready = 21},
                                     {.cluster = "C",
                                      .planned = 8,
                                      .replicas = 8,
                                      .ready = 6,
                                      .pending = 2,
                                      .estimated_capacity = 6},
                                     {.cluster = "scaled-to-zero", .local = true},
                                     {.cluster = "full", .estimated_capacity = 0},
                                     {.cluster = "unused"}};
  auto parsed = ParseJsonObject(BreakdownAnnotation(locals));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*Find(*parsed, "clusters.A"),
            json::value(json::object{
                {"planned", 22}, {"current", 22}, {"ready", 21}, {"unschedulable", 0}}));
  EXPECT_EQ(*Find(*parsed, "clusters.C.estimatedCapacity"), json::value(6));
  EXPECT_EQ(*Find(*parsed, "clusters.C.unschedulable"), json::value(2));
  EXPECT_EQ(*Find(*parsed, "clusters.scaled-to-zero.planned"), json::value(0));
  EXPECT_EQ(*Find(*parsed, "clusters.full.estimatedCapacity"), json::value(0));
  EXPECT_EQ(Find(*parsed, "clusters.unused"), nullptr);
}

}  // namespace
}  // namespace flotilla::federation::replicaset
