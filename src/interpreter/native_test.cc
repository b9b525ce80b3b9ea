#include "interpreter/native.h"

#include <gtest/gtest.h>

namespace flotilla::interpreter {
namespace {

json::object ParseObject(std::string_view text) { return json::parse(text).as_object(); }

// "Kind/name" of each reference, in order; every one in `ns`, apiVersion v1.
std::vector<std::string> Names(const json::array& refs, std::string_view ns) {
  std::vector<std::string> out;
  for (const json::value& r : refs) {
    const json::object& o = r.as_object();
    EXPECT_EQ(StringViewAt(o, "apiVersion"), "v1");
    EXPECT_EQ(StringViewAt(o, "namespace"), ns);
    out.push_back(std::string(StringViewAt(o, "kind")) + "/" +
                  std::string(StringViewAt(o, "name")));
  }
  return out;
}

constexpr char kPodSpec[] = R"({
  "serviceAccountName": "runner",
  "imagePullSecrets": [{"name": "pull"}],
  "volumes": [
    {"name": "a", "configMap": {"name": "settings"}},
    {"name": "b", "secret": {"secretName": "tls"}},
    {"name": "c", "persistentVolumeClaim": {"claimName": "data"}},
    {"name": "d", "projected": {"sources": [{"configMap": {"name": "extra"}},
                                            {"secret": {"name": "token"}}]}}],
  "initContainers": [{"name": "i", "envFrom": [{"configMapRef": {"name": "init-env"}}]}],
  "containers": [{"name": "app", "env": [
      {"name": "X", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "x"}}},
      {"name": "Y", "valueFrom": {"secretKeyRef": {"name": "password", "key": "y"}}}],
    "envFrom": [{"secretRef": {"name": "env-secret"}}]}]})";

const std::vector<std::string> kEverything = {"ConfigMap/extra",
                                              "ConfigMap/init-env",
                                              "ConfigMap/settings",
                                              "Secret/env-secret",
                                              "Secret/password",
                                              "Secret/pull",
                                              "Secret/tls",
                                              "Secret/token",
                                              "ServiceAccount/runner",
                                              "PersistentVolumeClaim/data"};

TEST(NativeDependenciesTest, APodTemplateNamesWhatItMountsReadsAndRunsAs) {
  json::object tmpl{{"spec", json::parse(kPodSpec)}};
  EXPECT_EQ(Names(PodDependencies(tmpl, "shop"), "shop"), kEverything);
  // The default service account is every namespace's own.
  json::object plain = ParseObject(R"({"spec":{"serviceAccountName":"default","containers":[]}})");
  EXPECT_TRUE(PodDependencies(plain, "shop").empty());
}

TEST(NativeDependenciesTest, EachWorkloadKindReadsItsPodTemplate) {
  std::string spec = kPodSpec;
  std::string meta = R"("metadata":{"name":"w","namespace":"shop"})";
  std::string templated = "{" + meta + R"(,"spec":{"template":{"spec":)" + spec + "}}}";
  for (const auto& [api_version, kind] :
       std::vector<std::pair<std::string, std::string>>{{"apps/v1", "Deployment"},
                                                        {"apps/v1", "ReplicaSet"},
                                                        {"apps/v1", "DaemonSet"},
                                                        {"batch/v1", "Job"}}) {
    auto deps = NativeDependencies(api_version, kind, ParseObject(templated));
    ASSERT_TRUE(deps.has_value()) << kind;
    EXPECT_EQ(Names(*deps, "shop"), kEverything) << kind;
  }
  auto cron = NativeDependencies(
      "batch/v1", "CronJob",
      ParseObject("{" + meta + R"(,"spec":{"jobTemplate":{"spec":{"template":{"spec":)" + spec +
                  "}}}}}"));
  ASSERT_TRUE(cron.has_value());
  EXPECT_EQ(Names(*cron, "shop"), kEverything);
  auto pod = NativeDependencies("v1", "Pod", ParseObject("{" + meta + R"(,"spec":)" + spec + "}"));
  ASSERT_TRUE(pod.has_value());
  EXPECT_EQ(Names(*pod, "shop"), kEverything);
}

TEST(NativeDependenciesTest, AStatefulSetsClaimTemplatesAreNotDependencies) {
  json::object sts = ParseObject(R"({"metadata":{"name":"db","namespace":"shop"},"spec":{
      "volumeClaimTemplates":[{"metadata":{"name":"data"}}],
      "template":{"spec":{"volumes":[
          {"name":"data","persistentVolumeClaim":{"claimName":"data"}},
          {"name":"shared","persistentVolumeClaim":{"claimName":"shared"}}]}}}})");
  auto deps = NativeDependencies("apps/v1", "StatefulSet", sts);
  ASSERT_TRUE(deps.has_value());
  EXPECT_EQ(Names(*deps, "shop"), std::vector<std::string>{"PersistentVolumeClaim/shared"});
}

TEST(NativeDependenciesTest, AnIngressNeedsItsTlsSecretsAndOtherKindsNothingKnown) {
  json::object ingress = ParseObject(R"({"metadata":{"name":"web","namespace":"shop"},"spec":{
      "tls":[{"hosts":["a.example.com"],"secretName":"a-cert"},{"hosts":["b"]}]}})");
  auto deps = NativeDependencies("networking.k8s.io/v1", "Ingress", ingress);
  ASSERT_TRUE(deps.has_value());
  EXPECT_EQ(Names(*deps, "shop"), std::vector<std::string>{"Secret/a-cert"});
  EXPECT_FALSE(NativeDependencies("v1", "ConfigMap", ingress).has_value());
  EXPECT_FALSE(NativeDependencies("apps/v1beta1", "Deployment", ingress).has_value());
  EXPECT_FALSE(NativeDependencies("stable.example.com/v1", "CronTab", ingress).has_value());
}

}  // namespace
}  // namespace flotilla::interpreter
