#include "interpreter/interpreter.h"

#include <gtest/gtest.h>

#include "base/file.h"
#include "base/yaml.h"

namespace flotilla::interpreter {
namespace {

json::value Load(const std::string& file) {
  StatusOr<std::string> text = ReadFile(std::string(FLOTILLA_INTERPRETER_TESTDATA) + "/" + file);
  EXPECT_TRUE(text.ok()) << file;
  StatusOr<json::value> v = ParseYaml(text.ok() ? *text : "{}");
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return v.ok() ? *v : json::value();
}

class InterpreterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = Read(Load("workload-customization.yaml").as_object());
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    c_ = *c;
    obj_ = Load("workload.yaml").as_object();
  }
  Customization c_;
  json::object obj_;
};

TEST_F(InterpreterTest, ReadsTargetAndScripts) {
  EXPECT_EQ(c_.name, "workloads.apps.example.com");
  EXPECT_EQ(c_.api_version, "apps.example.com/v1");
  EXPECT_EQ(c_.kind, "Workload");
  for (Operation op : kOperations) EXPECT_TRUE(c_.Has(op)) << OperationName(op);
  EXPECT_TRUE(Validate(Load("workload-customization.yaml").as_object()).empty());
}

TEST_F(InterpreterTest, GetReplicasGivesTheCountAndWhatAReplicaNeeds) {
  auto r = GetReplicas(c_, obj_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->replicas, 6);
  ASSERT_TRUE(r->requirements.has_value());
  EXPECT_EQ(json::value(*r->requirements),
            json::parse(R"({"nodeClaim":{"nodeSelector":{"disktype":"ssd"}},
                            "resourceRequest":{"cpu":"250m","memory":"64Mi"}})"));
}

TEST_F(InterpreterTest, ReviseReplicaAndRetain) {
  auto revised = ReviseReplica(c_, obj_, 2);
  ASSERT_TRUE(revised.ok()) << revised.status().ToString();
  EXPECT_EQ(*Find(*revised, "spec.replicas"), 2);
  EXPECT_EQ(*Find(*revised, "spec.template"), *Find(obj_, "spec.template"));

  json::object observed = obj_;
  observed["spec"].as_object()["paused"] = true;
  auto retained = Retain(c_, obj_, observed);
  ASSERT_TRUE(retained.ok()) << retained.status().ToString();
  EXPECT_EQ(*Find(*retained, "spec.paused"), true);
  EXPECT_EQ(*Find(*retained, "spec.replicas"), 6);
}

TEST_F(InterpreterTest, StatusIsReflectedAggregatedAndJudged) {
  auto reflected = ReflectStatus(c_, obj_);
  ASSERT_TRUE(reflected.ok()) << reflected.status().ToString();
  EXPECT_EQ(*reflected, json::parse(R"({"observedGeneration":3,"readyReplicas":6,"replicas":6,
      "resourceTemplateGeneration":3,"updatedReplicas":6})"));

  auto aggregated = AggregateStatus(c_, obj_, Load("status-items.yaml").as_array());
  ASSERT_TRUE(aggregated.ok()) << aggregated.status().ToString();
  EXPECT_EQ((*aggregated).at("status"),
            json::parse(R"({"observedGeneration":3,"readyReplicas":5,"replicas":6,
                            "updatedReplicas":6})"));

  auto healthy = InterpretHealth(c_, obj_);
  ASSERT_TRUE(healthy.ok()) << healthy.status().ToString();
  EXPECT_TRUE(*healthy);
  json::object lagging = obj_;
  lagging["status"].as_object()["readyReplicas"] = 5;
  EXPECT_FALSE(*InterpretHealth(c_, lagging));
}

TEST_F(InterpreterTest, DependenciesAreWhatThePodTemplateUses) {
  auto deps = GetDependencies(c_, obj_);
  ASSERT_TRUE(deps.ok()) << deps.status().ToString();
  EXPECT_EQ(json::value(*deps), json::parse(R"([
      {"apiVersion":"v1","kind":"ConfigMap","name":"web-config","namespace":"shop"},
      {"apiVersion":"v1","kind":"Secret","name":"web-secret","namespace":"shop"},
      {"apiVersion":"v1","kind":"ServiceAccount","name":"web","namespace":"shop"},
      {"apiVersion":"v1","kind":"PersistentVolumeClaim","name":"web-data","namespace":"shop"}])"));
}

TEST_F(InterpreterTest, ExecuteNamesItsResultsAsKarmadactlPrintsThem) {
  Inputs in{.desired = obj_, .desired_replica = 3};
  auto out = Execute(c_, Operation::kInterpretReplica, in);
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].first, "replica");
  EXPECT_EQ((*out)[1].first, "requires");
  out = Execute(c_, Operation::kRetain, in);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("--observed-file is required"), std::string::npos);
  EXPECT_EQ(ParseOperation("interpretReplica"), Operation::kInterpretReplica);
  EXPECT_EQ(ParseOperation("InterpretDependency"), Operation::kInterpretDependency);
  EXPECT_EQ(ParseOperation("retain"), Operation::kRetain);
  EXPECT_EQ(ParseOperation("GetReplicas"), std::nullopt);
}

TEST(InterpreterValidateTest, BadCustomizationsNameTheirFields) {
  json::object obj = json::parse(R"({"metadata":{"name":"x"},"spec":{"target":{"kind":"W"},
      "customizations":{
        "retention":{"luaScript":"function Retain(a, b) return a"},
        "healthInterpretation":{"luaScript":"function Healthy(o) return true end"},
        "replicaResource":{"luaScript":"while true do end"}}}})")
                         .as_object();
  std::vector<StatusCause> causes = Validate(obj, {.instructions = 100'000});
  std::vector<std::string> fields;
  for (const StatusCause& c : causes) fields.push_back(c.field);
  EXPECT_EQ(fields, (std::vector<std::string>{
                        "spec.target.apiVersion", "spec.customizations.replicaResource.luaScript",
                        "spec.customizations.retention.luaScript",
                        "spec.customizations.healthInterpretation.luaScript"}));
  EXPECT_NE(causes[3].message.find("defines no function InterpretHealth"), std::string::npos);
  // A script error leaves the operation failed, not the program.
  auto c = Read(obj);
  ASSERT_FALSE(c.ok());  // no apiVersion
}

}  // namespace
}  // namespace flotilla::interpreter
