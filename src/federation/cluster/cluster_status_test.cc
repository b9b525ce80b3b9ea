#include "federation/cluster/cluster_status.h"

#include <gtest/gtest.h>

namespace flotilla::federation::cluster {
namespace {

runtime::ObjectPtr Node(json::object labels) {
  return std::make_shared<const json::object>(
      json::object{{"metadata", {{"name", "n"}, {"labels", std::move(labels)}}}});
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
  std::vector<runtime::ObjectPtr> nodes = {
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

TEST(SameButProbeTimesTest, OnlyTheProbeTimesMayDiffer) {
  TimePoint t0 = TimePoint(std::chrono::seconds(1700000000));
  auto status = [&](const char* ready, TimePoint probed, const char* version) {
    json::array old{MakeCondition(nullptr, "Ready", "True", "ClusterReady", "ok", t0)};
    return json::value(json::object{
        {"conditions", json::array{MakeCondition(&old, "Ready", ready, "R", "m", probed)}},
        {"kubernetesVersion", version}});
  };
  json::value a = status("True", t0, "v1.32.0");
  json::value later = status("True", t0 + std::chrono::seconds(10), "v1.32.0");
  EXPECT_TRUE(SameButProbeTimes(&a, &later));
  json::value flipped = status("False", t0, "v1.32.0");
  EXPECT_FALSE(SameButProbeTimes(&a, &flipped));
  json::value upgraded = status("True", t0, "v1.33.0");
  EXPECT_FALSE(SameButProbeTimes(&a, &upgraded));
  EXPECT_FALSE(SameButProbeTimes(&a, nullptr));
  EXPECT_TRUE(SameButProbeTimes(nullptr, nullptr));

  // The federated objects' count may differ too where both have one.
  auto counted = [&](json::value v, int64_t n) {
    v.as_object()["federatedObjects"] = n;
    return v;
  };
  json::value three = counted(a, 3), four_later = counted(later, 4);
  EXPECT_FALSE(SameButProbeTimes(&three, &four_later));
  EXPECT_TRUE(SameButProbeTimesAndCount(&three, &four_later));
  EXPECT_FALSE(SameButProbeTimesAndCount(&a, &four_later));  // the first count
  json::value four_flipped = counted(flipped, 4);
  EXPECT_FALSE(SameButProbeTimesAndCount(&three, &four_flipped));
}

TEST(ResourceSummaryTest, ReadyNodesOfferAndBoundPodsTake) {
  auto obj = [](const char* text) {
    return std::make_shared<const json::object>(*ParseJsonObject(text));
  };
  std::vector<runtime::ObjectPtr> nodes = {
      obj(R"({"status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"},
                         "conditions": [{"type": "Ready", "status": "True"}]}})"),
      obj(R"({"spec": {"unschedulable": true},
              "status": {"allocatable": {"cpu": "8", "memory": "4Gi", "pods": "10"},
                         "conditions": [{"type": "Ready", "status": "True"}]}})"),
      obj(R"({"status": {"allocatable": {"cpu": "8"},
                         "conditions": [{"type": "Ready", "status": "False"}]}})"),
  };
  const char* bound = R"({"spec": {"nodeName": "n", "containers": [
      {"resources": {"requests": {"cpu": "250m", "memory": "100Mi"}}}]}})";
  std::vector<runtime::ObjectPtr> pods = {
      obj(bound),
      obj(bound),
      obj(R"({"spec": {"containers": [{"resources": {"requests": {"cpu": "1"}}}]}})"),
      obj(R"({"spec": {"nodeName": "n", "containers": [
          {"resources": {"requests": {"cpu": "1"}}}]}, "status": {"phase": "Succeeded"}})"),
  };
  ResourceSummary s = SummarizeResources(nodes, pods);
  EXPECT_EQ(s.nodes, 3);
  EXPECT_EQ(s.ready_nodes, 1);
  EXPECT_EQ(s.allocatable.milli_cpu, 2000);
  EXPECT_EQ(s.allocated.milli_cpu, 500);
  EXPECT_EQ(s.allocated.pods, 2);
  json::object status;
  SetResourceSummary(status, s);
  EXPECT_EQ(ToJson(status),
            R"({"nodeSummary":{"totalNum":3,"readyNum":1},"resourceSummary":{"allocatable":)"
            R"({"cpu":"2","memory":"4Gi","pods":"10"},"allocated":{"cpu":"500m",)"
            R"("memory":"200Mi","pods":"2"}}})");
}

}  // namespace
}  // namespace flotilla::federation::cluster
