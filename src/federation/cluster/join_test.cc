// flotilla join / unjoin against real API servers on port 0.
#include "federation/cluster/join.h"

#include <gtest/gtest.h>

#include "base/base64.h"
#include "client/client_test_util.h"
#include "federation/cluster/cluster_controller.h"
#include "federation/cluster/test_util.h"
#include "federation/common/names.h"

namespace flotilla::federation::cluster {
namespace {

using client::testing::TestCluster;
using testing::MemberServer;

const client::ResourceRef kConfigMaps{"", "v1", "configmaps", true};

class JoinTest : public ::testing::Test {
 protected:
  JoinOptions Options() {
    return {.name = "m1", .member = member_.AdminConfig(), .labels = {{"location", "on-prem"}}};
  }
  TestCluster fed_;
  MemberServer member_;
  std::unique_ptr<client::Client> fed_client_ = fed_.InProcess();
};

TEST_F(JoinTest, StoresSelfContainedCredentialsAndCreatesTheCluster) {
  auto joined = Join(*fed_client_, Options());
  ASSERT_TRUE(joined.ok()) << joined.status().ToString();
  auto cluster = fed_client_->Get(kClusters, "", "m1");
  ASSERT_TRUE(cluster.ok());
  EXPECT_EQ(StringAt(*cluster, "metadata.labels.location"), "on-prem");
  EXPECT_EQ(StringAt(*cluster, "spec.secretRef.name"), "m1-kubeconfig");
  const json::value& address = Find(*cluster, "spec.serverAddressByClientCIDRs")->at(0);
  EXPECT_EQ(StringAt(address.as_object(), "clientCIDR"), "0.0.0.0/0");
  EXPECT_EQ(StringAt(address.as_object(), "serverAddress"), member_.AdminConfig().server);

  auto secret = fed_client_->Get(kSecrets, kSystemNamespace, "m1-kubeconfig");
  ASSERT_TRUE(secret.ok()) << secret.status().ToString();
  std::string text = Base64Decode(StringAt(*secret, "data.kubeconfig")).value_or("");
  EXPECT_EQ(text.find("certificate-authority:"), std::string::npos) << "no file paths: " << text;
  EXPECT_NE(text.find("certificate-authority-data:"), std::string::npos);
  auto config = RestConfigFromSecret(*secret);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->server, member_.AdminConfig().server);
  EXPECT_EQ(config->token, member_.server().pki().admin_token);
  EXPECT_EQ(config->ca_pem, member_.server().pki().ca_cert_pem);

  auto again = Join(*fed_client_, Options());
  EXPECT_TRUE(again.status().Is(Reason::kAlreadyExists)) << again.status().ToString();
}

// `flotilla up` on an earlier run's directory: the member is back
// elsewhere, and the Cluster follows it, keeping what the user set on it.
TEST_F(JoinTest, RejoinPointsTheJoinedClusterAtTheMemberAnew) {
  ASSERT_TRUE(Join(*fed_client_, Options()).ok());
  ASSERT_TRUE(fed_client_
                  ->Patch(kClusters, "", "m1", client::PatchType::kMerge,
                          R"({"spec":{"unschedulable":true,"zones":["z1"]}})")
                  .ok());
  auto before = fed_client_->Get(kSecrets, kSystemNamespace, "m1-kubeconfig");
  ASSERT_TRUE(before.ok());

  MemberServer moved;
  ASSERT_NE(moved.AdminConfig().server, member_.AdminConfig().server);
  JoinOptions opts = Options();
  opts.member = moved.AdminConfig();
  opts.labels = {{"location", "cloud"}};
  opts.region = "r2";
  opts.rejoin = true;
  auto rejoined = Join(*fed_client_, opts);
  ASSERT_TRUE(rejoined.ok()) << rejoined.status().ToString();

  auto cluster = fed_client_->Get(kClusters, "", "m1");
  ASSERT_TRUE(cluster.ok());
  EXPECT_EQ(StringAt(*cluster, "metadata.labels.location"), "cloud");
  EXPECT_EQ(StringAt(*cluster, "spec.region"), "r2");
  EXPECT_EQ(Find(*cluster, "spec.zones"), nullptr) << "the location given replaces the old one";
  const json::value* cordon = Find(*cluster, "spec.unschedulable");
  EXPECT_TRUE(cordon != nullptr && cordon->is_bool() && cordon->get_bool()) << "a cordon stays";
  const json::value& address = Find(*cluster, "spec.serverAddressByClientCIDRs")->at(0);
  EXPECT_EQ(StringAt(address.as_object(), "serverAddress"), moved.AdminConfig().server);

  auto secret = fed_client_->Get(kSecrets, kSystemNamespace, "m1-kubeconfig");
  ASSERT_TRUE(secret.ok());
  EXPECT_NE(SecretVersion(*secret), SecretVersion(*before)) << "the federation builds anew";
  auto config = RestConfigFromSecret(*secret);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->server, moved.AdminConfig().server);
  EXPECT_EQ(config->ca_pem, moved.server().pki().ca_cert_pem);

  // Without --rejoin a second join is still refused; and a rejoin does not
  // bring back a Cluster being unjoined.
  EXPECT_TRUE(Join(*fed_client_, Options()).status().Is(Reason::kAlreadyExists));
  ASSERT_TRUE(fed_client_
                  ->Patch(kClusters, "", "m1", client::PatchType::kMerge,
                          R"({"metadata":{"finalizers":["test/hold"]}})")
                  .ok());
  ASSERT_TRUE(fed_client_->Delete(kClusters, "", "m1").ok());
  auto refused = Join(*fed_client_, opts);
  EXPECT_TRUE(refused.status().Is(Reason::kConflict)) << refused.status().ToString();
  ASSERT_TRUE(fed_client_
                  ->Patch(kClusters, "", "m1", client::PatchType::kMerge,
                          R"({"metadata":{"finalizers":null}})")
                  .ok());
}

TEST_F(JoinTest, UnreachableMemberCreatesNothing) {
  JoinOptions opts = Options();
  member_.server().Stop();
  auto joined = Join(*fed_client_, opts);
  ASSERT_TRUE(joined.status().Is(Reason::kServiceUnavailable)) << joined.status().ToString();
  EXPECT_NE(
      joined.status().message().find("cluster m1 at " + opts.member.server + " does not answer"),
      std::string::npos)
      << joined.status().message();
  opts.member.token = "wrong";
  member_.Restart();
  joined = Join(*fed_client_, opts);
  EXPECT_TRUE(joined.status().Is(Reason::kUnauthorized)) << joined.status().ToString();
  EXPECT_TRUE(fed_client_->Get(kClusters, "", "m1").status().Is(Reason::kNotFound));
  EXPECT_TRUE(
      fed_client_->Get(kSecrets, kSystemNamespace, "m1-kubeconfig").status().Is(Reason::kNotFound));
}

TEST_F(JoinTest, InvalidClusterNameLeavesNoSecret) {
  JoinOptions opts = Options();
  opts.labels = {{"bad key!", "x"}};
  auto joined = Join(*fed_client_, opts);
  EXPECT_TRUE(joined.status().Is(Reason::kInvalid)) << joined.status().ToString();
  EXPECT_TRUE(
      fed_client_->Get(kSecrets, kSystemNamespace, "m1-kubeconfig").status().Is(Reason::kNotFound));
}

TEST_F(JoinTest, CordonSetsUnschedulableAndUncordonRemovesIt) {
  ASSERT_TRUE(Join(*fed_client_, Options()).ok());
  auto unschedulable = [&] {
    auto c = fed_client_->Get(kClusters, "", "m1");
    EXPECT_TRUE(c.ok());
    const json::value* u = c.ok() ? Find(*c, "spec.unschedulable") : nullptr;
    return u == nullptr ? json::value() : *u;
  };
  auto taints = [&] {
    auto c = fed_client_->Get(kClusters, "", "m1");
    const json::value* t = c.ok() ? Find(*c, "spec.taints") : nullptr;
    return t == nullptr ? json::value() : *t;
  };
  // A taint of the user's stays through cordon and uncordon.
  ASSERT_TRUE(fed_client_
                  ->Patch(kClusters, "", "m1", client::PatchType::kMerge,
                          R"({"spec":{"taints":[{"key":"gpu","effect":"NoSchedule"}]}})")
                  .ok());
  EXPECT_EQ(SetUnschedulable(*fed_client_, "m1", true).value(), true);
  EXPECT_EQ(unschedulable(), json::value(true));
  // Karmada's taint of a cordoned cluster.
  EXPECT_EQ(taints(), json::parse(R"([{"key":"gpu","effect":"NoSchedule"},
      {"key":"cluster.karmada.io/unschedulable","effect":"NoSchedule"}])"));
  EXPECT_EQ(SetUnschedulable(*fed_client_, "m1", true).value(), false);  // already
  EXPECT_EQ(SetUnschedulable(*fed_client_, "m1", false).value(), true);
  EXPECT_TRUE(unschedulable().is_null());
  EXPECT_EQ(taints(), json::parse(R"([{"key":"gpu","effect":"NoSchedule"}])"));
  EXPECT_EQ(SetUnschedulable(*fed_client_, "m1", false).value(), false);
  EXPECT_TRUE(SetUnschedulable(*fed_client_, "m2", true).status().Is(Reason::kNotFound));
  // The API refuses what is no boolean.
  auto c = fed_client_->Get(kClusters, "", "m1");
  ASSERT_TRUE(c.ok());
  (*c)["spec"].as_object()["unschedulable"] = "yes";
  Status refused = fed_client_->Update(kClusters, "", *c).status();
  EXPECT_TRUE(refused.Is(Reason::kBadRequest)) << refused.ToString();
  EXPECT_NE(refused.message().find("spec.unschedulable of type bool"), std::string::npos)
      << refused.ToString();
  (*c)["spec"].as_object()["unschedulable"] = true;
  (*c)["spec"].as_object()["taints"] = json::parse(R"([{"key":"x","effect":"Sometimes"},{}])");
  refused = fed_client_->Update(kClusters, "", *c).status();
  EXPECT_TRUE(refused.Is(Reason::kInvalid)) << refused.ToString();
  for (const char* field :
       {"spec.taints[0].effect", "spec.taints[1].key", "spec.taints[1].effect"}) {
    EXPECT_NE(refused.ToString().find(field), std::string::npos) << refused.ToString();
  }
}

TEST_F(JoinTest, UnjoinRemovesClusterAndSecretAndCascadesToManagedObjectsOnly) {
  ASSERT_TRUE(Join(*fed_client_, Options()).ok());
  auto member = member_.InProcess();
  auto cm = [](const std::string& name, bool managed) {
    json::object meta{{"name", name}, {"namespace", "default"}};
    if (managed) meta["labels"] = {{kManagedByLabel, kManagedByValue}};
    return json::object{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", meta}};
  };
  ASSERT_TRUE(member->Create(kConfigMaps, "default", cm("ours", true)).ok());
  ASSERT_TRUE(member->Create(kConfigMaps, "default", cm("theirs", false)).ok());
  auto result = Unjoin(*fed_client_, "m1", true, {kConfigMaps});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->deleted, std::vector<std::string>{"configmaps default/ours"});
  EXPECT_TRUE(member->Get(kConfigMaps, "default", "ours").status().Is(Reason::kNotFound));
  EXPECT_TRUE(member->Get(kConfigMaps, "default", "theirs").ok());
  EXPECT_TRUE(fed_client_->Get(kClusters, "", "m1").status().Is(Reason::kNotFound));
  EXPECT_TRUE(
      fed_client_->Get(kSecrets, kSystemNamespace, "m1-kubeconfig").status().Is(Reason::kNotFound));
  EXPECT_TRUE(Unjoin(*fed_client_, "m1", false).status().Is(Reason::kNotFound));
}

TEST(ParseLabelsTest, PairsAndErrors) {
  auto labels = ParseLabels("a=1,location=on-prem");
  ASSERT_TRUE(labels.ok());
  EXPECT_EQ(labels->at("location"), "on-prem");
  EXPECT_TRUE(ParseLabels("").ok());
  EXPECT_TRUE(ParseLabels("a").status().Is(Reason::kBadRequest));
  EXPECT_TRUE(ParseLabels("=x").status().Is(Reason::kBadRequest));
}

}  // namespace
}  // namespace flotilla::federation::cluster
