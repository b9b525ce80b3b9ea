// The planner's table tests. The cases are data: every line of
// testdata/*.jsonl is a `flotilla plan` case plus "name" and "expect"
// ({"plan", "overflow"[, "explain"]} or {"error", "field"}), so adding a case
// is adding a line. Below the driver: the hash, the map-shaped API and the
// 1,000-cluster cases, whose lines would be too long to read.
#include "planner/planner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "planner/plan_case.h"

namespace flotilla::planner {
namespace {

namespace fs = std::filesystem;

struct DataCase {
  std::string where;  // file:line
  std::string name;
  json::object doc;  // the case, without "name" and "expect"
  json::object expect;
};

std::vector<DataCase> LoadCases(const fs::path& file) {
  std::vector<DataCase> cases;
  std::ifstream in(file);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string where = file.filename().string() + ":" + std::to_string(n);
    StatusOr<json::object> doc = ParseJsonObject(line);
    if (!doc.ok()) ADD_FAILURE() << where << ": " << doc.status().ToString();
    if (!doc.ok()) continue;
    DataCase c{where, std::string(GetString(*doc, "name").value_or("")), {}, {}};
    if (const json::object* expect = GetObject(*doc, "expect")) c.expect = *expect;
    if (c.expect.empty()) ADD_FAILURE() << where << ": no \"expect\" object";
    // Copied rather than erased: erasing moves the last field, and the order
    // of the fields is the order of the errors.
    for (const auto& [key, value] : *doc) {
      if (key != "name" && key != "expect") c.doc[key] = value;
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

void CheckError(const DataCase& c, const Status& status) {
  ASSERT_FALSE(status.ok()) << "expected an error, the case was accepted";
  EXPECT_EQ(status.reason(), Reason::kInvalid) << status.ToString();
  std::string want = std::string(GetString(c.expect, "error").value_or(""));
  EXPECT_NE(status.message().find(want), std::string::npos)
      << "error \"" << status.message() << "\" does not contain \"" << want << "\"";
  if (auto field = GetString(c.expect, "field")) {
    bool found = false;
    for (const StatusCause& cause : status.causes()) found |= cause.field == *field;
    EXPECT_TRUE(found) << "no cause names field " << *field << ": " << status.message();
  }
}

void CheckExplain(const json::object& want, const json::object& got) {
  for (const auto& [cluster, fields] : want) {
    const json::object* have = GetObject(got, cluster);
    ASSERT_NE(have, nullptr) << "no explanation for " << cluster;
    for (const auto& [field, value] : fields.as_object()) {
      const json::value* actual = have->if_contains(field);
      EXPECT_TRUE(actual != nullptr && *actual == value)
          << cluster << "." << field << ": want " << json::serialize(value) << ", got "
          << json::serialize(*have);
    }
  }
}

void CheckPlan(const DataCase& c, const PlanCase& plan_case) {
  const json::object* explain = GetObject(c.expect, "explain");
  json::object got = RunPlanCase(plan_case, explain != nullptr);
  json::value want_plan = c.expect.contains("plan") ? c.expect.at("plan") : json::object();
  json::value want_overflow =
      c.expect.contains("overflow") ? c.expect.at("overflow") : json::object();
  EXPECT_EQ(json::serialize(got.at("plan")), json::serialize(want_plan));
  EXPECT_EQ(json::serialize(got.at("overflow")), json::serialize(want_overflow));
  if (explain != nullptr) CheckExplain(*explain, got.at("explain").as_object());

  // The map-shaped API agrees with the span-shaped one.
  PlanResult maps = Plan(plan_case.replicas, plan_case.clusters, plan_case.current,
                         plan_case.capacity, plan_case.key, plan_case.preferences);
  for (const auto& [cluster, count] : got.at("plan").as_object()) {
    EXPECT_EQ(maps.plan[std::string(cluster)], count.as_int64()) << cluster;
  }
  EXPECT_EQ(maps.overflow.size(), got.at("overflow").as_object().size());
}

void RunFile(const std::string& name) {
  fs::path file = fs::path(FLOTILLA_PLANNER_TESTDATA) / name;
  ASSERT_TRUE(fs::exists(file)) << file;
  std::vector<DataCase> cases = LoadCases(file);
  EXPECT_GE(cases.size(), 5u) << "too few cases in " << file;
  for (const DataCase& c : cases) {
    SCOPED_TRACE(c.where + " " + c.name);
    StatusOr<PlanCase> plan_case = PlanCaseFromJson(c.doc);
    if (c.expect.contains("error")) {
      CheckError(c, plan_case.status());
    } else if (plan_case.ok()) {
      CheckPlan(c, *plan_case);
    } else {
      ADD_FAILURE() << plan_case.status().ToString();
    }
  }
}

TEST(PlannerData, SeedScenarios) { RunFile("seed_scenarios.jsonl"); }
TEST(PlannerData, OriginalPlannerTables) { RunFile("original_planner.jsonl"); }
TEST(PlannerData, ScaleDownFix) { RunFile("scale_down.jsonl"); }
TEST(PlannerData, EdgeCases) { RunFile("edge_cases.jsonl"); }
TEST(PlannerData, InvalidCases) { RunFile("invalid.jsonl"); }

TEST(PlannerData, EveryFileIsRun) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(FLOTILLA_PLANNER_TESTDATA)) {
    if (entry.path().extension() == ".jsonl") files.push_back(entry.path().filename());
  }
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files,
            (std::vector<std::string>{"edge_cases.jsonl", "invalid.jsonl", "original_planner.jsonl",
                                      "scale_down.jsonl", "seed_scenarios.jsonl"}));
}

TEST(TieBreakHash, IsFnv1Over32Bits) {
  EXPECT_EQ(TieBreakHash("", ""), 0x811c9dc5u);   // the offset basis
  EXPECT_EQ(TieBreakHash("a", ""), 0x050c5d7eu);  // FNV-1a would give 0xe40c292c
  EXPECT_EQ(TieBreakHash("foobar", ""), 0x31f0b262u);
  // The name's bytes, then the key's.
  EXPECT_EQ(TieBreakHash("foo", "bar"), TieBreakHash("foobar", ""));
  EXPECT_EQ(TieBreakHash("A", "default/web"), 0xb2df51cau);
}

TEST(Plan, MapShapedInputsAndOutputs) {
  PlanResult r =
      Plan(50, {"A", "B", "C"}, {{"A", 20}, {"Z", 9}}, {{"C", 6}}, "web", Preferences::Default());
  EXPECT_EQ(r.plan, (ReplicaCounts{{"A", 22}, {"B", 22}, {"C", 6}}));
  EXPECT_TRUE(r.overflow.empty());
}

TEST(Plan, RepeatedAvailableClusterIsPlannedOnce) {
  PlanResult r = Plan(10, {"A", "B", "A"}, {}, {}, "", Preferences::Default());
  EXPECT_EQ(r.plan, (ReplicaCounts{{"A", 5}, {"B", 5}}));
}

std::vector<std::string> ClusterNames(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back("cluster-" + std::to_string(i));
  return names;
}

TEST(Plan, ThousandClustersEvenSpread) {
  PlanResult r = Plan(5000, ClusterNames(1000), {}, {}, "default/web", Preferences::Default());
  ASSERT_EQ(r.plan.size(), 1000u);
  for (const auto& [name, count] : r.plan) EXPECT_EQ(count, 5) << name;
}

TEST(Plan, ThousandClustersRoundingFrontLoads) {
  // ceil(1500 / 1000) = 2 for each cluster in order until the replicas run
  // out: 750 clusters get 2 and 250 get none, as in the original.
  PlanResult r = Plan(1500, ClusterNames(1000), {}, {}, "default/web", Preferences::Default());
  int twos = 0, zeros = 0;
  for (const auto& [name, count] : r.plan) {
    twos += count == 2;
    zeros += count == 0;
  }
  EXPECT_EQ(twos, 750);
  EXPECT_EQ(zeros, 250);
}

TEST(Plan, ThousandClustersWithCapacityAndMax) {
  Preferences prefs = Preferences::Default();
  ReplicaCounts capacity;
  std::vector<std::string> names = ClusterNames(1000);
  for (int i = 0; i < 1000; i += 4) prefs.clusters[names[i]] = {.max_replicas = 3, .weight = 2};
  for (int i = 0; i < 1000; i += 5) capacity[names[i]] = 1;
  PlanResult r = Plan(20000, names, {}, capacity, "default/web", prefs);
  int64_t sum = 0;
  for (int i = 0; i < 1000; ++i) {
    int64_t count = r.plan[names[i]];
    sum += count;
    if (i % 5 == 0) {
      EXPECT_LE(count, 1) << names[i];
    }
    if (i % 4 == 0) {
      EXPECT_LE(count, 3) << names[i];
    }
  }
  EXPECT_EQ(sum, 20000);
  EXPECT_EQ(r.overflow.size(), 0u);  // rebalance false: everything was placed
}

}  // namespace
}  // namespace flotilla::planner
