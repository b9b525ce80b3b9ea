// Runs the real `flotilla plan` (FLOTILLA_BINARY, set by flotilla_test) on a
// few lines, a bad one among them, and reads its output line by line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/json.h"

namespace flotilla {
namespace {

namespace fs = std::filesystem;

class PlanCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* binary = std::getenv("FLOTILLA_BINARY");
    if (binary == nullptr) GTEST_SKIP() << "FLOTILLA_BINARY is not set (run through ctest)";
    binary_ = binary;
    dir_ = fs::path(::testing::TempDir()) /
           ("plan_command_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }

  // Runs `flotilla plan <flags>` with `input` on stdin; returns its stdout
  // lines and sets `exit_code`.
  std::vector<std::string> Run(const std::string& input, const std::string& flags, int& exit_code) {
    fs::path in = dir_ / "in.jsonl", out = dir_ / "out.jsonl";
    std::ofstream(in) << input;
    std::string command =
        "'" + binary_ + "' plan " + flags + " < '" + in.string() + "' > '" + out.string() + "'";
    int status = std::system(command.c_str());
    exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream result(out);
    std::vector<std::string> lines;
    for (std::string line; std::getline(result, line);) lines.push_back(line);
    return lines;
  }

  std::string binary_;
  fs::path dir_;
};

json::object Object(const std::string& line) {
  StatusOr<json::object> o = ParseJsonObject(line);
  EXPECT_TRUE(o.ok()) << line;
  return o.ok() ? *o : json::object();
}

TEST_F(PlanCommandTest, OneResultPerLineInOrderEvenAfterABadLine) {
  std::string input =
      R"({"replicas": 50, "clusters": ["A","B","C"], "capacity": {"C": 6}, "preferences": {"rebalance": true, "clusters": {"*": {"weight": 1}}}})"
      "\n"
      "this is not json\n"
      R"({"replicas": 5, "clusters": ["A"], "preferences": {"clusters": {"A": {"minReplicas": 3, "maxReplicas": 1}}}})"
      "\n"
      R"({"replicas": 50, "clusters": ["A","B","C"], "capacity": {"A": 40}, "preferences": {"clusters": {"A": {"weight": 1000000}, "B": {"weight": 1}, "C": {"weight": 1}}}})"
      "\n";
  int exit_code = -1;
  std::vector<std::string> lines = Run(input, "", exit_code);
  EXPECT_EQ(exit_code, 0);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], R"({"plan":{"A":22,"B":22,"C":6},"overflow":{"C":11}})");
  EXPECT_NE(Object(lines[1]).at("error").as_string().find("invalid JSON"), std::string::npos);
  EXPECT_NE(Object(lines[2]).at("error").as_string().find("preferences.clusters[A].maxReplicas"),
            std::string::npos)
      << lines[2];
  EXPECT_EQ(lines[3], R"({"plan":{"A":40,"B":5,"C":5},"overflow":{}})");
}

TEST_F(PlanCommandTest, ExplainSaysWhy) {
  std::string input =
      R"({"replicas": 50, "clusters": ["A","B","C"], "current": {"A": 30}, "capacity": {"C": 6}})"
      "\n";
  int exit_code = -1;
  std::vector<std::string> lines = Run(input, "--explain", exit_code);
  EXPECT_EQ(exit_code, 0);
  ASSERT_EQ(lines.size(), 1u);
  json::object result = Object(lines[0]);
  EXPECT_EQ(json::serialize(result.at("plan")), R"({"A":30,"B":14,"C":6})");
  const json::object& c = result.at("explain").at("C").as_object();
  EXPECT_EQ(c.at("limit").as_string(), "capacity");
  EXPECT_NE(c.at("reason").as_string().find("capped by capacity 6"), std::string::npos)
      << json::serialize(c);
  EXPECT_EQ(result.at("explain").at("A").at("kept").as_int64(), 30);
}

// A case with a propagation policy: where the policy would place the
// replicas, and per cluster why it admits it or not.
TEST_F(PlanCommandTest, APolicyPlacesTheCase) {
  std::string input =
      R"({"replicas": 4, "clusters": ["on-prem","east"], "clusterObjects": {"on-prem": {"metadata": {"labels": {"location": "on-prem"}}}}, "policy": {"kind": "ClusterPropagationPolicy", "metadata": {"name": "private"}, "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}], "placement": {"clusterAffinity": {"labelSelector": {"matchLabels": {"location": "on-prem"}}}, "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}}}}})"
      "\n";
  int exit_code = -1;
  std::vector<std::string> lines = Run(input, "--explain", exit_code);
  EXPECT_EQ(exit_code, 0);
  ASSERT_EQ(lines.size(), 1u);
  json::object result = Object(lines[0]);
  EXPECT_EQ(json::serialize(result.at("plan")), R"({"on-prem":4})") << lines[0];
  EXPECT_EQ(result.at("policy").at("clusters").at("east").at("admitted").as_bool(), false);
  EXPECT_TRUE(result.contains("explain")) << lines[0];
}

TEST_F(PlanCommandTest, EmptyInputGivesEmptyOutput) {
  int exit_code = -1;
  EXPECT_TRUE(Run("", "", exit_code).empty());
  EXPECT_EQ(exit_code, 0);
}

}  // namespace
}  // namespace flotilla
