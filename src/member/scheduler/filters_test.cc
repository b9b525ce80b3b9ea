// Quantities, pod requests, the filters and kube-scheduler's FitError
// message, as pure functions.
#include "member/scheduler/filters.h"

#include <gtest/gtest.h>

namespace flotilla::member::scheduler {
namespace {

json::object Parse(std::string_view text) {
  auto v = ParseJsonObject(text);
  EXPECT_TRUE(v.ok()) << text;
  return v.ok() ? *v : json::object{};
}

json::object Node(std::string_view extra = "") {
  std::string text = R"({"metadata":{"name":"n","labels":{"zone":"a","gen":"3"}},
      "status":{"allocatable":{"cpu":"4","memory":"16Gi","pods":"110"},
                "conditions":[{"type":"Ready","status":"True"}]}})";
  json::object node = Parse(text);
  if (!extra.empty()) node["spec"] = Parse(extra);
  return node;
}

json::object Pod(std::string_view spec) {
  json::object pod = Parse(R"({"metadata":{"name":"p","namespace":"default"}})");
  pod["spec"] = Parse(spec);
  return pod;
}

TEST(QuantityTest, ParsesKubernetesQuantities) {
  EXPECT_EQ(ParseQuantity("100m", 1000), 100);
  EXPECT_EQ(ParseQuantity("0.5", 1000), 500);
  EXPECT_EQ(ParseQuantity("2", 1000), 2000);
  EXPECT_EQ(ParseQuantity("1e3", 1), 1000);
  EXPECT_EQ(ParseQuantity("1.5Gi", 1), 1610612736);
  EXPECT_EQ(ParseQuantity("64Mi", 1), 64 << 20);
  EXPECT_EQ(ParseQuantity("1k", 1), 1000);
  EXPECT_EQ(ParseQuantity("0.1", 1000), 100);  // exact, not 101
  EXPECT_EQ(ParseQuantity("1m", 1), 1);        // Value() rounds up
  EXPECT_EQ(ParseQuantity("8Ei", 1000), std::numeric_limits<int64_t>::max());
  EXPECT_FALSE(ParseQuantity("", 1));
  EXPECT_FALSE(ParseQuantity("abc", 1));
  EXPECT_FALSE(ParseQuantity("1Qi", 1));
  EXPECT_EQ(QuantityValue(json::value(3), 1000), 3000);
}

TEST(QuantityTest, PodRequestsSumContainersAndTakeTheLargestInitContainer) {
  json::object pod = Pod(R"({
    "containers":[{"name":"a","resources":{"requests":{"cpu":"100m","memory":"1Gi"}}},
                  {"name":"b","resources":{"limits":{"cpu":"200m"}}}],
    "initContainers":[{"name":"i","resources":{"requests":{"cpu":"1","memory":"1Mi"}}}]})");
  Resources r = PodRequests(pod);
  EXPECT_EQ(r.milli_cpu, 1000);
  EXPECT_EQ(r.memory, int64_t{1} << 30);
  EXPECT_EQ(r.pods, 1);
  Resources nz = NonZeroPodRequests(Pod(R"({"containers":[{"name":"a"}]})"));
  EXPECT_EQ(nz.milli_cpu, 100);
  EXPECT_EQ(nz.memory, 200 << 20);
}

TEST(FilterTest, ResourcesFitAgainstAllocatableMinusUsage) {
  json::object pod = Pod(R"({"containers":[{"name":"a","resources":{"requests":{"cpu":"3"}}}]})");
  NodeUsage usage;
  EXPECT_TRUE(Filter(pod, PodRequests(pod), Node(), usage).Fits());
  usage.requested.milli_cpu = 1500;
  NodeVerdict v = Filter(pod, PodRequests(pod), Node(), usage);
  EXPECT_EQ(v.reasons, std::vector<std::string>{"Insufficient cpu"});
  EXPECT_FALSE(v.unresolvable);
  usage.requested.pods = 110;
  EXPECT_EQ(Filter(pod, PodRequests(pod), Node(), usage).reasons,
            (std::vector<std::string>{"Too many pods", "Insufficient cpu"}));
}

TEST(FilterTest, NodeSelectorAndRequiredAffinity) {
  auto fits = [](std::string_view spec) {
    json::object pod = Pod(spec);
    return Filter(pod, PodRequests(pod), Node(), {}).Fits();
  };
  EXPECT_TRUE(fits(R"({"nodeSelector":{"zone":"a"}})"));
  EXPECT_FALSE(fits(R"({"nodeSelector":{"zone":"b"}})"));
  auto affinity = [](std::string_view expr) {
    return std::string(
               R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
        {"nodeSelectorTerms":[{"matchExpressions":[)") +
           std::string(expr) + "]}]}}}}";
  };
  EXPECT_TRUE(fits(affinity(R"({"key":"zone","operator":"In","values":["a","b"]})")));
  EXPECT_FALSE(fits(affinity(R"({"key":"zone","operator":"NotIn","values":["a"]})")));
  EXPECT_TRUE(fits(affinity(R"({"key":"zone","operator":"Exists"})")));
  EXPECT_TRUE(fits(affinity(R"({"key":"gpu","operator":"DoesNotExist"})")));
  EXPECT_TRUE(fits(affinity(R"({"key":"gen","operator":"Gt","values":["2"]})")));
  EXPECT_FALSE(fits(affinity(R"({"key":"gen","operator":"Lt","values":["3"]})")));
  json::object pod = Pod(R"({"nodeSelector":{"zone":"b"}})");
  NodeVerdict v = Filter(pod, PodRequests(pod), Node(), {});
  EXPECT_EQ(v.reasons,
            std::vector<std::string>{"node(s) didn't match Pod's node affinity/selector"});
  EXPECT_TRUE(v.unresolvable);
}

TEST(FilterTest, TaintsTolerationsUnschedulableAndNotReady) {
  json::object tainted =
      Node(R"({"taints":[{"key":"dedicated","value":"gpu","effect":"NoSchedule"}]})");
  json::object plain = Pod(R"({})");
  EXPECT_EQ(Filter(plain, PodRequests(plain), tainted, {}).reasons,
            std::vector<std::string>{"node(s) had untolerated taint {dedicated: gpu}"});
  json::object tolerant =
      Pod(R"({"tolerations":[{"key":"dedicated","operator":"Equal","value":"gpu"}]})");
  EXPECT_TRUE(Filter(tolerant, PodRequests(tolerant), tainted, {}).Fits());
  json::object prefer = Node(R"({"taints":[{"key":"x","effect":"PreferNoSchedule"}]})");
  EXPECT_TRUE(Filter(plain, PodRequests(plain), prefer, {}).Fits());

  json::object cordoned = Node(R"({"unschedulable":true})");
  EXPECT_EQ(Filter(plain, PodRequests(plain), cordoned, {}).reasons,
            std::vector<std::string>{"node(s) were unschedulable"});

  json::object not_ready = Node();
  not_ready["status"].as_object()["conditions"] =
      Parse(R"({"c":[{"type":"Ready","status":"False"}]})")["c"];
  EXPECT_EQ(
      Filter(plain, PodRequests(plain), not_ready, {}).reasons,
      std::vector<std::string>{"node(s) had untolerated taint {node.kubernetes.io/not-ready: }"});
}

TEST(FitErrorTest, CountsReasonsSortedAsKubeScheduler) {
  json::object pod = Pod(R"({})");
  std::vector<NodeVerdict> verdicts = {
      {{"Insufficient cpu"}, false},
      {{"node(s) didn't match Pod's node affinity/selector"}, true},
      {{"node(s) didn't match Pod's node affinity/selector"}, true}};
  EXPECT_EQ(FitErrorMessage(pod, verdicts),
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node "
            "affinity/selector. preemption: 0/3 nodes are available: 1 No preemption victims found "
            "for incoming pod, 2 Preemption is not helpful for scheduling..");
  std::vector<NodeVerdict> cpu(3, NodeVerdict{{"Insufficient cpu"}, false});
  EXPECT_EQ(FitErrorMessage(pod, cpu),
            "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 "
            "No preemption victims found for incoming pod..");
  EXPECT_EQ(FitErrorMessage(pod, {}), "no nodes available to schedule pods");
  json::object never = Pod(R"({"preemptionPolicy":"Never"})");
  EXPECT_EQ(FitErrorMessage(never, cpu),
            "0/3 nodes are available: 3 Insufficient cpu. preemption: not eligible due to "
            "preemptionPolicy=Never..");
}

TEST(ScoreTest, PrefersTheLeastAllocatedNode) {
  Resources request = NonZeroPodRequests(Pod(R"({"containers":[{"name":"a"}]})"));
  NodeUsage busy;
  busy.non_zero_requested.milli_cpu = 2000;
  busy.non_zero_requested.memory = int64_t{8} << 30;
  EXPECT_GT(Score(request, Node(), {}), Score(request, Node(), busy));
}

// kube-scheduler's numFeasibleNodesToFind, percentageOfNodesToScore unset.
TEST(FeasibleNodesToFindTest, KubeSchedulersAdaptiveShare) {
  EXPECT_EQ(FeasibleNodesToFind(0), 0u);
  EXPECT_EQ(FeasibleNodesToFind(99), 99u);     // under 100: every node
  EXPECT_EQ(FeasibleNodesToFind(100), 100u);   // 50% is 50: at least 100
  EXPECT_EQ(FeasibleNodesToFind(1000), 420u);  // 50% - 8%
  EXPECT_EQ(FeasibleNodesToFind(5000), 500u);  // 50% - 40%
  EXPECT_EQ(FeasibleNodesToFind(6000), 300u);  // 50% - 48% is under 5%: 5%
  EXPECT_EQ(FeasibleNodesToFind(20000), 1000u);
}

}  // namespace
}  // namespace flotilla::member::scheduler
