#include "federation/cluster/cluster_status.h"

#include <gtest/gtest.h>

namespace flotilla::federation::cluster {
namespace {

json::object Node(json::object labels) {
  return {{"metadata", {{"name", "n"}, {"labels", std::move(labels)}}}};
}

TEST(MakeConditionTest, KeepsTransitionTimeWhileStatusIsUnchanged) {
  TimePoint t0 = TimePoint(std::chrono::seconds(1700000000));
  json::array old{MakeCondition(nullptr, "Ready", "True", "ClusterReady", "ok", t0)};
  json::object same =
      MakeCondition(&old, "Ready", "True", "ClusterReady", "ok", t0 + std::chrono::seconds(10));
  EXPECT_EQ(GetString(same, "lastTransitionTime").value_or(""), FormatRfc3339(t0));
  EXPECT_EQ(GetString(same, "lastProbeTime").value_or(""),
            FormatRfc3339(t0 + std::chrono::seconds(10)));
  json::object flipped = MakeCondition(&old, "Ready", "False", "ClusterNotReady", "down",
                                       t0 + std::chrono::seconds(20));
  EXPECT_EQ(GetString(flipped, "lastTransitionTime").value_or(""),
            FormatRfc3339(t0 + std::chrono::seconds(20)));
  EXPECT_EQ(GetString(flipped, "reason").value_or(""), "ClusterNotReady");
  EXPECT_EQ(ConditionStatus(&old, "Ready"), "True");
  EXPECT_EQ(ConditionStatus(&old, "Offline"), "");
}

TEST(TopologyTest, ZonesAndTheMostCommonRegionFromCurrentOrLegacyLabels) {
  std::vector<json::object> nodes = {
      Node({{"topology.kubernetes.io/zone", "b"}, {"topology.kubernetes.io/region", "eu"}}),
      Node({{"failure-domain.beta.kubernetes.io/zone", "a"},
            {"failure-domain.beta.kubernetes.io/region", "us"}}),
      Node({{"topology.kubernetes.io/zone", "b"},
            {"failure-domain.beta.kubernetes.io/zone", "ignored"},
            {"topology.kubernetes.io/region", "us"}}),
      Node({}),
  };
  Topology t = TopologyOfNodes(nodes);
  EXPECT_EQ(t.zones, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(t.region, "us");
  EXPECT_TRUE(TopologyOfNodes({}).zones.empty());
  EXPECT_EQ(TopologyOfNodes({}).region, "");
}

}  // namespace
}  // namespace flotilla::federation::cluster
