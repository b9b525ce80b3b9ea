// The Client verbs against a real API server, through the REST client and
// the in-process client alike (each test runs for both), and checks that
// both give identical objects and errors.
#include <gtest/gtest.h>

#include "client/client_test_util.h"

namespace flotilla::client {
namespace {

using testing::ClientKind;
using testing::NameOf;
using testing::RvOf;
using testing::TestCluster;

using testing::kConfigMaps;
const ResourceRef kDeployments{"apps", "v1", "deployments", true};
using testing::kNamespaces;

json::object ConfigMap(const std::string& name, const std::string& app = "web") {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"labels", {{"app", app}}}}},
          {"data", {{"a", "1"}}}};
}

json::object Deployment(const std::string& name) {
  return ParseJsonObject(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":")" +
                         name + R"("},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},
      "template":{"metadata":{"labels":{"app":"web"}},
      "spec":{"containers":[{"name":"c","image":"nginx:1.25"}]}}}})")
      .value();
}

class ClientTest : public ::testing::TestWithParam<ClientKind> {
 protected:
  void SetUp() override { client_ = cluster_.Make(GetParam()); }

  TestCluster cluster_;
  std::unique_ptr<Client> client_;
};

INSTANTIATE_TEST_SUITE_P(BothClients, ClientTest,
                         ::testing::Values(ClientKind::kRest, ClientKind::kRestHttp11,
                                           ClientKind::kInProcess),
                         testing::KindName);

TEST_P(ClientTest, CreateGetListUpdateDelete) {
  auto created = client_->Create(kConfigMaps, "default", ConfigMap("cfg"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_FALSE(RvOf(*created).empty());
  EXPECT_EQ(*Find(*created, "metadata.namespace"), "default");

  auto got = client_->Get(kConfigMaps, "default", "cfg");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, *created);

  json::object changed = *got;
  changed["data"].as_object()["a"] = "2";
  auto updated = client_->Update(kConfigMaps, "default", changed);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ(*Find(*updated, "data.a"), "2");
  EXPECT_NE(RvOf(*updated), RvOf(*created));

  auto list = client_->List(kConfigMaps, "default", {});
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0], *updated);
  EXPECT_FALSE(list->resource_version.empty());

  ASSERT_TRUE(client_->Delete(kConfigMaps, "default", "cfg").ok());
  EXPECT_TRUE(client_->Get(kConfigMaps, "default", "cfg").status().Is(Reason::kNotFound));
}

TEST_P(ClientTest, ListSelectsAndPages) {
  for (const char* name : {"a", "b", "c"}) {
    ASSERT_TRUE(client_->Create(kConfigMaps, "default", ConfigMap(name)).ok());
  }
  ASSERT_TRUE(client_->Create(kConfigMaps, "default", ConfigMap("other", "db")).ok());
  ListOptions opts;
  opts.label_selector = "app in (web,api)";
  opts.limit = 2;
  auto first = client_->List(kConfigMaps, "default", opts);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->items.size(), 2u);
  ASSERT_FALSE(first->continue_token.empty());
  opts.continue_token = first->continue_token;
  auto second = client_->List(kConfigMaps, "default", opts);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_EQ(second->items.size(), 1u);
  EXPECT_EQ(NameOf(second->items[0]), "c");
  EXPECT_TRUE(second->continue_token.empty());
  auto all = client_->List(kConfigMaps, "", {});  // every namespace
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->items.size(), 4u);
}

TEST_P(ClientTest, PatchTypes) {
  ASSERT_TRUE(client_->Create(kConfigMaps, "default", ConfigMap("cfg")).ok());
  auto merged =
      client_->Patch(kConfigMaps, "default", "cfg", PatchType::kMerge, R"({"data":{"b":"2"}})");
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(*Find(*merged, "data.b"), "2");
  auto json_patched = client_->Patch(kConfigMaps, "default", "cfg", PatchType::kJson,
                                     R"([{"op":"add","path":"/data/c","value":"3"}])");
  ASSERT_TRUE(json_patched.ok()) << json_patched.status().ToString();
  EXPECT_EQ(*Find(*json_patched, "data.c"), "3");
  auto strategic = client_->Patch(kConfigMaps, "default", "cfg", PatchType::kStrategic,
                                  R"({"data":{"a":null}})");
  ASSERT_TRUE(strategic.ok()) << strategic.status().ToString();
  EXPECT_EQ(Find(*strategic, "data.a"), nullptr);
  EXPECT_EQ(*Find(*strategic, "data.c"), "3");
}

TEST_P(ClientTest, StatusAndScaleSubresources) {
  auto created = client_->Create(kDeployments, "default", Deployment("web"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  json::object with_status = *created;
  with_status["status"] = {{"observedGeneration", 1}, {"replicas", 2}};
  auto status = client_->UpdateStatus(kDeployments, "default", with_status);
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_EQ(*Find(*status, "status.replicas"), 2);

  auto scale = client_->GetScale(kDeployments, "default", "web");
  ASSERT_TRUE(scale.ok()) << scale.status().ToString();
  EXPECT_EQ(scale->at("kind"), "Scale");
  EXPECT_EQ(*Find(*scale, "spec.replicas"), 2);
  auto scaled = client_->UpdateScale(kDeployments, "default", "web", 5);
  ASSERT_TRUE(scaled.ok()) << scaled.status().ToString();
  EXPECT_EQ(*Find(*scaled, "spec.replicas"), 5);
  EXPECT_EQ(*Find(client_->Get(kDeployments, "default", "web").value(), "spec.replicas"), 5);
  EXPECT_TRUE(
      client_->UpdateScale(kDeployments, "default", "web", -1).status().Is(Reason::kBadRequest));
}

json::object Pod(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}}},
          {"spec", {{"containers", json::array{{{"name", "c"}, {"image", "nginx"}}}}}}};
}

json::object Binding(const std::string& node) {
  return {
      {"apiVersion", "v1"}, {"kind", "Binding"}, {"target", {{"kind", "Node"}, {"name", node}}}};
}

TEST_P(ClientTest, CreateSubresourceBindsAPodOnce) {
  const ResourceRef pods{"", "v1", "pods", true};
  ASSERT_TRUE(client_->Create(pods, "default", Pod("web")).ok());
  auto bound = client_->CreateSubresource(pods, "default", "web", "binding", Binding("node-1"));
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  EXPECT_EQ(*Find(*bound, "status"), "Success");
  json::object pod = client_->Get(pods, "default", "web").value();
  EXPECT_EQ(*Find(pod, "spec.nodeName"), "node-1");

  Status again =
      client_->CreateSubresource(pods, "default", "web", "binding", Binding("node-2")).status();
  EXPECT_TRUE(again.Is(Reason::kConflict)) << again.ToString();
  EXPECT_EQ(again.message(),
            "Operation cannot be fulfilled on pods/binding \"web\": pod web is already assigned "
            "to node \"node-1\"");
  Status missing =
      client_->CreateSubresource(pods, "default", "nope", "binding", Binding("node-1")).status();
  EXPECT_TRUE(missing.Is(Reason::kNotFound)) << missing.ToString();
  EXPECT_TRUE(client_->CreateSubresource(pods, "default", "web", "", Binding("n"))
                  .status()
                  .Is(Reason::kBadRequest));
}

TEST_P(ClientTest, BoundPodsAreDeletedGracefully) {
  const ResourceRef pods{"", "v1", "pods", true};
  ASSERT_TRUE(client_->Create(pods, "default", Pod("web")).ok());
  ASSERT_TRUE(client_->CreateSubresource(pods, "default", "web", "binding", Binding("n1")).ok());
  ASSERT_TRUE(client_->Delete(pods, "default", "web").ok());
  json::object terminating = client_->Get(pods, "default", "web").value();
  EXPECT_EQ(*Find(terminating, "metadata.deletionGracePeriodSeconds"), 30);
  DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(client_->Delete(pods, "default", "web", now).ok());
  EXPECT_TRUE(client_->Get(pods, "default", "web").status().Is(Reason::kNotFound));
}

TEST_P(ClientTest, ClusterScopedResources) {
  json::object ns{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team"}}}};
  ASSERT_TRUE(client_->Create(kNamespaces, "", ns).ok());
  auto got = client_->Get(kNamespaces, "", "team");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(NameOf(*got), "team");
  ASSERT_TRUE(client_->Create(kConfigMaps, "team", ConfigMap("cfg")).ok());
  EXPECT_TRUE(client_->Get(kConfigMaps, "team", "cfg").ok());
}

TEST_P(ClientTest, ErrorsAreTheServersStatus) {
  Status missing = client_->Get(kConfigMaps, "default", "nope").status();
  EXPECT_TRUE(missing.Is(Reason::kNotFound));
  EXPECT_EQ(missing.message(), "configmaps \"nope\" not found");

  ASSERT_TRUE(client_->Create(kConfigMaps, "default", ConfigMap("cfg")).ok());
  Status exists = client_->Create(kConfigMaps, "default", ConfigMap("cfg")).status();
  EXPECT_TRUE(exists.Is(Reason::kAlreadyExists));
  EXPECT_EQ(exists.message(), "configmaps \"cfg\" already exists");

  json::object stale = client_->Get(kConfigMaps, "default", "cfg").value();
  ASSERT_TRUE(
      client_->Patch(kConfigMaps, "default", "cfg", PatchType::kMerge, R"({"data":{"x":"1"}})")
          .ok());
  Status conflict = client_->Update(kConfigMaps, "default", stale).status();
  EXPECT_TRUE(conflict.Is(Reason::kConflict)) << conflict.ToString();

  DeleteOptions precondition;
  precondition.precondition_resource_version = RvOf(stale);
  EXPECT_TRUE(client_->Delete(kConfigMaps, "default", "cfg", precondition).Is(Reason::kConflict));

  Status invalid = client_->Create(kConfigMaps, "default", ConfigMap("Bad_Name")).status();
  EXPECT_TRUE(invalid.Is(Reason::kInvalid)) << invalid.ToString();
  EXPECT_EQ(invalid.code(), 422);
  ASSERT_FALSE(invalid.causes().empty());
  EXPECT_EQ(invalid.causes()[0].field, "metadata.name");
  EXPECT_EQ(invalid.causes()[0].type, "FieldValueInvalid");

  const ResourceRef unknown{"", "v1", "widgets", true};
  EXPECT_TRUE(client_->List(unknown, "default", {}).status().Is(Reason::kNotFound));
}

TEST(BothClientsTest, IdenticalObjectsAndErrors) {
  TestCluster cluster;
  std::unique_ptr<Client> rest = cluster.Make(ClientKind::kRest);
  std::unique_ptr<Client> local = cluster.Make(ClientKind::kInProcess);
  ASSERT_TRUE(rest->Create(kConfigMaps, "default", ConfigMap("one")).ok());
  ASSERT_TRUE(local->Create(kConfigMaps, "default", ConfigMap("two")).ok());
  for (const char* name : {"one", "two"}) {
    EXPECT_EQ(rest->Get(kConfigMaps, "default", name).value(),
              local->Get(kConfigMaps, "default", name).value());
  }
  EXPECT_EQ(rest->List(kConfigMaps, "default", {}).value().items,
            local->List(kConfigMaps, "default", {}).value().items);

  auto same_error = [](const Status& a, const Status& b) {
    EXPECT_EQ(a.reason(), b.reason());
    EXPECT_EQ(a.message(), b.message());
    ASSERT_EQ(a.causes().size(), b.causes().size());
    for (size_t i = 0; i < a.causes().size(); ++i) {
      EXPECT_EQ(a.causes()[i].type, b.causes()[i].type);
      EXPECT_EQ(a.causes()[i].field, b.causes()[i].field);
      EXPECT_EQ(a.causes()[i].message, b.causes()[i].message);
    }
  };
  same_error(rest->Get(kConfigMaps, "default", "nope").status(),
             local->Get(kConfigMaps, "default", "nope").status());
  same_error(rest->Create(kConfigMaps, "default", ConfigMap("one")).status(),
             local->Create(kConfigMaps, "default", ConfigMap("one")).status());
  same_error(rest->Create(kConfigMaps, "default", ConfigMap("Bad_Name")).status(),
             local->Create(kConfigMaps, "default", ConfigMap("Bad_Name")).status());
  same_error(rest->Patch(kConfigMaps, "default", "one", PatchType::kJson, "{oops").status(),
             local->Patch(kConfigMaps, "default", "one", PatchType::kJson, "{oops").status());
  same_error(rest->Get(kConfigMaps, "default", "a/b").status(),
             local->Get(kConfigMaps, "default", "a/b").status());
}

}  // namespace
}  // namespace flotilla::client
