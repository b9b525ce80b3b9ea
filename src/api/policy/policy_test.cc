#include "api/policy/policy.h"

#include <gtest/gtest.h>

#include <memory>

namespace flotilla::api::policy {
namespace {

json::object Obj(std::string_view text) { return *ParseJsonObject(text); }

std::unique_ptr<PropagationPolicy> Policy(std::string_view text) {
  auto p = PropagationPolicy::FromObject(Obj(text));
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return std::make_unique<PropagationPolicy>(*std::move(p));
}

// A namespaced policy `name` in "web" with `priority`, selecting
// Deployments by `selector` (a ResourceSelector's fields besides
// apiVersion and kind).
std::string Pp(std::string_view name, int priority, std::string_view selector,
               std::string_view extra = "") {
  return R"({"kind":"PropagationPolicy","metadata":{"name":")" + std::string(name) +
         R"(","namespace":"web"},"spec":{"priority":)" + std::to_string(priority) +
         R"(,"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment")" +
         std::string(selector) + "}]" + std::string(extra) + "}}";
}
std::string Cpp(std::string_view name, int priority, std::string_view selector,
                std::string_view extra = "") {
  return R"({"kind":"ClusterPropagationPolicy","metadata":{"name":")" + std::string(name) +
         R"("},"spec":{"priority":)" + std::to_string(priority) +
         R"(,"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment")" +
         std::string(selector) + "}]" + std::string(extra) + "}}";
}

class SelectTest : public ::testing::Test {
 protected:
  const PropagationPolicy* Select(const Binding& bound = {}) {
    std::vector<const PropagationPolicy*> ptrs;
    for (const auto& p : policies_) ptrs.push_back(p.get());
    return SelectPolicy(ptrs, ref_, bound);
  }
  std::string Winner(const Binding& bound = {}) {
    const PropagationPolicy* p = Select(bound);
    return p == nullptr ? "<none>" : p->Ref();
  }
  void Add(const std::string& text) { policies_.push_back(Policy(text)); }

  json::object labels_ = Obj(R"({"privacy":"sensitive","app":"web"})");
  ObjectRef ref_{.api_version = "apps/v1",
                 .kind = "Deployment",
                 .ns = "web",
                 .name = "frontend",
                 .labels = &labels_};
  std::vector<std::unique_ptr<PropagationPolicy>> policies_;
};

TEST_F(SelectTest, NothingMatchesWithoutPolicies) { EXPECT_EQ(Winner(), "<none>"); }

TEST_F(SelectTest, SelectorsMatchByKindNameAndLabels) {
  Add(R"({"kind":"PropagationPolicy","metadata":{"name":"other-kind","namespace":"web"},
          "spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"StatefulSet"}]}})");
  Add(Pp("other-name", 0, R"(,"name":"backend")"));
  Add(Pp("other-labels", 0, R"(,"labelSelector":{"matchLabels":{"privacy":"public"}})"));
  EXPECT_EQ(Winner(), "<none>");
  Add(Pp("by-labels", 0, R"(,"labelSelector":{"matchLabels":{"privacy":"sensitive"}})"));
  EXPECT_EQ(Winner(), "web/by-labels");
}

TEST_F(SelectTest, ANamespacedPolicyMatchesOnlyItsNamespace) {
  Add(R"({"kind":"PropagationPolicy","metadata":{"name":"p","namespace":"other"},
          "spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment"}]}})");
  EXPECT_EQ(Winner(), "<none>");
}

TEST_F(SelectTest, NamespacedBeforeClusterWhateverThePriority) {
  Add(Cpp("cluster", 100, R"(,"name":"frontend")"));
  Add(Pp("namespaced", 0, ""));
  EXPECT_EQ(Winner(), "web/namespaced");
}

TEST_F(SelectTest, ExplicitPriorityThenClosestMatchThenName) {
  Add(Pp("b-all", 0, ""));
  Add(Pp("a-all", 0, ""));
  EXPECT_EQ(Winner(), "web/a-all");  // name order
  Add(Pp("labels", 0, R"(,"labelSelector":{"matchLabels":{"app":"web"}})"));
  EXPECT_EQ(Winner(), "web/labels");  // a label selector beats kind alone
  Add(Pp("name", 0, R"(,"name":"frontend")"));
  EXPECT_EQ(Winner(), "web/name");  // a name beats labels
  Add(Pp("z-priority", 1, ""));
  EXPECT_EQ(Winner(), "web/z-priority");  // explicit priority first
}

TEST_F(SelectTest, ANameIgnoresTheLabelSelector) {
  Add(Pp("p", 0, R"(,"name":"frontend","labelSelector":{"matchLabels":{"app":"db"}})"));
  EXPECT_EQ(Winner(), "web/p");
}

TEST_F(SelectTest, ABoundObjectStaysUnlessTheWinnerPreempts) {
  Add(Cpp("old", 0, ""));
  Add(Pp("new", 5, R"(,"name":"frontend")"));
  Binding cluster_bound{.ref = "old", .cluster_scoped = true};
  EXPECT_EQ(Winner(cluster_bound), "old");  // preemption Never
  policies_.pop_back();
  Add(Pp("new", 5, R"(,"name":"frontend")", R"(,"preemption":"Always")"));
  EXPECT_EQ(Winner(cluster_bound), "web/new");  // namespaced Always over a cluster policy
  Binding ns_bound{.ref = "web/new"};
  Add(Pp("higher", 9, R"(,"name":"frontend")"));
  EXPECT_EQ(Winner(ns_bound), "web/new");  // no preemption by "higher"
  policies_.pop_back();
  Add(Pp("higher", 9, R"(,"name":"frontend")", R"(,"preemption":"Always")"));
  EXPECT_EQ(Winner(ns_bound), "web/higher");
  policies_.pop_back();
  Add(Pp("lower", 1, R"(,"name":"frontend")", R"(,"preemption":"Always")"));
  EXPECT_EQ(Winner(ns_bound), "web/new");  // Always, but not higher
}

TEST_F(SelectTest, ABindingToAPolicyThatNoLongerMatchesIsDropped) {
  Add(Pp("winner", 0, ""));
  EXPECT_EQ(Winner({.ref = "web/gone"}), "web/winner");
}

TEST(BindingTest, ReadFromTheAnnotations) {
  Binding b = BindingOf(Obj(R"({"metadata":{"annotations":{
      "propagationpolicy.karmada.io/name":"p","propagationpolicy.karmada.io/namespace":"web"}}})"));
  EXPECT_EQ(b.ref, "web/p");
  EXPECT_FALSE(b.cluster_scoped);
  b = BindingOf(
      Obj(R"({"metadata":{"annotations":{"clusterpropagationpolicy.karmada.io/name":"c"}}})"));
  EXPECT_EQ(b.ref, "c");
  EXPECT_TRUE(b.cluster_scoped);
  EXPECT_TRUE(BindingOf(Obj("{}")).empty());
}

json::object Cluster(std::string_view name, std::string_view rest) {
  return Obj(R"({"metadata":{"name":")" + std::string(name) + "\"" + std::string(rest) + "}");
}

bool Admits(std::string_view affinity, const json::object& cluster) {
  auto a = ClusterAffinity::FromJson(ParseJson(affinity).value(), "a");
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  return a->Matches(cluster);
}

TEST(ClusterAffinityTest, NamesExcludeLabelsAndFields) {
  json::object onprem = Cluster("onprem", R"(,"labels":{"location":"onprem"}},
      "spec":{"provider":"metal","region":"eu-west"},"status":{"zones":["eu-west-1a","eu-west-1b"]})");
  json::object cloud = Cluster("cloud", R"(,"labels":{"location":"cloud"}},
      "status":{"region":"us-east","zones":["us-east-1a"]})");
  EXPECT_TRUE(Admits("{}", onprem));
  EXPECT_TRUE(Admits(R"({"clusterNames":["onprem"]})", onprem));
  EXPECT_FALSE(Admits(R"({"clusterNames":["onprem"]})", cloud));
  EXPECT_FALSE(Admits(R"({"exclude":["onprem"]})", onprem));
  EXPECT_FALSE(Admits(R"({"clusterNames":["onprem"],"exclude":["onprem"]})", onprem));
  const char* labels = R"({"labelSelector":{"matchLabels":{"location":"onprem"}}})";
  EXPECT_TRUE(Admits(labels, onprem));
  EXPECT_FALSE(Admits(labels, cloud));
  const char* provider =
      R"({"fieldSelector":{"matchExpressions":[{"key":"provider","operator":"In","values":["metal"]}]}})";
  EXPECT_TRUE(Admits(provider, onprem));
  EXPECT_FALSE(Admits(provider, cloud));  // no provider: In does not match
  // The region comes from the spec, else from the observed status.
  const char* region =
      R"({"fieldSelector":{"matchExpressions":[{"key":"region","operator":"NotIn","values":["eu-west"]}]}})";
  EXPECT_FALSE(Admits(region, onprem));
  EXPECT_TRUE(Admits(region, cloud));
  const char* zone_in =
      R"({"fieldSelector":{"matchExpressions":[{"key":"zone","operator":"In","values":["eu-west-1b","x"]}]}})";
  EXPECT_TRUE(Admits(zone_in, onprem));  // one zone of the cluster is enough
  EXPECT_FALSE(Admits(zone_in, cloud));
  const char* zone_not_in =
      R"({"fieldSelector":{"matchExpressions":[{"key":"zone","operator":"NotIn","values":["eu-west-1b"]}]}})";
  EXPECT_FALSE(Admits(zone_not_in, onprem));  // no zone of it may be listed
  EXPECT_TRUE(Admits(zone_not_in, cloud));
}

TEST(ClusterAffinityTest, WhyNotNamesTheFirstRuleThatDrops) {
  json::object cloud = Cluster("cloud", R"(,"labels":{"location":"cloud"}},
      "spec":{"provider":"aws"})");
  auto why = [&](std::string_view affinity) -> std::string {
    auto a = ClusterAffinity::FromJson(ParseJson(affinity).value(), "a");
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    const char* w = a->WhyNot(ClusterFacts::Of(cloud));
    return w == nullptr ? "" : w;
  };
  EXPECT_EQ(why("{}"), "");
  EXPECT_EQ(why(R"({"exclude":["cloud"],"clusterNames":["x"]})"), "named in exclude");
  EXPECT_EQ(why(R"({"labelSelector":{"matchLabels":{"location":"onprem"}}})"),
            "its labels do not match labelSelector");
  EXPECT_EQ(why(R"({"fieldSelector":{"matchExpressions":[{"key":"provider","operator":"In",
                    "values":["gcp"]}]}})"),
            "its provider, region or zones do not match fieldSelector");
  EXPECT_EQ(why(R"({"clusterNames":["onprem"]})"), "not in clusterNames");
}

TEST(ClusterAffinityTest, BadFieldSelectorsAreInvalidWithTheirPaths) {
  auto a = ClusterAffinity::FromJson(
      ParseJson(R"({"fieldSelector":{"matchExpressions":[{"key":"cloud","operator":"Exists"}]}})")
          .value(),
      "spec.placement.clusterAffinity");
  ASSERT_FALSE(a.ok());
  std::vector<std::string> fields;
  for (const StatusCause& c : a.status().causes()) fields.push_back(c.field);
  EXPECT_EQ(fields,
            (std::vector<std::string>{
                "spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].key",
                "spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].operator",
                "spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].values"}));
}

TEST(StaticWeightTest, TheHighestMatchingEntryCounts) {
  auto p = Policy(Pp("w", 0, "", R"(,"placement":{"replicaScheduling":{
      "replicaSchedulingType":"Divided","replicaDivisionPreference":"Weighted",
      "weightPreference":{"staticWeightList":[
        {"targetCluster":{"clusterNames":["a","b"]},"weight":1},
        {"targetCluster":{"clusterNames":["b"]},"weight":3}]}}})"));
  EXPECT_EQ(p->scheduling.type, ReplicaSchedulingType::kDivided);
  EXPECT_EQ(p->scheduling.division, DivisionPreference::kWeighted);
  EXPECT_EQ(p->StaticWeightOf(ClusterFacts::Of(Cluster("a", "}"))), 1);
  EXPECT_EQ(p->StaticWeightOf(ClusterFacts::Of(Cluster("b", "}"))), 3);
  EXPECT_EQ(p->StaticWeightOf(ClusterFacts::Of(Cluster("c", "}"))), 0);
}

TEST(PlacementTest, ClusterAffinityGroupsInOrder) {
  auto p = Policy(Pp("g", 0, "", R"(,"placement":{"clusterAffinities":[
      {"affinityName":"local","clusterNames":["a"]},
      {"affinityName":"cloud","labelSelector":{"matchLabels":{"location":"cloud"}}}]})"));
  ASSERT_EQ(p->affinity_groups.size(), 2u);
  EXPECT_EQ(p->affinity_groups[0].name, "local");
  json::object a = Cluster("a", "}"), b = Cluster("b", R"(,"labels":{"location":"cloud"}})");
  EXPECT_TRUE(p->affinity_groups[0].affinity.Matches(a));
  EXPECT_FALSE(p->affinity_groups[0].affinity.Matches(b));
  EXPECT_TRUE(p->affinity_groups[1].affinity.Matches(b));
}

TEST(PlacementTest, WithoutReplicaSchedulingEveryClusterRunsAll) {
  auto p = Policy(Pp("d", 0, ""));
  EXPECT_EQ(p->scheduling.type, ReplicaSchedulingType::kDuplicated);
}

// Each case: a policy spec fragment and the fields its causes name.
struct InvalidCase {
  std::string name;
  std::string extra;  // appended to the spec after resourceSelectors
  std::vector<std::string> fields;
};

class ValidatePropagationTest : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(ValidatePropagationTest, NamesEachField) {
  json::object obj = Obj(Pp("p", 0, "", GetParam().extra));
  DefaultPropagation(obj, true);
  std::vector<std::string> fields;
  for (const StatusCause& c : ValidatePropagation(obj, true)) fields.push_back(c.field);
  EXPECT_EQ(fields, GetParam().fields);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ValidatePropagationTest,
    ::testing::Values(
        InvalidCase{"Valid", "", {}},
        InvalidCase{"DividedWithoutPreference",
                    R"(,"placement":{"replicaScheduling":{"replicaSchedulingType":"Divided"}})",
                    {"spec.placement.replicaScheduling.replicaDivisionPreference"}},
        InvalidCase{
            "WeightedWithoutWeights",
            R"(,"placement":{"replicaScheduling":{"replicaDivisionPreference":"Weighted"}})",
            {"spec.placement.replicaScheduling.weightPreference"}},
        InvalidCase{
            "WeightBelowOne",
            R"(,"placement":{"replicaScheduling":{"replicaDivisionPreference":"Weighted",
                        "weightPreference":{"staticWeightList":[{"targetCluster":{},"weight":0}]}}})",
            {"spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight"}},
        InvalidCase{"UnknownType",
                    R"(,"placement":{"replicaScheduling":{"replicaSchedulingType":"Split"}})",
                    {"spec.placement.replicaScheduling.replicaSchedulingType"}},
        InvalidCase{"UnknownFieldKey",
                    R"(,"placement":{"clusterAffinity":{"fieldSelector":{"matchExpressions":[
                        {"key":"cloud","operator":"In","values":["x"]}]}}})",
                    {"spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].key"}},
        InvalidCase{"MalformedLabelSelector",
                    R"(,"placement":{"clusterAffinity":{"labelSelector":{"matchExpressions":[
                        {"key":"a","operator":"Near"}]}}})",
                    {"spec.placement.clusterAffinity.labelSelector.matchExpressions[0].operator"}},
        InvalidCase{
            "AffinityAndAffinities",
            R"(,"placement":{"clusterAffinity":{},"clusterAffinities":[{"affinityName":"a"}]})",
            {"spec.placement"}},
        InvalidCase{
            "SpreadByFieldWithoutCluster",
            R"(,"placement":{"spreadConstraints":[{"spreadByField":"region","minGroups":1,"maxGroups":2}]})",
            {"spec.placement.spreadConstraints"}},
        InvalidCase{"PreemptionNeedsNames",
                    R"(,"preemption":"Always")",
                    {"spec.resourceSelectors[0].name"}},
        InvalidCase{"TolerationWithoutKeyNotExists",
                    R"(,"placement":{"clusterTolerations":[{"operator":"Equal","value":"x"}]})",
                    {"spec.placement.clusterTolerations[0].operator"}},
        InvalidCase{
            "TolerationExistsWithAValue",
            R"(,"placement":{"clusterTolerations":[{"key":"a","operator":"Exists","value":"x"}]})",
            {"spec.placement.clusterTolerations[0].operator"}},
        InvalidCase{
            "TolerationSecondsWithoutNoExecute",
            R"(,"placement":{"clusterTolerations":[{"key":"a","operator":"Exists","effect":"NoSchedule","tolerationSeconds":5}]})",
            {"spec.placement.clusterTolerations[0].effect"}},
        InvalidCase{"UnknownConflictResolution",
                    R"(,"conflictResolution":"Merge")",
                    {"spec.conflictResolution"}}),
    [](const auto& info) { return info.param.name; });

TEST(ValidatePropagationTest, SelectorsOfAnotherNamespaceAndNoneAtAll) {
  json::object obj = Obj(R"({"metadata":{"name":"p","namespace":"web"},"spec":{
      "resourceSelectors":[{"apiVersion":"v1","kind":"ConfigMap","namespace":"db"},{"kind":"Secret"}]}})");
  DefaultPropagation(obj, true);
  std::vector<std::string> fields;
  for (const StatusCause& c : ValidatePropagation(obj, true)) fields.push_back(c.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"spec.resourceSelectors[0].namespace",
                                              "spec.resourceSelectors[1].apiVersion"}));
  json::object none = Obj(R"({"metadata":{"name":"p"},"spec":{}})");
  auto causes = ValidatePropagation(none, false);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].field, "spec.resourceSelectors");
}

TEST(DefaultPropagationTest, KarmadasDefaultsAndTheSelectorsNamespace) {
  json::object obj = Obj(Pp("p", 0, "", R"(,"placement":{"replicaScheduling":{}})"));
  obj["spec"].as_object().erase("priority");
  DefaultPropagation(obj, true);
  EXPECT_EQ(StringAt(obj, "spec.conflictResolution"), "Abort");
  EXPECT_EQ(StringAt(obj, "spec.preemption"), "Never");
  EXPECT_EQ(IntAt(obj, "spec.priority", -1), 0);
  EXPECT_EQ(StringAt(obj, "spec.schedulerName"), "default-scheduler");
  EXPECT_EQ(StringAt(obj, "spec.placement.replicaScheduling.replicaSchedulingType"), "Divided");
  EXPECT_EQ(obj.at("spec").at("resourceSelectors").at(0).at("namespace"), "web");
}

TEST(ValidateOverrideTest, OverridersNameEachField) {
  json::object obj = Obj(R"({"metadata":{"name":"o","namespace":"web"},"spec":{
      "resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment","namespace":"web"}],
      "overrideRules":[{"targetCluster":{"clusterNames":["a"]},"overriders":{
        "plaintext":[{"path":"spec/replicas","operator":"replace","value":2},
                     {"path":"/spec/x","operator":"remove","value":1},
                     {"path":"/spec/y","operator":"add"}],
        "imageOverrider":[{"component":"Host","operator":"replace","value":"r"}],
        "commandOverrider":[{"containerName":"","operator":"replace","value":["a"]}],
        "fieldOverrider":[{"fieldPath":"/data/x"}]}}]}})");
  std::vector<std::string> fields;
  for (const StatusCause& c : ValidateOverride(obj, true)) fields.push_back(c.field);
  const std::string at = "spec.overrideRules[0].overriders.";
  EXPECT_EQ(fields,
            (std::vector<std::string>{
                at + "plaintext[0].path", at + "plaintext[1].value", at + "plaintext[2].value",
                at + "imageOverrider[0].component", at + "commandOverrider[0].containerName",
                at + "commandOverrider[0].operator", at + "fieldOverrider[0]"}));
}

TEST(ValidateQuotaTest, NegativeQuantitiesAndMissingFields) {
  json::object obj = Obj(R"({"metadata":{"name":"q","namespace":"web"},"spec":{
      "overall":{"cpu":"-1","memory":"1Gi"},
      "staticAssignments":[{"clusterName":"a","hard":{"pods":"-2"}},{"hard":{}},
                           {"clusterName":"a","hard":{}}]}})");
  std::vector<std::string> fields;
  for (const StatusCause& c : ValidateFederatedResourceQuota(obj)) fields.push_back(c.field);
  EXPECT_EQ(fields,
            (std::vector<std::string>{"spec.overall[cpu]", "spec.staticAssignments[0].hard[pods]",
                                      "spec.staticAssignments[0].hard[pods]",
                                      "spec.staticAssignments[1].clusterName",
                                      "spec.staticAssignments[2].clusterName"}));
}

// As Karmada's webhook: the assignments are parts of spec.overall.
TEST(ValidateQuotaTest, AssignmentsWithinTheOverall) {
  json::object obj = Obj(R"({"metadata":{"name":"q","namespace":"web"},"spec":{
      "overall":{"pods":"5","cpu":"2"},
      "staticAssignments":[{"clusterName":"a","hard":{"pods":"3","cpu":"1"}},
                           {"clusterName":"b","hard":{"pods":"3","memory":"1Gi"}}]}})");
  std::vector<std::string> messages;
  for (const StatusCause& c : ValidateFederatedResourceQuota(obj))
    messages.push_back(c.field + ": " + c.message);
  EXPECT_EQ(messages, (std::vector<std::string>{
                          "spec.staticAssignments[1].hard[memory]: Invalid value: \"1Gi\": "
                          "assignment resourceName is not exist in overall",
                          "spec.overall[pods]: Invalid value: \"5\": overall is less than "
                          "assignments"}));
}

TEST(WarningsTest, OverridesOfKindsWhoseCopiesDoNotTakeThem) {
  auto op = [](std::string_view kinds) {
    return Obj(R"({"kind":"OverridePolicy","spec":{"resourceSelectors":[)" + std::string(kinds) +
               "]}}");
  };
  EXPECT_TRUE(OverrideWarnings(op(R"({"apiVersion":"v1","kind":"ConfigMap"},
                                     {"apiVersion":"apps/v1","kind":"ReplicaSet"})"))
                  .empty());
  EXPECT_TRUE(OverrideWarnings(op(R"({"apiVersion":"apps/v1","kind":"Deployment"})")).empty());
  EXPECT_TRUE(OverrideWarnings(op(R"({"apiVersion":"apps/v1","kind":"StatefulSet"})")).empty());
  EXPECT_EQ(
      OverrideWarnings(op(R"({"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler"})"))
          .size(),
      1u);
  EXPECT_EQ(OverrideWarnings(op("")).size(), 1u);  // every kind
}

TEST(WarningsTest, FieldsKeptButNotActedOn) {
  EXPECT_TRUE(PropagationWarnings(Obj(Pp("p", 0, ""))).empty());
  auto w = PropagationWarnings(Obj(Pp(
      "p", 0, "",
      R"(,"association":true,"propagateDeps":true,"placement":{"clusterTolerations":[{"key":"a","operator":"Exists"}]})")));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("spec.association"), std::string::npos);
}

TEST(SpreadTest, TheClusterConstraintAloneTakesTheBestClusters) {
  std::vector<SpreadCandidate> c = {{.name = "a", .available = 2},
                                    {.name = "b", .available = 10},
                                    {.name = "c", .holds = true, .available = 1},
                                    {.name = "d"}};  // unknown room: plenty
  std::vector<SpreadConstraint> two = {{.field = "cluster", .min_groups = 1, .max_groups = 2}};
  // The one holding the object first, then by room.
  EXPECT_EQ(*SelectBySpread(two, c, std::nullopt), (std::vector<std::string>{"c", "d"}));
  c[3].available = 3;
  EXPECT_EQ(*SelectBySpread(two, c, std::nullopt), (std::vector<std::string>{"c", "b"}));
  // 11 replicas do not fit c and b: ... they do (1 + 10); 12 need d for c.
  EXPECT_EQ(*SelectBySpread(two, c, 11), (std::vector<std::string>{"c", "b"}));
  EXPECT_EQ(*SelectBySpread(two, c, 13), (std::vector<std::string>{"d", "b"}));
  EXPECT_FALSE(SelectBySpread(two, c, 14).ok());
  std::vector<SpreadConstraint> five = {{.field = "cluster", .min_groups = 5}};
  auto too_few = SelectBySpread(five, c, std::nullopt);
  ASSERT_FALSE(too_few.ok());
  EXPECT_NE(too_few.status().message().find("minGroups (5)"), std::string::npos);
  // No maximum: every cluster.
  EXPECT_EQ(
      SelectBySpread(std::vector<SpreadConstraint>{{.field = "cluster"}}, c, std::nullopt)->size(),
      4u);
}

TEST(SpreadTest, ARegionConstraintTakesTheFewestBestRegionsWithEnoughClusters) {
  std::vector<SpreadCandidate> c = {{.name = "eu-1", .group = "eu", .available = 5},
                                    {.name = "eu-2", .group = "eu", .available = 4},
                                    {.name = "us-1", .group = "us", .available = 9},
                                    {.name = "ap-1", .group = "ap", .available = 1},
                                    {.name = "ap-2", .group = "ap", .available = 1},
                                    {.name = "ap-3", .group = "ap", .available = 1}};
  // One region, two clusters: us has one only, so eu.
  std::vector<SpreadConstraint> one = {{.field = "region", .min_groups = 1, .max_groups = 1},
                                       {.field = "cluster", .min_groups = 2, .max_groups = 2}};
  EXPECT_EQ(*SelectBySpread(one, c, std::nullopt), (std::vector<std::string>{"eu-1", "eu-2"}));
  // Two or three regions, three or four clusters: the best two have three.
  std::vector<SpreadConstraint> two = {{.field = "region", .min_groups = 2, .max_groups = 3},
                                       {.field = "cluster", .min_groups = 3, .max_groups = 4}};
  EXPECT_EQ(*SelectBySpread(two, c, std::nullopt),
            (std::vector<std::string>{"us-1", "eu-1", "eu-2"}));
  // Five clusters from two regions: only eu and ap have them.
  std::vector<SpreadConstraint> five = {{.field = "region", .min_groups = 2, .max_groups = 2},
                                        {.field = "cluster", .min_groups = 5}};
  EXPECT_EQ(*SelectBySpread(five, c, std::nullopt),
            (std::vector<std::string>{"eu-1", "ap-1", "eu-2", "ap-2", "ap-3"}));
  // Four regions there are not; nor seven clusters in two.
  std::vector<SpreadConstraint> four = {{.field = "region", .min_groups = 4}, {.field = "cluster"}};
  EXPECT_FALSE(SelectBySpread(four, c, std::nullopt).ok());
  std::vector<SpreadConstraint> seven = {{.field = "region", .min_groups = 1, .max_groups = 2},
                                         {.field = "cluster", .min_groups = 7}};
  EXPECT_FALSE(SelectBySpread(seven, c, std::nullopt).ok());
}

TEST(TaintsTest, ACordonedClusterCarriesTheUnschedulableTaint) {
  EXPECT_TRUE(TaintsOf(Obj(R"({"spec":{}})")).empty());
  auto cordoned = TaintsOf(Obj(R"({"spec":{"unschedulable":true}})"));
  ASSERT_EQ(cordoned.size(), 1u);
  EXPECT_EQ(cordoned[0].key, kUnschedulableTaintKey);
  EXPECT_EQ(cordoned[0].effect, kNoSchedule);
  // Written already (kubectl flotilla cordon writes it): not twice.
  auto both = TaintsOf(Obj(R"({"spec":{"unschedulable":true,"taints":[
      {"key":"cluster.karmada.io/unschedulable","effect":"NoSchedule"},
      {"key":"gpu","value":"a100","effect":"NoExecute","timeAdded":"2026-01-01T00:00:00Z"}]}})"));
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[1].key, "gpu");
  EXPECT_EQ(both[1].value, "a100");
  ASSERT_TRUE(both[1].added.has_value());
}

TEST(TaintsTest, TolerationsMatchAsAPodsDo) {
  ClusterTaint gpu{.key = "gpu", .value = "a100", .effect = kNoSchedule};
  EXPECT_TRUE((ClusterToleration{.key = "gpu", .value = "a100"}).Tolerates(gpu));
  EXPECT_FALSE((ClusterToleration{.key = "gpu", .value = "h100"}).Tolerates(gpu));
  EXPECT_TRUE((ClusterToleration{.key = "gpu", .exists = true}).Tolerates(gpu));
  EXPECT_TRUE((ClusterToleration{.exists = true}).Tolerates(gpu));  // every key
  EXPECT_FALSE(
      (ClusterToleration{.key = "gpu", .exists = true, .effect = kNoExecute}).Tolerates(gpu));
  EXPECT_FALSE((ClusterToleration{.key = "other", .exists = true}).Tolerates(gpu));
}

TEST(TaintsTest, TheVerdictOfEachEffect) {
  TimePoint now = TimePoint() + std::chrono::hours(1000);
  std::vector<ClusterTaint> taints = {
      {.key = "gpu", .effect = kNoSchedule},
      {.key = "maintenance", .effect = kNoExecute, .added = now - std::chrono::seconds(100)},
      {.key = "soft", .effect = "PreferNoSchedule"}};
  TaintVerdict none = JudgeTaints(taints, {}, now);
  EXPECT_TRUE(none.no_schedule);
  EXPECT_TRUE(none.no_execute);
  EXPECT_FALSE(none.changes_at.has_value());

  std::vector<ClusterToleration> all = {{.key = "gpu", .exists = true},
                                        {.key = "maintenance", .exists = true}};
  TaintVerdict tolerated = JudgeTaints(taints, all, now);
  EXPECT_FALSE(tolerated.no_schedule);
  EXPECT_FALSE(tolerated.no_execute);

  // Tolerated for 300 s after the taint came: 200 s more.
  std::vector<ClusterToleration> a_while = {
      {.key = "gpu", .exists = true},
      {.key = "maintenance", .exists = true, .effect = kNoExecute, .seconds = 300}};
  TaintVerdict v = JudgeTaints(taints, a_while, now);
  EXPECT_FALSE(v.no_execute);
  ASSERT_TRUE(v.changes_at.has_value());
  EXPECT_EQ(*v.changes_at, now + std::chrono::seconds(200));
  // ... and after that, not.
  TaintVerdict later = JudgeTaints(taints, a_while, now + std::chrono::seconds(200));
  EXPECT_TRUE(later.no_execute);
  EXPECT_FALSE(later.changes_at.has_value());

  TaintVerdict cordon = JudgeTaints(
      TaintsOf(Obj(R"({"spec":{"unschedulable":true}})")),
      std::vector<ClusterToleration>{{.key = kUnschedulableTaintKey, .exists = true}}, now);
  EXPECT_TRUE(cordon.cordon_tolerated);
  EXPECT_FALSE(cordon.no_schedule);
}

TEST(TaintsTest, APolicyReadsItsTolerations) {
  auto p = Policy(Pp("p", 0, "", R"(,"placement":{"clusterTolerations":[
      {"key":"gpu","operator":"Equal","value":"a100","effect":"NoSchedule"},
      {"key":"maintenance","operator":"Exists","effect":"NoExecute","tolerationSeconds":60}]})"));
  ASSERT_EQ(p->tolerations.size(), 2u);
  EXPECT_EQ(p->tolerations[0].value, "a100");
  EXPECT_FALSE(p->tolerations[0].exists);
  EXPECT_TRUE(p->tolerations[1].exists);
  EXPECT_EQ(p->tolerations[1].seconds, 60);
}

}  // namespace
}  // namespace flotilla::api::policy
