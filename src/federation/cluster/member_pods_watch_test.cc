// MemberPods against member API servers: which credentials it watches a
// member's pods with, and what it asks the federation for them.
#include <gtest/gtest.h>

#include "base/base64.h"
#include "client/client_test_util.h"
#include "federation/cluster/member_access.h"
#include "federation/cluster/member_pods.h"
#include "federation/common/names.h"
#include "runtime/fake_client.h"
#include "runtime/test_util.h"

namespace flotilla::federation::cluster {
namespace {

using client::testing::TestCluster;
using runtime::testing::Eventually;

// A Cluster Ready, its credentials in Secret `secret` of namespace `ns`
// ("": the system namespace).
json::object ReadyCluster(const std::string& name, const std::string& ns,
                          const std::string& secret) {
  json::object ref{{"name", secret}};
  if (!ns.empty()) ref["namespace"] = ns;
  json::object ready{{"type", "Ready"}, {"status", "True"}};
  return json::object{
      {"apiVersion", "core.federation.k8s.io/v1alpha1"},
      {"kind", "Cluster"},
      {"metadata", json::object{{"name", name}}},
      {"spec", json::object{{"secretRef", ref}}},
      {"status", json::object{{"conditions", json::array{ready}}, {"federatedObjects", 0}}}};
}

json::object KubeconfigSecret(const std::string& ns, const std::string& name,
                              const TestCluster& member) {
  auto kubeconfig = SelfContainedKubeconfig("m", member.AdminConfig());
  EXPECT_TRUE(kubeconfig.ok()) << kubeconfig.status().ToString();
  return json::object{{"apiVersion", "v1"},
                      {"kind", "Secret"},
                      {"metadata", json::object{{"name", name}, {"namespace", ns}}},
                      {"data", json::object{{kKubeconfigKey, Base64Encode(*kubeconfig)}}}};
}

void AddPod(TestCluster& member, const std::string& name) {
  json::object container{{"name", "c"}, {"image", "nginx"}};
  json::object pod{{"apiVersion", "v1"},
                   {"kind", "Pod"},
                   {"metadata", json::object{{"name", name}, {"namespace", "default"}}},
                   {"spec", json::object{{"containers", json::array{container}}}}};
  auto created = member.InProcess()->Create(kPods, "default", pod);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
}

int SecretGets(const runtime::FakeClient& fed) {
  int gets = 0;
  for (const auto& a : fed.Actions()) {
    gets += a.verb == runtime::FakeClient::Verb::kGet && a.resource == "secrets" ? 1 : 0;
  }
  return gets;
}

bool Watches(const MemberPods& pods, const std::string& name) {
  for (const std::string& w : pods.Watched()) {
    if (w == name) return true;
  }
  return false;
}

// The keys of the view's pods, "NAMESPACE/NAME CLUSTER" each.
std::vector<std::string> ViewKeys(MemberPodsStore& view) {
  std::vector<std::string> keys;
  auto listed = view.List(kMemberPodsPrefix, {});
  EXPECT_TRUE(listed.ok());
  if (!listed.ok()) return keys;
  for (const storage::KeyValue& kv : listed->items) {
    keys.push_back(kv.key.substr(std::string_view(kMemberPodsPrefix).size()));
  }
  return keys;
}

// The Secrets of the system namespace come from a watch: a Cluster's
// status written again and again (its probes, its counts) costs no request
// for its Secret, and a Secret that changes moves the watch of the pods to
// the new credentials with no Cluster update at all. A Secret kept in
// another namespace is read when needed.
TEST(MemberPodsTest, ReadsSecretsFromAWatchAndFollowsTheirChanges) {
  FakeClock clock;
  TestCluster m1, m2;
  AddPod(m1, "one");
  AddPod(m2, "two");
  runtime::FakeClient fed(clock);
  ASSERT_TRUE(
      fed.Create(kSecrets, kSystemNamespace, KubeconfigSecret(kSystemNamespace, "a-kc", m1)).ok());
  ASSERT_TRUE(fed.Create(kSecrets, "elsewhere", KubeconfigSecret("elsewhere", "b-kc", m2)).ok());
  ASSERT_TRUE(fed.Create(kClusters, "", ReadyCluster("a", "", "a-kc")).ok());
  auto view = std::make_shared<MemberPodsStore>(clock);
  MemberPods pods(view, clock);
  ASSERT_TRUE(pods.Start(fed).ok());
  ASSERT_TRUE(
      Eventually([&] { return ViewKeys(*view) == std::vector<std::string>{"default/one a"}; }));
  for (int i = 1; i <= 5; ++i) {
    auto cluster = fed.Get(kClusters, "", "a");
    ASSERT_TRUE(cluster.ok());
    (*cluster)["status"].as_object()["federatedObjects"] = i;
    ASSERT_TRUE(fed.UpdateStatus(kClusters, "", *cluster).ok());
  }
  // One worker takes the Clusters in order: b comes after a's updates.
  ASSERT_TRUE(fed.Create(kClusters, "", ReadyCluster("b", "elsewhere", "b-kc")).ok());
  ASSERT_TRUE(Eventually([&] { return Watches(pods, "b"); }));
  EXPECT_EQ(SecretGets(fed), 1);  // b's, in its own namespace
  EXPECT_TRUE(Eventually([&] {
    return ViewKeys(*view) == std::vector<std::string>{"default/one a", "default/two b"};
  }));

  // a's credentials now name m2: its pods in the view are m2's.
  ASSERT_TRUE(
      fed.Update(kSecrets, kSystemNamespace, KubeconfigSecret(kSystemNamespace, "a-kc", m2)).ok());
  EXPECT_TRUE(Eventually([&] {
    return ViewKeys(*view) == std::vector<std::string>{"default/two a", "default/two b"};
  }));
  EXPECT_EQ(SecretGets(fed), 1);
  pods.Stop();
}

}  // namespace
}  // namespace flotilla::federation::cluster
