#include "federation/common/policies.h"

#include <gtest/gtest.h>

#include "federation/common/test_util.h"

namespace flotilla::federation {
namespace {

using testing::Obj;

api::policy::PropagationPolicy Policy(std::string_view replica_scheduling) {
  auto p = api::policy::PropagationPolicy::FromObject(Obj(
      R"({"kind":"ClusterPropagationPolicy","metadata":{"name":"p"},"spec":{
          "resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment"}],
          "placement":{"replicaScheduling":)" +
      std::string(replica_scheduling) + "}}}"));
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return *std::move(p);
}

// A Cluster named `name` with labels and a resource summary of `cpu`
// allocatable and `used` allocated.
json::object Cluster(std::string_view name, std::string_view labels, std::string_view cpu,
                     std::string_view used) {
  return Obj(R"({"metadata":{"name":")" + std::string(name) + R"(","labels":)" +
             std::string(labels) + R"(},"status":{"resourceSummary":{
                 "allocatable":{"cpu":")" +
             std::string(cpu) + R"(","memory":"64Gi","pods":"110"},"allocated":{"cpu":")" +
             std::string(used) + R"(","memory":"0","pods":"0"}}}})");
}

json::object Template(std::string_view cpu) {
  return Obj(R"({"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":")" +
             std::string(cpu) + R"("}}}]}})");
}

std::map<std::string, int64_t> Weights(const planner::Preferences& p) {
  std::map<std::string, int64_t> out;
  for (const auto& [name, pref] : p.clusters) out[name] = pref.weight;
  return out;
}

TEST(AvailableReplicasTest, TheScarcestResourceDecides) {
  json::object tmpl = Template("500m");
  EXPECT_EQ(AvailableReplicas(Cluster("a", "{}", "4", "1"), &tmpl), 6);  // 3 cpu / 0.5
  json::object no_summary = Obj(R"({"metadata":{"name":"a"}})");
  EXPECT_EQ(AvailableReplicas(no_summary, &tmpl), std::nullopt);
  // Without requests only the pod count limits.
  EXPECT_EQ(AvailableReplicas(Cluster("a", "{}", "4", "4"), nullptr), 110);
}

TEST(DivisionPreferencesTest, DuplicatedHasNone) {
  EXPECT_FALSE(
      DivisionPreferences(Policy(R"({"replicaSchedulingType":"Duplicated"})"), 3, {}).has_value());
}

TEST(DivisionPreferencesTest, StaticWeightsByAffinityAndRebalanced) {
  json::object a = Cluster("a", R"({"tier":"onprem"})", "4", "0");
  json::object b = Cluster("b", R"({"tier":"cloud"})", "4", "0");
  json::object c = Cluster("c", R"({"tier":"edge"})", "4", "0");
  auto prefs = DivisionPreferences(
      Policy(R"({"replicaSchedulingType":"Divided","replicaDivisionPreference":"Weighted",
                 "weightPreference":{"staticWeightList":[
                   {"targetCluster":{"labelSelector":{"matchLabels":{"tier":"onprem"}}},"weight":2},
                   {"targetCluster":{"clusterNames":["b"]},"weight":1}]}})"),
      6,
      {{.name = "a", .cluster = &a}, {.name = "b", .cluster = &b}, {.name = "c", .cluster = &c}});
  ASSERT_TRUE(prefs.has_value());
  EXPECT_TRUE(prefs->rebalance);
  EXPECT_EQ(Weights(*prefs), (std::map<std::string, int64_t>{{"a", 2}, {"b", 1}, {"c", 0}}));
}

TEST(DivisionPreferencesTest, StaticWeightsThatSelectNoClusterWeighAllEqually) {
  json::object a = Cluster("a", "{}", "4", "0");
  auto prefs = DivisionPreferences(
      Policy(R"({"replicaDivisionPreference":"Weighted","weightPreference":{"staticWeightList":[
                   {"targetCluster":{"clusterNames":["x"]},"weight":3}]}})"),
      2, {{.name = "a", .cluster = &a}});
  EXPECT_EQ(Weights(*prefs), (std::map<std::string, int64_t>{{"a", 1}}));
}

TEST(DivisionPreferencesTest, DynamicWeightsFollowRoomAndWhatRuns) {
  json::object tmpl = Template("1");
  json::object a = Cluster("a", "{}", "8", "2"), b = Cluster("b", "{}", "4", "3");
  std::vector<DivisionCluster> clusters = {
      {.name = "a", .cluster = &a, .current = 1, .available = AvailableReplicas(a, &tmpl)},
      {.name = "b", .cluster = &b, .current = 2, .available = AvailableReplicas(b, &tmpl)}};
  auto prefs = DivisionPreferences(
      Policy(
          R"({"replicaDivisionPreference":"Weighted","weightPreference":{"dynamicWeight":"AvailableReplicas"}})"),
      5, clusters);
  EXPECT_FALSE(prefs->rebalance);
  EXPECT_EQ(Weights(*prefs), (std::map<std::string, int64_t>{{"a", 7}, {"b", 3}}));
}

TEST(DivisionPreferencesTest, AggregatedUsesTheFewestClustersThatHoldAll) {
  std::vector<DivisionCluster> clusters = {{.name = "small", .available = 2},
                                           {.name = "big", .available = 10},
                                           {.name = "mid", .available = 5}};
  auto policy = Policy(R"({"replicaDivisionPreference":"Aggregated"})");
  EXPECT_EQ(Weights(*DivisionPreferences(policy, 8, clusters)),
            (std::map<std::string, int64_t>{{"big", 10}}));
  EXPECT_EQ(Weights(*DivisionPreferences(policy, 12, clusters)),
            (std::map<std::string, int64_t>{{"big", 10}, {"mid", 5}}));
  // More than all can hold: every cluster, by its room.
  EXPECT_EQ(Weights(*DivisionPreferences(policy, 40, clusters)),
            (std::map<std::string, int64_t>{{"big", 10}, {"mid", 5}, {"small", 2}}));
  // No figures at all: every cluster weighs 1.
  std::vector<DivisionCluster> unknown = {{.name = "a"}, {.name = "b"}};
  EXPECT_EQ(Weights(*DivisionPreferences(policy, 3, unknown)),
            (std::map<std::string, int64_t>{{"a", 1}, {"b", 1}}));
}

TEST(PolicyAnnotationsTest, AsKarmadaRecordsThem) {
  auto cpp = Policy(R"({"replicaSchedulingType":"Duplicated"})");
  EXPECT_EQ(json::value(PolicyAnnotations(&cpp)),
            json::value(Obj(R"({"clusterpropagationpolicy.karmada.io/name":"p"})")));
  EXPECT_TRUE(PolicyAnnotations(nullptr).empty());
}

TEST(PlacedByAnnotationsTest, SelectorClusterOrPreferences) {
  const char* prefs = "federation.kubernetes.io/deployment-preferences";
  EXPECT_FALSE(PlacedByAnnotations(Obj(R"({"metadata":{}})"), prefs));
  EXPECT_TRUE(PlacedByAnnotations(
      Obj(R"({"metadata":{"annotations":{"federation.kubernetes.io/cluster":"a"}}})"), prefs));
  EXPECT_TRUE(PlacedByAnnotations(
      Obj(R"({"metadata":{"annotations":{"federation.kubernetes.io/deployment-preferences":"{}"}}})"),
      prefs));
  EXPECT_FALSE(PlacedByAnnotations(
      Obj(R"({"metadata":{"annotations":{"federation.kubernetes.io/deployment-preferences":"{}"}}})"),
      ""));
}

}  // namespace
}  // namespace flotilla::federation
