// Golden tests of the status and clusters tables: each testdata/NAME.json
// holds Clusters, federated workloads and HPAs as the API returns them; the
// expected outputs are testdata/NAME.VARIANT.txt. With
// FLOTILLA_UPDATE_GOLDEN=1 the test rewrites them (review the diff).
#include "federation/overview/table.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "api/federated.h"

namespace flotilla::federation::overview {
namespace {

namespace fs = std::filesystem;

fs::path TestData() {
  const char* src = std::getenv("FLOTILLA_SOURCE_DIR");
  return fs::path(src != nullptr ? src : ".") / "src/federation/overview/testdata";
}

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<json::object> Objects(const json::object& doc, const char* key) {
  std::vector<json::object> out;
  for (const json::value& v : doc.at(key).as_array()) out.push_back(v.as_object());
  return out;
}

// Compares `got` with the golden file, or rewrites it.
void ExpectGolden(const fs::path& golden, const std::string& got) {
  if (std::getenv("FLOTILLA_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(golden) << got;
    return;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " is missing; FLOTILLA_UPDATE_GOLDEN=1 writes it";
  EXPECT_EQ(got, Read(golden)) << "differs from " << golden;
}

// As the workload kinds declare them (federation::ListedWorkloads).
const BreakdownAnnotations kBreakdowns{{"Deployment", api::kDeploymentStatusAnnotation},
                                       {"ReplicaSet", api::kReplicaSetStatusAnnotation},
                                       {"StatefulSet", api::kStatefulSetStatusAnnotation},
                                       {"DaemonSet", api::kDaemonSetStatusAnnotation},
                                       {"Job", api::kJobStatusAnnotation},
                                       {"PodDisruptionBudget", api::kDisruptionStatusAnnotation},
                                       {"Ingress", api::kIngressStatusAnnotation},
                                       {"PersistentVolumeClaim", api::kClaimStatusAnnotation}};

class GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTest, TablesAsKept) {
  fs::path dir = TestData();
  auto doc = ParseJsonObject(Read(dir / (GetParam() + ".json")));
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  Overview o = Build(Objects(*doc, "clusters"), Objects(*doc, "workloads"), Objects(*doc, "hpas"),
                     kBreakdowns);
  auto golden = [&](const char* variant) { return dir / (GetParam() + "." + variant + ".txt"); };
  ExpectGolden(golden("status"), StatusTable(o.clusters, o.workloads, {}));
  ExpectGolden(golden("status-wide-all"),
               StatusTable(o.clusters, o.workloads, {.wide = true, .all_namespaces = true}));
  ExpectGolden(golden("status-colour"), StatusTable(o.clusters, o.workloads, {.colour = true}));
  ExpectGolden(golden("clusters"), ClustersTable(o.clusters, {}));
  ExpectGolden(golden("clusters-wide"), ClustersTable(o.clusters, {.wide = true}));
  json::array workloads, clusters;
  for (const WorkloadInfo& w : o.workloads) workloads.push_back(ToJson(w));
  for (const ClusterInfo& c : o.clusters) clusters.push_back(ToJson(c));
  ExpectGolden(
      golden("json"),
      flotilla::ToJson(json::object{{"clusters", clusters}, {"workloads", workloads}}) + "\n");
}

INSTANTIATE_TEST_SUITE_P(Cases, GoldenTest, ::testing::Values("three_clusters", "just_joined"));

TEST(RenderTableTest, ColumnsThreeApartWithoutTrailingBlanksAndColourOnlyWhenAsked) {
  std::vector<std::vector<TableCell>> rows{{{"a", Tone::kGood}, {"", Tone::kPlain}},
                                           {{"longer", Tone::kBad}, {"x", Tone::kPlain}}};
  EXPECT_EQ(RenderTable({{"N", "V"}}, rows, false), "N        V\na\nlonger   x\n");
  EXPECT_EQ(RenderTable({{"N", "V"}}, rows, true),
            "N        V\n\033[32ma\033[0m\n\033[31mlonger\033[0m   x\n");
  // Widths in code points, not bytes.
  EXPECT_EQ(RenderTable({{"É", "V"}}, {{{"ab"}, {"1"}}}, false), "É    V\nab   1\n");
}

TEST(OverviewTest, ShadowReplicaSetsAreNotWorkloadsAndHpasFindTheirTargets) {
  auto rs = *ParseJsonObject(R"({"kind": "ReplicaSet", "metadata": {"name": "web-5f6",
      "namespace": "d", "annotations": {"federation.kubernetes.io/shadow-replicaset": "true"}}})");
  auto d = *ParseJsonObject(
      R"({"kind": "Deployment", "metadata": {"name": "web", "namespace": "d"}, "spec": {}})");
  auto other_ns = *ParseJsonObject(R"({"metadata": {"name": "h1", "namespace": "e"},
      "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 9}})");
  auto hpa = *ParseJsonObject(R"({"metadata": {"name": "h2", "namespace": "d"},
      "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 5}})");
  Overview o = Build({}, {rs, d}, {other_ns, hpa}, kBreakdowns);
  ASSERT_EQ(o.workloads.size(), 1u);
  EXPECT_EQ(o.workloads[0].name, "web");
  EXPECT_EQ(o.workloads[0].desired, 1);  // replicas defaults to 1
  EXPECT_EQ(o.workloads[0].hpa, "h2");
  EXPECT_EQ(o.workloads[0].hpa_max, 5);
  EXPECT_EQ(o.workloads[0].rollout, "complete");
}

// A DaemonSet lists the nodes that should run its pod, per cluster.
TEST(OverviewTest, ADaemonSetCountsNodes) {
  auto ds = *ParseJsonObject(R"({"kind": "DaemonSet", "metadata": {"name": "logs",
      "namespace": "d", "annotations": {"federation.kubernetes.io/daemonset-status":
      "{\"clusters\":{\"a\":{\"planned\":3,\"ready\":2,\"rollout\":\"updating\"},\"b\":{\"planned\":2,\"ready\":2,\"rollout\":\"waiting\"}}}"}},
      "spec": {}, "status": {"desiredNumberScheduled": 5, "numberReady": 4}})");
  Overview o = Build({}, {ds}, {}, kBreakdowns);
  ASSERT_EQ(o.workloads.size(), 1u);
  const WorkloadInfo& w = o.workloads[0];
  EXPECT_EQ(w.desired, 5);
  EXPECT_EQ(w.ready, 4);
  EXPECT_EQ(w.cells.at("a").planned, 3);
  EXPECT_EQ(w.cells.at("b").ready, 2);
  EXPECT_EQ(w.updating, std::vector<std::string>{"a"});
  EXPECT_EQ(w.waiting, std::vector<std::string>{"b"});
}

// A Job lists its completions and those that succeeded, per cluster.
TEST(OverviewTest, AJobCountsCompletions) {
  auto job = *ParseJsonObject(R"({"kind": "Job", "metadata": {"name": "render",
      "namespace": "d", "annotations": {"federation.kubernetes.io/job-status":
      "{\"clusters\":{\"a\":{\"planned\":6,\"ready\":6,\"reachable\":true}}}"}},
      "spec": {"completions": 12, "parallelism": 6}, "status": {"succeeded": 9}})");
  Overview o = Build({}, {job}, {}, kBreakdowns);
  ASSERT_EQ(o.workloads.size(), 1u);
  EXPECT_EQ(o.workloads[0].desired, 12);
  EXPECT_EQ(o.workloads[0].ready, 9);
  EXPECT_EQ(o.workloads[0].cells.at("a").planned, 6);
  EXPECT_EQ(o.workloads[0].rollout, "");
}

// A budget lists its healthy pods against those it wants; an Ingress and a
// claim their copies against those served or Bound. None has a rollout.
TEST(OverviewTest, BudgetsIngressesAndClaimsCountWhatTheirKindsHave) {
  auto pdb = *ParseJsonObject(R"({"kind": "PodDisruptionBudget", "metadata": {"name": "web",
      "namespace": "d", "annotations": {"federation.kubernetes.io/pdb-status":
      "{\"clusters\":{\"a\":{\"planned\":2,\"ready\":3},\"b\":{\"planned\":1,\"ready\":0}}}"}},
      "spec": {"minAvailable": 3}, "status": {"desiredHealthy": 3, "currentHealthy": 3}})");
  auto ing = *ParseJsonObject(R"({"kind": "Ingress", "metadata": {"name": "shop",
      "namespace": "d", "annotations": {"federation.kubernetes.io/ingress-status":
      "{\"clusters\":{\"a\":{\"planned\":1,\"ready\":1},\"b\":{\"planned\":1,\"ready\":0}}}"}},
      "spec": {}})");
  auto pvc = *ParseJsonObject(R"({"kind": "PersistentVolumeClaim", "metadata": {"name": "data",
      "namespace": "d", "annotations": {"federation.kubernetes.io/pvc-status":
      "{\"clusters\":{\"b\":{\"planned\":1,\"ready\":1}}}"}},
      "spec": {}, "status": {"phase": "Bound"}})");
  Overview o = Build({}, {pdb, ing, pvc}, {}, kBreakdowns);
  ASSERT_EQ(o.workloads.size(), 3u);
  std::map<std::string, const WorkloadInfo*> by_kind;
  for (const WorkloadInfo& w : o.workloads) by_kind[w.kind] = &w;
  const WorkloadInfo& budget = *by_kind.at("PodDisruptionBudget");
  EXPECT_EQ(budget.desired, 3);
  EXPECT_EQ(budget.ready, 3);
  EXPECT_EQ(budget.cells.at("a").ready, 3);
  EXPECT_EQ(budget.cells.at("b").planned, 1);
  const WorkloadInfo& ingress = *by_kind.at("Ingress");
  EXPECT_EQ(ingress.desired, 2);
  EXPECT_EQ(ingress.ready, 1);
  const WorkloadInfo& claim = *by_kind.at("PersistentVolumeClaim");
  EXPECT_EQ(claim.desired, 1);
  EXPECT_EQ(claim.ready, 1);
  EXPECT_FALSE(claim.cells.contains("a"));
  for (const WorkloadInfo& w : o.workloads) EXPECT_EQ(w.rollout, "") << w.kind;
}

}  // namespace
}  // namespace flotilla::federation::overview
