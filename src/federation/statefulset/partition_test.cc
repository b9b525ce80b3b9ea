// The partition rules of federated StatefulSets (seed 002): equal by
// default, preferences when given, and never a replica moved.
#include "federation/statefulset/partition.h"

#include <gtest/gtest.h>

namespace flotilla::federation::statefulset {
namespace {

using Counts = planner::ReplicaCounts;

std::vector<StatefulCluster> Ready(std::vector<std::pair<std::string, int64_t>> current) {
  std::vector<StatefulCluster> out;
  for (auto& [name, n] : current) out.push_back({name, n, true});
  return out;
}

planner::Preferences Prefs(std::string_view text) {
  auto p = planner::ParsePreferences(text);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : planner::Preferences::Default();
}

TEST(PartitionTest, TheSeedsElevenOverThreeClusters) {
  EXPECT_EQ(
      Partition(11, Ready({{"c1", 0}, {"c2", 0}, {"c3", 0}}), planner::Preferences::Default()),
      (Counts{{"c1", 4}, {"c2", 4}, {"c3", 3}}));
}

TEST(PartitionTest, FewerReplicasThanClustersGiveAtMostOneEach) {
  EXPECT_EQ(Partition(2, Ready({{"c1", 0}, {"c2", 0}, {"c3", 0}}), planner::Preferences::Default()),
            (Counts{{"c1", 1}, {"c2", 1}, {"c3", 0}}));
}

TEST(PartitionTest, ScaleUpNeverTakesFromACluster) {
  // c1 holds more than its share: it keeps them, the new ones go elsewhere.
  EXPECT_EQ(Partition(9, Ready({{"c1", 5}, {"c2", 1}, {"c3", 0}}), planner::Preferences::Default()),
            (Counts{{"c1", 5}, {"c2", 2}, {"c3", 2}}));
}

TEST(PartitionTest, ScaleDownTakesFromTheClustersFurthestAboveTheirShare) {
  EXPECT_EQ(Partition(6, Ready({{"c1", 5}, {"c2", 2}, {"c3", 2}}), planner::Preferences::Default()),
            (Counts{{"c1", 2}, {"c2", 2}, {"c3", 2}}));
  // Ties: the last cluster by name shrinks first; nothing grows.
  EXPECT_EQ(
      Partition(10, Ready({{"c1", 4}, {"c2", 4}, {"c3", 3}}), planner::Preferences::Default()),
      (Counts{{"c1", 4}, {"c2", 3}, {"c3", 3}}));
}

TEST(PartitionTest, AClusterOutOfReachKeepsItsShare) {
  std::vector<StatefulCluster> clusters{{"c1", 4, true}, {"c2", 4, false}, {"c3", 3, true}};
  // Scaling up gives it nothing; its 4 are not recreated elsewhere.
  EXPECT_EQ(Partition(13, clusters, planner::Preferences::Default()),
            (Counts{{"c1", 5}, {"c2", 4}, {"c3", 4}}));
  // Scaling down cannot take from it.
  EXPECT_EQ(Partition(5, clusters, planner::Preferences::Default()),
            (Counts{{"c1", 1}, {"c2", 4}, {"c3", 0}}));
}

TEST(PartitionTest, ACordonedClusterOnlyShrinks) {
  std::vector<StatefulCluster> clusters{
      {"c1", 2, true}, {"c2", 2, true, /*cordoned=*/true}, {"c3", 2, true}};
  EXPECT_EQ(Partition(10, clusters, planner::Preferences::Default()),
            (Counts{{"c1", 4}, {"c2", 2}, {"c3", 4}}));
  EXPECT_EQ(Partition(3, clusters, planner::Preferences::Default()),
            (Counts{{"c1", 1}, {"c2", 1}, {"c3", 1}}));
}

TEST(PartitionTest, AClusterThatLeftFreesItsShareForTheOthers) {
  // c2 was unjoined: its 4 are not in the input; 11 are placed anew.
  EXPECT_EQ(Partition(11, Ready({{"c1", 4}, {"c3", 3}}), planner::Preferences::Default()),
            (Counts{{"c1", 6}, {"c3", 5}}));
}

TEST(PartitionTest, PreferencesSetMinimaMaximaAndWeights) {
  planner::Preferences prefs = Prefs(R"({"clusters": {"c1": {"minReplicas": 3, "weight": 1},
      "c2": {"weight": 2, "maxReplicas": 4}, "c3": {"weight": 1}}})");
  EXPECT_EQ(Partition(10, Ready({{"c1", 0}, {"c2", 0}, {"c3", 0}}), prefs),
            (Counts{{"c1", 3}, {"c2", 4}, {"c3", 3}}));
  // A cluster no entry covers gets nothing and gives back what it holds first.
  planner::Preferences only_c1 = Prefs(R"({"clusters": {"c1": {"weight": 1}}})");
  EXPECT_EQ(Partition(3, Ready({{"c1", 0}, {"c2", 0}}), only_c1), (Counts{{"c1", 3}, {"c2", 0}}));
  EXPECT_EQ(Partition(3, Ready({{"c1", 2}, {"c2", 2}}), only_c1), (Counts{{"c1", 2}, {"c2", 1}}));
}

TEST(PartitionTest, ReplicasNoClusterCanTakeAreNotPlaced) {
  planner::Preferences capped = Prefs(R"({"clusters": {"*": {"weight": 1, "maxReplicas": 2}}})");
  EXPECT_EQ(Partition(9, Ready({{"c1", 0}, {"c2", 0}}), capped), (Counts{{"c1", 2}, {"c2", 2}}));
}

}  // namespace
}  // namespace flotilla::federation::statefulset
