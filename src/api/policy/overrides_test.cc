#include "api/policy/overrides.h"

#include <gtest/gtest.h>

namespace flotilla::api::policy {
namespace {

json::object Parsed(std::string_view text) {
  auto o = ParseJsonObject(text);
  EXPECT_TRUE(o.ok()) << text;
  return *std::move(o);
}

json::object Deployment() {
  return Parsed(R"({"apiVersion":"apps/v1","kind":"Deployment",
      "metadata":{"name":"web","namespace":"shop","labels":{"app":"web"}},
      "spec":{"replicas":3,"template":{"metadata":{"labels":{"app":"web"}},"spec":{
        "initContainers":[{"name":"init","image":"busybox:1.36"}],
        "containers":[{"name":"web","image":"docker.io/library/nginx:1.25","command":["nginx"],"args":["-g","daemon off;"]},
                      {"name":"side","image":"registry.local:5000/tools/proxy@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}]}}}})");
}

std::string Image(const json::object& d, const char* list, size_t i) {
  return std::string(d.at("spec").at("template").at("spec").at(list).at(i).at("image").as_string());
}

// One image overrider on Deployment(): the three images after it.
struct ImageCase {
  std::string name, overrider, web, side, init;
};

class ImageOverriderTest : public ::testing::TestWithParam<ImageCase> {};

TEST_P(ImageOverriderTest, ChangesEveryContainerAndInitContainer) {
  json::object d = Deployment();
  ASSERT_TRUE(
      ApplyOverriders(Parsed(R"({"imageOverrider":[)" + GetParam().overrider + "]}"), d).ok());
  EXPECT_EQ(Image(d, "containers", 0), GetParam().web);
  EXPECT_EQ(Image(d, "containers", 1), GetParam().side);
  EXPECT_EQ(Image(d, "initContainers", 0), GetParam().init);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ImageOverriderTest,
    ::testing::Values(
        ImageCase{"ReplaceRegistry",
                  R"({"component":"Registry","operator":"replace","value":"mirror.cn"})",
                  "mirror.cn/library/nginx:1.25",
                  "mirror.cn/tools/"
                  "proxy@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                  "mirror.cn/busybox:1.36"},
        ImageCase{"AddToRegistry", R"({"component":"Registry","operator":"add","value":"-eu"})",
                  "docker.io-eu/library/nginx:1.25",
                  "registry.local:5000-eu/tools/"
                  "proxy@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                  "-eu/busybox:1.36"},
        ImageCase{
            "RemoveRegistry", R"({"component":"Registry","operator":"remove"})",
            "library/nginx:1.25",
            "tools/proxy@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "busybox:1.36"},
        ImageCase{"ReplaceRepository",
                  R"({"component":"Repository","operator":"replace","value":"x/y"})",
                  "docker.io/x/y:1.25",
                  "registry.local:5000/x/"
                  "y@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                  "x/y:1.36"},
        ImageCase{
            "ReplaceTagOverADigest", R"({"component":"Tag","operator":"replace","value":"2.0"})",
            "docker.io/library/nginx:2.0", "registry.local:5000/tools/proxy:2.0", "busybox:2.0"},
        ImageCase{"AddToTag", R"({"component":"Tag","operator":"add","value":"-alpine"})",
                  "docker.io/library/nginx:1.25-alpine",
                  "registry.local:5000/tools/"
                  "proxy@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                  "busybox:1.36-alpine"},
        ImageCase{"RemoveTag", R"({"component":"Tag","operator":"remove"})",
                  "docker.io/library/nginx", "registry.local:5000/tools/proxy", "busybox"}),
    [](const auto& info) { return info.param.name; });

TEST(OverridersTest, ImagePredicateChangesOnlyThatImage) {
  json::object d = Deployment();
  ASSERT_TRUE(
      ApplyOverriders(
          Parsed(
              R"({"imageOverrider":[{"predicate":{"path":"/spec/template/spec/containers/0/image"},
      "component":"Registry","operator":"replace","value":"mirror.cn"}]})"),
          d)
          .ok());
  EXPECT_EQ(Image(d, "containers", 0), "mirror.cn/library/nginx:1.25");
  EXPECT_EQ(Image(d, "initContainers", 0), "busybox:1.36");
  Status bad = ApplyOverriders(Parsed(R"({"imageOverrider":[{"predicate":{"path":"/spec/nothing"},
      "component":"Tag","operator":"remove"}]})"),
                               d);
  EXPECT_FALSE(bad.ok());
}

TEST(OverridersTest, CommandArgsLabelsAnnotations) {
  json::object d = Deployment();
  ASSERT_TRUE(ApplyOverriders(Parsed(R"({
      "commandOverrider":[{"containerName":"web","operator":"add","value":["-c","/etc/nginx.conf"]}],
      "argsOverrider":[{"containerName":"web","operator":"remove","value":["daemon off;"]},
                       {"containerName":"side","operator":"add","value":["--verbose"]}],
      "labelsOverrider":[{"operator":"add","value":{"zone":"eu"}},
                         {"operator":"replace","value":{"app":"web-eu","absent":"x"}}],
      "annotationsOverrider":[{"operator":"add","value":{"note":"overridden"}},
                              {"operator":"remove","value":{"note":""}}]})"),
                              d)
                  .ok());
  const json::value& c = d.at("spec").at("template").at("spec").at("containers");
  EXPECT_EQ(json::serialize(c.at(0).at("command")), R"(["nginx","-c","/etc/nginx.conf"])");
  EXPECT_EQ(json::serialize(c.at(0).at("args")), R"(["-g"])");
  EXPECT_EQ(json::serialize(c.at(1).at("args")), R"(["--verbose"])");
  EXPECT_EQ(json::serialize(d.at("metadata").at("labels")), R"({"app":"web-eu","zone":"eu"})");
  EXPECT_TRUE(d.at("metadata").at("annotations").as_object().empty());
}

TEST(OverridersTest, PlaintextIsAJsonPatchAndFailsWhereItCannotApply) {
  json::object d = Deployment();
  ASSERT_TRUE(ApplyOverriders(
                  Parsed(R"({"plaintext":[{"path":"/spec/replicas","operator":"replace","value":5},
      {"path":"/metadata/labels/tier","operator":"add","value":"front"}]})"),
                  d)
                  .ok());
  EXPECT_EQ(d.at("spec").at("replicas"), 5);
  EXPECT_EQ(d.at("metadata").at("labels").at("tier"), "front");
  Status s =
      ApplyOverriders(Parsed(R"({"plaintext":[{"path":"/spec/absent","operator":"remove"}]})"), d);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("plaintext"), std::string::npos);
}

TEST(OverridersTest, FieldOverriderPatchesADocumentInAString) {
  json::object cm = Parsed(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},
      "data":{"config.json":"{\"db\":{\"host\":\"local\"},\"debug\":true}","config.yaml":"db:\n  host: local\n"}})");
  ASSERT_TRUE(ApplyOverriders(Parsed(R"({"fieldOverrider":[
      {"fieldPath":"/data/config.json","json":[{"subPath":"/db/host","operator":"replace","value":"eu.db"},
                                               {"subPath":"/debug","operator":"remove"}]},
      {"fieldPath":"/data/config.yaml","yaml":[{"subPath":"/db/port","operator":"add","value":5432}]}]})"),
                              cm)
                  .ok());
  EXPECT_EQ(cm.at("data").at("config.json"), R"({"db":{"host":"eu.db"}})");
  EXPECT_EQ(cm.at("data").at("config.yaml"), R"({"db":{"host":"local","port":5432}})");
  EXPECT_FALSE(ApplyOverriders(Parsed(R"({"fieldOverrider":[{"fieldPath":"/data/none","json":[
      {"subPath":"/a","operator":"remove"}]}]})"),
                               cm)
                   .ok());
}

json::object ClusterNamed(std::string_view name, std::string_view location) {
  return Parsed(R"({"metadata":{"name":")" + std::string(name) + R"(","labels":{"location":")" +
                std::string(location) + R"("}}})");
}

OverridePolicy OverridePolicyOf(std::string_view text) {
  auto p = OverridePolicy::FromObject(Parsed(text));
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return *std::move(p);
}

TEST(OverridersForTest, ClusterPoliciesFirstThenLooserMatchesFirstThenNames) {
  OverridePolicy by_name = OverridePolicyOf(
      R"({"kind":"OverridePolicy","metadata":{"name":"a-by-name","namespace":"shop"},
      "spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web"}],
              "overrideRules":[{"overriders":{"plaintext":[{"path":"/spec/replicas","operator":"replace","value":1}]}}]}})");
  OverridePolicy all =
      OverridePolicyOf(R"({"kind":"OverridePolicy","metadata":{"name":"z-all","namespace":"shop"},
      "spec":{"overrideRules":[{"targetCluster":{"labelSelector":{"matchLabels":{"location":"cloud"}}},
                                "overriders":{"plaintext":[{"path":"/spec/replicas","operator":"replace","value":2}]}}]}})");
  OverridePolicy cluster_wide =
      OverridePolicyOf(R"({"kind":"ClusterOverridePolicy","metadata":{"name":"c"},
      "spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment"}],
              "targetCluster":{"clusterNames":["east"]},
              "overriders":{"plaintext":[{"path":"/spec/replicas","operator":"replace","value":3}]}}})");
  OverridePolicy elsewhere =
      OverridePolicyOf(R"({"kind":"OverridePolicy","metadata":{"name":"other","namespace":"db"},
      "spec":{"overrideRules":[{"overriders":{"plaintext":[{"path":"/spec/replicas","operator":"replace","value":9}]}}]}})");
  std::vector<const OverridePolicy*> all_policies = {&by_name, &all, &cluster_wide, &elsewhere};
  json::object labels = Parsed(R"({"app":"web"})");
  ObjectRef ref{.api_version = "apps/v1",
                .kind = "Deployment",
                .ns = "shop",
                .name = "web",
                .labels = &labels};
  auto names = [&](std::string_view cluster, std::string_view location) {
    json::object c = ClusterNamed(cluster, location);
    std::vector<std::string> out;
    for (const AppliedOverriders& a : OverridersFor(all_policies, ref, ClusterFacts::Of(c))) {
      out.push_back(a.policy->name);
    }
    return out;
  };
  EXPECT_EQ(names("east", "cloud"), (std::vector<std::string>{"c", "z-all", "a-by-name"}));
  EXPECT_EQ(names("onprem", "on-prem"), (std::vector<std::string>{"a-by-name"}));
  // Applied in that order, the last one's value wins, and each is recorded.
  json::object d = Deployment();
  json::object east = ClusterNamed("east", "cloud");
  ASSERT_TRUE(ApplyAll(OverridersFor(all_policies, ref, ClusterFacts::Of(east)), d).ok());
  EXPECT_EQ(d.at("spec").at("replicas"), 1);
  auto applied =
      ParseJson(d.at("metadata").at("annotations").at(kAppliedOverridesAnnotation).as_string());
  ASSERT_TRUE(applied.ok());
  EXPECT_EQ(applied->as_array().size(), 2u);
  EXPECT_EQ(applied->as_array()[0].at("policyName"), "z-all");
  EXPECT_TRUE(
      d.at("metadata").at("annotations").as_object().contains(kAppliedClusterOverridesAnnotation));
}

TEST(OverridersForTest, AFailingOverriderNamesItsPolicy) {
  OverridePolicy p =
      OverridePolicyOf(R"({"kind":"OverridePolicy","metadata":{"name":"bad","namespace":"shop"},
      "spec":{"overrideRules":[{"overriders":{"plaintext":[{"path":"/spec/none","operator":"remove"}]}}]}})");
  std::vector<const OverridePolicy*> ps = {&p};
  ObjectRef ref{.api_version = "apps/v1", .kind = "Deployment", .ns = "shop", .name = "web"};
  json::object c = ClusterNamed("east", "cloud");
  json::object d = Deployment();
  const OverridePolicy* failed = nullptr;
  Status s = ApplyAll(OverridersFor(ps, ref, ClusterFacts::Of(c)), d, &failed);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("OverridePolicy shop/bad"), std::string::npos) << s.message();
  EXPECT_EQ(failed, &p);
}

}  // namespace
}  // namespace flotilla::api::policy
