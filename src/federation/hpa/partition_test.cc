// The partition and transfer rules of federated HPAs (seed 004), with
// Federation v1's known faults as regression cases.
#include "federation/hpa/partition.h"

#include <gtest/gtest.h>

namespace flotilla::federation::hpa {
namespace {

using Shares = std::map<std::string, Bounds>;

std::vector<HpaCluster> Fresh(std::initializer_list<const char*> names) {
  std::vector<HpaCluster> out;
  for (const char* n : names) out.push_back({.name = n});
  return out;
}

// A cluster whose local HPA holds `held` and reports current/desired/load.
HpaCluster Held(const char* name, Bounds held, int64_t current, int64_t desired,
                std::optional<double> load = std::nullopt) {
  return {.name = name,
          .runs_target = true,
          .held = held,
          .current = current,
          .desired = desired,
          .load = load};
}

planner::Preferences Prefs(std::string_view text) {
  auto p = planner::ParsePreferences(text);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : planner::Preferences::Default();
}

const planner::Preferences kDefault = planner::Preferences::Default();

int64_t Sum(const Shares& s, int64_t Bounds::*field) {
  int64_t n = 0;
  for (const auto& [name, b] : s) n += b.*field;
  return n;
}

TEST(HpaPartitionTest, EqualSharesOverThreeClusters) {
  Partition p = PartitionHpa(3, 12, kDefault, Fresh({"a", "b", "c"}));
  EXPECT_EQ(p.shares, (Shares{{"a", {1, 4}}, {"b", {1, 4}}, {"c", {1, 4}}}));
  EXPECT_EQ(p.shares, p.base);
  EXPECT_TRUE(p.moves.empty());
}

TEST(HpaPartitionTest, ASmallMinChoosesFewerClusters) {
  // No chosen cluster gets a min below 1: min 2 chooses two of three.
  Partition p = PartitionHpa(2, 9, kDefault, Fresh({"a", "b", "c"}));
  EXPECT_EQ(p.chosen, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(p.shares, (Shares{{"a", {1, 5}}, {"b", {1, 4}}}));
}

// Issue 36: a cluster that can run none of the target's pods gives its
// shares to the others, even one that held a local HPA; when every
// candidate is full, they are all kept.
TEST(HpaPartitionTest, AClusterFullForTheTargetGivesItsSharesUp) {
  std::vector<HpaCluster> clusters = {Held("a", {1, 4}, 2, 2), Held("b", {1, 4}, 2, 2),
                                      Held("c", {1, 4}, 1, 1)};
  clusters[2].full = true;
  Partition p = PartitionHpa(3, 12, kDefault, clusters);
  EXPECT_EQ(p.chosen, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Sum(p.shares, &Bounds::min), 3);
  EXPECT_EQ(Sum(p.shares, &Bounds::max), 12);
  EXPECT_FALSE(p.shares.contains("c"));

  for (HpaCluster& c : clusters) c.full = true;
  EXPECT_EQ(PartitionHpa(3, 12, kDefault, clusters).chosen.size(), 3u);
}

TEST(HpaPartitionTest, ClustersRunningTheTargetAreChosenFirstThenByWeight) {
  std::vector<HpaCluster> clusters = Fresh({"a", "b", "c"});
  clusters[2].runs_target = true;
  Partition p = PartitionHpa(
      2, 4, Prefs(R"({"clusters": {"*": {"weight": 1}, "b": {"weight": 5}}})"), clusters);
  EXPECT_EQ(p.chosen, (std::vector<std::string>{"c", "b"}));
}

TEST(HpaPartitionTest, PreferencesCapAndExclude) {
  Partition p = PartitionHpa(
      3, 12,
      Prefs(
          R"({"clusters": {"a": {"maxReplicas": 2}, "b": {"minReplicas": 2}, "c": {"maxReplicas": 0}}})"),
      Fresh({"a", "b", "c"}));
  EXPECT_EQ(p.chosen, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(p.shares, (Shares{{"a", {1, 2}}, {"b", {2, 10}}}));
  EXPECT_FALSE(p.over_preferences);
  // A federated max the caps cannot hold still adds up.
  Partition over =
      PartitionHpa(2, 10, Prefs(R"({"clusters": {"*": {"maxReplicas": 3}}})"), Fresh({"a", "b"}));
  EXPECT_EQ(Sum(over.shares, &Bounds::max), 10);
  EXPECT_TRUE(over.over_preferences);
}

TEST(HpaPartitionTest, ACordonedClusterKeepsItsShareAndTakesNoMore) {
  // Without a share: not chosen.
  std::vector<HpaCluster> fresh = Fresh({"a", "b", "c"});
  fresh[0].cordoned = true;
  EXPECT_EQ(PartitionHpa(3, 12, kDefault, fresh).chosen, (std::vector<std::string>{"b", "c"}));
  // With one, at its ceiling: the load's max goes nowhere (b and c have
  // nothing to spare), and a does not grow.
  std::vector<HpaCluster> held = {Held("a", {1, 4}, 4, 4, 2.5), Held("b", {1, 4}, 4, 4, 1.0),
                                  Held("c", {1, 4}, 4, 4, 1.0)};
  held[0].cordoned = true;
  Partition p = PartitionHpa(3, 12, kDefault, held);
  EXPECT_EQ(p.shares.at("a"), (Bounds{1, 4}));
  EXPECT_TRUE(p.moves.empty());
}

TEST(HpaPartitionTest, AClusterAtItsCeilingGetsWhatItsLoadNeedsInOneStep) {
  // Federation v1 moved one replica of max per sync; the load here asks for
  // ceil(4 * 2.5) = 10, so six more at once.
  std::vector<HpaCluster> clusters = {Held("a", {1, 4}, 4, 4, 2.5), Held("b", {1, 4}, 1, 1, 0.3),
                                      Held("c", {1, 4}, 1, 1, 0.3)};
  Partition p = PartitionHpa(3, 12, kDefault, clusters);
  EXPECT_EQ(p.shares, (Shares{{"a", {1, 10}}, {"b", {1, 1}}, {"c", {1, 1}}}));
  ASSERT_EQ(p.moves.size(), 1u);
  EXPECT_EQ(p.moves[0].to, "a");
  EXPECT_EQ(p.moves[0].amount, 6);
  EXPECT_FALSE(p.moves[0].min);
  EXPECT_EQ(p.Changed(clusters), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(HpaPartitionTest, DonorsKeepTheirMinAndWhatTheyRun) {
  std::vector<HpaCluster> clusters = {Held("a", {1, 4}, 4, 4, 5.0), Held("b", {2, 4}, 3, 3, 0.9),
                                      Held("c", {1, 4}, 4, 2, 0.5)};
  Partition p = PartitionHpa(4, 12, kDefault, clusters);
  // b runs 3: gives 1. c runs 4 (scaling down to 2): gives nothing yet.
  EXPECT_EQ(p.shares, (Shares{{"a", {1, 5}}, {"b", {2, 3}}, {"c", {1, 4}}}));
  EXPECT_EQ(Sum(p.shares, &Bounds::max), 12);
}

TEST(HpaPartitionTest, ACapacityLimitedClusterGivesWhatItCannotUse) {
  // c wants 4 but runs 2 (no room): the seed's "cannot be used".
  std::vector<HpaCluster> clusters = {Held("a", {1, 4}, 4, 4, 1.5), Held("c", {1, 4}, 2, 4, 1.2)};
  Partition p = PartitionHpa(2, 8, kDefault, clusters);
  EXPECT_EQ(p.shares, (Shares{{"a", {1, 6}}, {"c", {1, 2}}}));
}

TEST(HpaPartitionTest, NotAtTheCeilingWhenDesiredIsBelowCurrent) {
  // Federation v1 compared the wrong fields: a cluster scaling down from
  // its max is not at its ceiling.
  std::vector<HpaCluster> clusters = {Held("a", {1, 4}, 4, 3, 2.0), Held("b", {1, 4}, 1, 1, 0.1)};
  EXPECT_TRUE(PartitionHpa(2, 8, kDefault, clusters).moves.empty());
  // Nor is one on its target within the tolerance.
  clusters[0] = Held("a", {1, 4}, 4, 4, 1.05);
  EXPECT_TRUE(PartitionHpa(2, 8, kDefault, clusters).moves.empty());
}

TEST(HpaPartitionTest, FrozenClustersNeitherGiveNorTake) {
  // Federation v1 froze the whole HPA for two minutes; here only the
  // clusters just changed wait.
  std::vector<HpaCluster> clusters = {Held("a", {1, 4}, 4, 4, 2.0), Held("b", {1, 4}, 1, 1, 0.2),
                                      Held("c", {1, 4}, 1, 1, 0.2)};
  clusters[1].frozen = true;
  Partition p = PartitionHpa(3, 12, kDefault, clusters);
  EXPECT_EQ(p.shares, (Shares{{"a", {1, 7}}, {"b", {1, 4}}, {"c", {1, 1}}}));
  clusters[0].frozen = true;
  EXPECT_TRUE(PartitionHpa(3, 12, kDefault, clusters).moves.empty());
}

TEST(HpaPartitionTest, SharesReturnWhenTheLoadIsGone) {
  std::vector<HpaCluster> clusters = {Held("a", {1, 10}, 2, 1, 0.2), Held("b", {1, 1}, 1, 1, 0.2),
                                      Held("c", {1, 1}, 1, 1, 0.2)};
  Partition p = PartitionHpa(3, 12, kDefault, clusters);
  // a still runs 2: it keeps room for them.
  EXPECT_EQ(p.shares, (Shares{{"a", {1, 4}}, {"b", {1, 4}}, {"c", {1, 4}}}));
  clusters[0] = Held("a", {1, 10}, 5, 5, 0.9);
  EXPECT_EQ(PartitionHpa(3, 12, kDefault, clusters).shares,
            (Shares{{"a", {1, 5}}, {"b", {1, 4}}, {"c", {1, 3}}}));
}

TEST(HpaPartitionTest, AClusterThatLeavesGivesItsSharesAndTakesThemBack) {
  std::vector<HpaCluster> two = {Held("a", {1, 4}, 2, 2, 1.0), Held("b", {1, 4}, 2, 2, 1.0)};
  Partition p = PartitionHpa(3, 12, kDefault, two);
  EXPECT_EQ(p.shares, (Shares{{"a", {2, 6}}, {"b", {1, 6}}}));
  std::vector<HpaCluster> three = {
      Held("a", {2, 6}, 2, 2, 1.0), Held("b", {1, 6}, 2, 2, 1.0), {.name = "c"}};
  Partition back = PartitionHpa(3, 12, kDefault, three);
  EXPECT_EQ(back.shares, (Shares{{"a", {1, 4}}, {"b", {1, 4}}, {"c", {1, 4}}}));
}

TEST(HpaPartitionTest, MinMovesFromIdleFloorsToBusyClustersAndBack) {
  std::vector<HpaCluster> clusters = {Held("a", {2, 4}, 4, 4, 1.0), Held("b", {2, 4}, 2, 2, 0.2),
                                      Held("c", {2, 4}, 2, 2, 0.8)};
  Partition p = PartitionHpa(6, 12, kDefault, clusters);
  // b is idle at its floor: it gives one (never below 1); c is not idle.
  EXPECT_EQ(p.shares, (Shares{{"a", {3, 4}}, {"b", {1, 4}}, {"c", {2, 4}}}));
  ASSERT_EQ(p.moves.size(), 1u);
  EXPECT_TRUE(p.moves[0].min);
  // a's load is gone: its min goes back.
  clusters = {Held("a", {3, 4}, 3, 3, 0.1), Held("b", {1, 4}, 1, 1, 0.2),
              Held("c", {2, 4}, 2, 2, 0.8)};
  EXPECT_EQ(PartitionHpa(6, 12, kDefault, clusters).shares,
            (Shares{{"a", {2, 4}}, {"b", {2, 4}}, {"c", {2, 4}}}));
}

TEST(HpaPartitionTest, SumsHoldWhateverTheLocalsHold) {
  // Hand-edited or stale locals: the sums come back to the federated ones.
  std::vector<HpaCluster> clusters = {Held("a", {5, 50}, 5, 5), Held("b", {0, 0}, 0, 0)};
  Partition p = PartitionHpa(4, 10, kDefault, clusters);
  EXPECT_EQ(Sum(p.shares, &Bounds::min), 4);
  EXPECT_EQ(Sum(p.shares, &Bounds::max), 10);
  for (const auto& [name, b] : p.shares) {
    EXPECT_GE(b.min, 1) << name;
    EXPECT_GE(b.max, b.min) << name;
  }
  // A large federated max is spread without stepping one by one.
  Partition big = PartitionHpa(3, 2'000'000'000, kDefault, Fresh({"a", "b", "c"}));
  EXPECT_EQ(Sum(big.shares, &Bounds::max), 2'000'000'000);
}

TEST(HpaPartitionTest, NoCandidatesNoShares) {
  Partition p = PartitionHpa(2, 4, Prefs(R"({"clusters": {"x": {"weight": 1}}})"), Fresh({"a"}));
  EXPECT_TRUE(p.chosen.empty());
  EXPECT_TRUE(p.shares.empty());
}

}  // namespace
}  // namespace flotilla::federation::hpa
