// A MemberCluster over HTTPS, as kubectl and the federation reach it: the
// kubeconfig it writes works, it serves the member kinds and not the
// federation's, and it stops cleanly.
#include "member/cluster.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "client/client_test_util.h"
#include "client/rest_client.h"

namespace flotilla::member {
namespace {

using client::testing::TempDir;

std::unique_ptr<client::Client> ClientFor(const std::string& kubeconfig) {
  client::KubeconfigLoadOptions load;
  load.explicit_path = kubeconfig;
  auto config = client::LoadRestConfig(load);
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  client::RestOptions opts;
  opts.max_retries = 0;
  return client::NewRestClient(*config, opts).value();
}

MemberOptions Options(const TempDir& dir, const std::string& name = "east") {
  MemberOptions opts;
  opts.name = name;
  opts.data_dir = dir.path() + "/" + name;
  opts.port = 0;
  opts.simulation.nodes = 0;
  return opts;
}

TEST(MemberClusterTest, ServesTheMemberKindsButNotTheFederationsThroughItsKubeconfig) {
  TempDir dir;
  auto member = MemberCluster::Start(Options(dir));
  ASSERT_TRUE(member.ok()) << member.status().ToString();
  EXPECT_EQ((*member)->kubeconfig_path(), dir.path() + "/east/kubeconfig");
  EXPECT_EQ((*member)->options().cluster_name, "east");
  auto client = ClientFor((*member)->kubeconfig_path());
  EXPECT_TRUE(client->List(kPods, "default", {}).ok());
  EXPECT_TRUE(client->List(kNodes, "", {}).ok());
  EXPECT_TRUE(client->List(kEndpointSlices, "", {}).ok());
  const client::ResourceRef clusters{"federation", "v1beta1", "clusters", false};
  EXPECT_TRUE(client->List(clusters, "", {}).status().Is(Reason::kNotFound));
  (*member)->Stop();
  (*member)->Stop();
  EXPECT_FALSE(client->List(kPods, "default", {}).ok());
}

// --kube-version: an older Kubernetes's API as a client sees it (issue 37):
// the versions it serves, fields it does not know dropped and
// templates written back with a null creationTimestamp.
TEST(MemberClusterTest, AnOlderKubernetesServesAndWritesAsItDid) {
  TempDir dir;
  MemberOptions opts = Options(dir);
  opts.kube_version = FindKubeVersion("1.19");
  ASSERT_NE(opts.kube_version, nullptr);
  auto member = MemberCluster::Start(opts);
  ASSERT_TRUE(member.ok()) << member.status().ToString();
  auto client = ClientFor((*member)->kubeconfig_path());
  const client::ResourceRef v2{"autoscaling", "v2", "horizontalpodautoscalers", true};
  const client::ResourceRef v1{"autoscaling", "v1", "horizontalpodautoscalers", true};
  EXPECT_TRUE(client->List(v2, "", {}).status().Is(Reason::kNotFound));
  EXPECT_TRUE(client->List(v1, "", {}).ok());

  auto deployment = client->Create(kDeployments, "default", *ParseJsonObject(R"({
      "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
      "spec": {"selector": {"matchLabels": {"app": "web"}},
               "template": {"metadata": {"labels": {"app": "web"}},
                            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})"));
  ASSERT_TRUE(deployment.ok()) << deployment.status().ToString();
  const json::value* created = Find(*deployment, "spec.template.metadata");
  ASSERT_NE(created, nullptr);
  ASSERT_TRUE(created->as_object().contains("creationTimestamp"));
  EXPECT_TRUE(created->as_object().at("creationTimestamp").is_null());

  auto service = client->Create(kServices, "default", *ParseJsonObject(R"({
      "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
      "spec": {"ports": [{"port": 80}], "internalTrafficPolicy": "Cluster",
               "ipFamilyPolicy": "SingleStack"}})"));
  ASSERT_TRUE(service.ok()) << service.status().ToString();
  EXPECT_EQ(Find(*service, "spec.internalTrafficPolicy"), nullptr);
  EXPECT_EQ(Find(*service, "spec.ipFamilyPolicy"), nullptr);
  EXPECT_NE(Find(*service, "spec.clusterIP"), nullptr);

  EXPECT_EQ(FindKubeVersion("0.1"), nullptr);
}

TEST(MemberClusterTest, ManyMembersEachHaveTheirOwnApi) {
  TempDir dir;
  std::vector<std::unique_ptr<MemberCluster>> members;
  for (const std::string name : {"a", "b", "c"}) {
    auto m = MemberCluster::Start(Options(dir, name));
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    members.push_back(std::move(*m));
  }
  json::object cm{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "only-a"}}}};
  const client::ResourceRef configmaps{"", "v1", "configmaps", true};
  ASSERT_TRUE(ClientFor(members[0]->kubeconfig_path())->Create(configmaps, "default", cm).ok());
  EXPECT_TRUE(ClientFor(members[1]->kubeconfig_path())
                  ->Get(configmaps, "default", "only-a")
                  .status()
                  .Is(Reason::kNotFound));
  EXPECT_NE(members[0]->port(), members[1]->port());
}

}  // namespace
}  // namespace flotilla::member
