// The admin endpoint of a member over HTTPS with the member's kubeconfig
// credentials: API faults, demand, nodes and pod faults.
#include "member/admin.h"

#include <gtest/gtest.h>

#include "client/client_test_util.h"
#include "client/rest_client.h"
#include "member/cluster.h"

namespace flotilla::member {
namespace {

using client::testing::TempDir;

class AdminTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MemberOptions opts;
    opts.name = "east";
    opts.data_dir = dir_.path();
    opts.port = 0;
    opts.simulation.nodes = 0;
    opts.simulation.zones = {"z1", "z2"};
    auto m = MemberCluster::Start(opts);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    member_ = std::move(*m);
    client::KubeconfigLoadOptions load;
    load.explicit_path = member_->kubeconfig_path();
    config_ = client::LoadRestConfig(load).value();
    client::RestOptions no_retries;
    no_retries.max_retries = 0;
    transport_ = client::NewRestTransport(config_, no_retries).value();
    client_ = client::NewRestClient(config_, no_retries).value();
  }

  // An admin request; returns the code and puts the body in `out`.
  int Admin(const std::string& method, const std::string& path, const json::object& body = {},
            json::object* out = nullptr) {
    client::ApiRequest req{method,
                           "/flotilla/admin/v1/" + path,
                           {},
                           body.empty() ? "" : json::serialize(body),
                           "application/json"};
    auto resp = transport_->Do(req);
    EXPECT_TRUE(resp.ok()) << resp.status().ToString();
    if (!resp.ok()) return 0;
    auto parsed = ParseJsonObject(resp->body);
    if (out != nullptr && parsed.ok()) *out = std::move(*parsed);
    return resp->code;
  }

  int Raw(const std::string& path) {
    auto resp = transport_->Do(client::ApiRequest{"GET", path, {}, "", ""});
    return resp.ok() ? resp->code : 0;
  }

  TempDir dir_;
  std::unique_ptr<MemberCluster> member_;
  client::RestConfig config_;
  std::shared_ptr<client::Transport> transport_;
  std::unique_ptr<client::Client> client_;
};

TEST_F(AdminTest, UnavailableApiAnswers503UntilHealthyAgain) {
  ASSERT_EQ(Admin("POST", "api", {{"mode", "unavailable"}}), 200);
  Status down = client_->List(kPods, "default", {}).status();
  EXPECT_TRUE(down.Is(Reason::kServiceUnavailable)) << down.ToString();
  EXPECT_EQ(Raw("/readyz"), 503);
  EXPECT_EQ(Raw("/healthz"), 503);
  // The member itself keeps working on its in-process client.
  EXPECT_TRUE(member_->client().List(kPods, "default", {}).ok());
  json::object state;
  ASSERT_EQ(Admin("GET", "state", {}, &state), 200);
  EXPECT_EQ(*Find(state, "api.mode"), "unavailable");

  ASSERT_EQ(Admin("POST", "api", {{"mode", "healthy"}}), 200);
  EXPECT_TRUE(client_->List(kPods, "default", {}).ok());
  EXPECT_EQ(Raw("/readyz"), 200);
}

const client::ResourceRef kNamespaces{"", "v1", "namespaces", false};
const client::ResourceRef kConfigMaps{"", "v1", "configmaps", true};

json::object ReplicaSet(const std::string& ns, const std::string& name) {
  json::object labels{{"app", name}};
  json::object container{{"name", "app"}, {"image", "nginx"}};
  return json::object{{"apiVersion", "apps/v1"},
                      {"kind", "ReplicaSet"},
                      {"metadata", {{"name", name}, {"namespace", ns}}},
                      {"spec",
                       {{"replicas", 0},
                        {"selector", {{"matchLabels", labels}}},
                        {"template",
                         {{"metadata", {{"labels", labels}}},
                          {"spec", {{"containers", json::array{container}}}}}}}}};
}

TEST_F(AdminTest, RejectedCreatesAnswer403UntilTurnedOff) {
  ASSERT_TRUE(client_->Create(kNamespaces, "", {{"metadata", {{"name", "other"}}}}).ok());
  json::object state;
  ASSERT_EQ(
      Admin("POST", "reject",
            {{"verb", "create"}, {"resource", "replicasets"}, {"namespace", "default"}}, &state),
      200);
  EXPECT_EQ(*Find(state, "reject.verb"), "create");
  Status refused = client_->Create(kReplicaSets, "default", ReplicaSet("default", "web")).status();
  EXPECT_TRUE(refused.Is(Reason::kForbidden)) << refused.ToString();
  EXPECT_NE(refused.message().find("replicasets.apps is forbidden"), std::string::npos);
  EXPECT_NE(refused.message().find("injected fault"), std::string::npos);
  // Only the matching verb, resource and namespace are refused; the member
  // stays ready and its own controllers are not affected.
  EXPECT_EQ(Raw("/readyz"), 200);
  EXPECT_TRUE(client_->List(kReplicaSets, "default", {}).ok());
  EXPECT_TRUE(client_->Create(kReplicaSets, "other", ReplicaSet("other", "web")).ok());
  EXPECT_TRUE(client_->Create(kConfigMaps, "default", {{"metadata", {{"name", "c"}}}}).ok());
  EXPECT_TRUE(member_->client().Create(kReplicaSets, "default", ReplicaSet("default", "own")).ok());
  ASSERT_EQ(Admin("GET", "state", {}, &state), 200);
  EXPECT_EQ(*Find(state, "reject.resource"), "replicasets");

  ASSERT_EQ(Admin("DELETE", "reject", {}, &state), 200);
  EXPECT_EQ(state.if_contains("reject"), nullptr);
  EXPECT_TRUE(client_->Create(kReplicaSets, "default", ReplicaSet("default", "web")).ok());
}

TEST_F(AdminTest, RejectionMatchesEveryNamespaceAndSubresourcesOnlyWhenNamed) {
  ASSERT_EQ(Admin("POST", "reject", {{"verb", "*"}, {"resource", "replicasets.apps"}}), 200);
  Status refused = client_->List(kReplicaSets, "default", {}).status();
  EXPECT_TRUE(refused.Is(Reason::kForbidden)) << refused.ToString();
  ASSERT_EQ(Admin("POST", "reject", {{"verb", "update"}, {"resource", "replicasets/status"}}), 200);
  EXPECT_TRUE(client_->Create(kReplicaSets, "default", ReplicaSet("default", "web")).ok());
  EXPECT_EQ(Admin("POST", "reject", {{"verb", "destroy"}, {"resource", "replicasets"}}), 400);
  EXPECT_EQ(Admin("POST", "reject", {{"verb", "create"}}), 400);
}

TEST_F(AdminTest, SlowApiStillAnswers) {
  json::object state;
  ASSERT_EQ(Admin("POST", "api", {{"mode", "slow"}, {"latency", "20ms"}}, &state), 200);
  EXPECT_EQ(*Find(state, "api.latency"), "20ms");
  EXPECT_TRUE(client_->List(kPods, "default", {}).ok());
  EXPECT_EQ(Admin("POST", "api", {{"mode", "slow"}, {"latency", "soon"}}), 400);
  EXPECT_EQ(Admin("POST", "api", {{"mode", "broken"}}), 400);
}

TEST_F(AdminTest, DemandIsSetForTheWorkload) {
  ASSERT_EQ(
      Admin("POST", "demand",
            {{"kind", "Deployment"}, {"namespace", "shop"}, {"name", "web"}, {"cpu", "2500m"}}),
      200);
  EXPECT_EQ(member_->demand().Get("Deployment", "shop", "web"), 2500);
  EXPECT_EQ(Admin("POST", "demand", {{"kind", "Deployment"}, {"name", "web"}, {"cpu", "2"}}), 200);
  EXPECT_EQ(member_->demand().Get("Deployment", "default", "web"), 2000);
  EXPECT_EQ(Admin("POST", "demand", {{"kind", "Pod"}, {"name", "web"}, {"cpu", "1"}}), 400);
  EXPECT_EQ(Admin("POST", "demand", {{"kind", "Deployment"}, {"name", "web"}, {"cpu", "lots"}}),
            400);
}

TEST_F(AdminTest, NodesAreAddedResizedAndRemovedWithTheirPods) {
  json::object node;
  ASSERT_EQ(Admin("POST", "nodes", {{"cpu", "8"}}, &node), 201);
  EXPECT_EQ(*Find(node, "metadata.name"), "east-node-0");
  EXPECT_EQ(*Find(node, "status.allocatable.cpu"), "8");
  EXPECT_EQ(Find(node, "metadata.labels")->as_object().at("topology.kubernetes.io/zone"), "z1");
  ASSERT_EQ(Admin("POST", "nodes", {{"name", "big"}}, &node), 201);
  ASSERT_EQ(Admin("PATCH", "nodes/big", {{"memory", "64Gi"}, {"pods", 20}}, &node), 200);
  EXPECT_EQ(*Find(node, "status.capacity.memory"), "64Gi");
  EXPECT_EQ(*Find(node, "status.allocatable.pods"), "20");
  EXPECT_EQ(Admin("PATCH", "nodes/big", {{"cpu", "-1"}}), 400);
  EXPECT_EQ(Admin("PATCH", "nodes/none", {{"cpu", "1"}}), 404);

  json::object pod{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "p"}}},
      {"spec",
       {{"nodeName", "big"}, {"containers", json::array{{{"name", "c"}, {"image", "nginx"}}}}}}};
  ASSERT_TRUE(client_->Create(kPods, "default", pod).ok());
  json::object removed;
  ASSERT_EQ(Admin("DELETE", "nodes/big", {}, &removed), 200);
  EXPECT_EQ(*Find(removed, "podsDeleted"), 1);
  EXPECT_TRUE(client_->Get(kNodes, "", "big").status().Is(Reason::kNotFound));
  EXPECT_TRUE(client_->Get(kPods, "default", "p").status().Is(Reason::kNotFound));
}

TEST_F(AdminTest, PodsFailAndCrash) {
  for (const std::string name : {"a", "b"}) {
    json::object pod{{"apiVersion", "v1"},
                     {"kind", "Pod"},
                     {"metadata", {{"name", name}}},
                     {"spec", {{"containers", json::array{{{"name", "c"}, {"image", "nginx"}}}}}}};
    ASSERT_TRUE(client_->Create(kPods, "default", pod).ok());
  }
  json::object failed;
  ASSERT_EQ(Admin("POST", "pods/default/a/fail", {{"reason", "OOMKilled"}}, &failed), 200);
  EXPECT_EQ(*Find(failed, "status.phase"), "Failed");
  EXPECT_EQ(*Find(failed, "status.reason"), "OOMKilled");
  json::object crashed;
  ASSERT_EQ(Admin("POST", "pods/default/b/crash", {}, &crashed), 200);
  ASSERT_EQ(Admin("POST", "pods/default/b/crash", {}, &crashed), 200);
  const json::object& cs = Find(crashed, "status.containerStatuses")->as_array()[0].as_object();
  EXPECT_EQ(cs.at("restartCount"), 2);
  EXPECT_EQ(*Find(cs, "state.waiting.reason"), "CrashLoopBackOff");
  EXPECT_EQ(Admin("POST", "pods/default/none/crash"), 404);
}

TEST_F(AdminTest, OnlyTheAdminCredentialMayUseIt) {
  client::RestConfig viewer = config_;
  viewer.token = member_->server().pki().readonly_token;
  auto transport = client::NewRestTransport(viewer).value();
  auto resp = transport->Do(client::ApiRequest{"GET", "/flotilla/admin/v1/state", {}, "", ""});
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->code, 403);
  viewer.token = "wrong";
  transport = client::NewRestTransport(viewer).value();
  resp = transport->Do(client::ApiRequest{"GET", "/flotilla/admin/v1/state", {}, "", ""});
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->code, 401);
  EXPECT_EQ(Admin("GET", "nothing"), 404);
}

TEST(AdminParseTest, CpuAndDurations) {
  EXPECT_EQ(ParseMilliCpu("2500m"), 2500);
  EXPECT_EQ(ParseMilliCpu("1.5"), 1500);
  EXPECT_EQ(ParseMilliCpu("lots"), std::nullopt);
  EXPECT_EQ(ParseGoDuration("1m30s"), std::chrono::seconds(90));
  EXPECT_EQ(ParseGoDuration("250ms"), std::chrono::milliseconds(250));
  EXPECT_EQ(ParseGoDuration("5"), std::nullopt);
  EXPECT_EQ(ParseGoDuration("5d"), std::nullopt);
}

}  // namespace
}  // namespace flotilla::member
