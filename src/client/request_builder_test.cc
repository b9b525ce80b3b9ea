#include "client/request_builder.h"

#include <gtest/gtest.h>

namespace flotilla::client {
namespace {

const ResourceRef kConfigMaps{"", "v1", "configmaps", true};
const ResourceRef kDeployments{"apps", "v1", "deployments", true};
const ResourceRef kNamespaces{"", "v1", "namespaces", false};
const ResourceRef kClusters{"federation", "v1beta1", "clusters", false};

TEST(ResourcePathTest, CoreGroupedNamespacedAndClusterScoped) {
  EXPECT_EQ(ResourcePath(kConfigMaps, "default", "cfg"),
            "/api/v1/namespaces/default/configmaps/cfg");
  EXPECT_EQ(ResourcePath(kConfigMaps, ""), "/api/v1/configmaps");
  EXPECT_EQ(ResourcePath(kDeployments, "prod", "web", "scale"),
            "/apis/apps/v1/namespaces/prod/deployments/web/scale");
  EXPECT_EQ(ResourcePath(kNamespaces, "ignored", "kube-system"), "/api/v1/namespaces/kube-system");
  EXPECT_EQ(ResourcePath(kClusters, "", "east"), "/apis/federation/v1beta1/clusters/east");
}

TEST(ResourcePathTest, SegmentsArePercentEncoded) {
  EXPECT_EQ(ResourcePath(kClusters, "", "system:node a"),
            "/apis/federation/v1beta1/clusters/system%3Anode%20a");
}

TEST(ApiRequestTest, TargetEncodesQueryKeysAndValuesInOrder) {
  ApiRequest req{
      "GET", "/api/v1/pods", {{"labelSelector", "app in (a,b),tier!=x"}, {"limit", "5"}}, "", ""};
  EXPECT_EQ(req.Target(),
            "/api/v1/pods?labelSelector=app%20in%20%28a%2Cb%29%2Ctier%21%3Dx&limit=5");
  req.query.clear();
  EXPECT_EQ(req.Target(), "/api/v1/pods");
}

TEST(BuildTest, ListAndWatchQueries) {
  ListOptions list;
  list.label_selector = "app=web";
  list.limit = 10;
  list.continue_token = "abc=";
  auto req = BuildList(kConfigMaps, "default", list);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->method, "GET");
  EXPECT_EQ(
      req->Target(),
      "/api/v1/namespaces/default/configmaps?labelSelector=app%3Dweb&limit=10&continue=abc%3D");

  WatchOptions watch;
  watch.resource_version = "42";
  watch.timeout_seconds = 30;
  auto w = BuildWatch(kDeployments, "", watch);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->Target(),
            "/apis/apps/v1/deployments?watch=true&resourceVersion=42&allowWatchBookmarks=true&"
            "timeoutSeconds=30");
}

TEST(BuildTest, CreateTakesTheObjectsNamespaceWhenNoneIsGiven) {
  json::object obj{{"metadata", {{"name", "cfg"}, {"namespace", "team"}}}};
  auto req = BuildCreate(kConfigMaps, "", obj);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->method, "POST");
  EXPECT_EQ(req->path, "/api/v1/namespaces/team/configmaps");
  EXPECT_EQ(req->content_type, "application/json");
  EXPECT_EQ(ParseJsonObject(req->body).value(), obj);
  auto explicit_ns = BuildCreate(kConfigMaps, "other", obj);
  EXPECT_EQ(explicit_ns->path, "/api/v1/namespaces/other/configmaps");
}

TEST(BuildTest, UpdateAndUpdateStatusUseTheObjectsName) {
  json::object obj{{"metadata", {{"name", "web"}}}};
  auto req = BuildUpdate(kDeployments, "default", obj, "status");
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->method, "PUT");
  EXPECT_EQ(req->path, "/apis/apps/v1/namespaces/default/deployments/web/status");
  auto unnamed = BuildUpdate(kDeployments, "default", json::object{});
  EXPECT_TRUE(unnamed.status().Is(Reason::kBadRequest));
  EXPECT_EQ(unnamed.status().message(), "resource name may not be empty");
}

TEST(BuildTest, PatchContentTypes) {
  EXPECT_EQ(BuildPatch(kConfigMaps, "d", "c", PatchType::kMerge, "{}", "")->content_type,
            "application/merge-patch+json");
  EXPECT_EQ(BuildPatch(kConfigMaps, "d", "c", PatchType::kJson, "[]", "")->content_type,
            "application/json-patch+json");
  EXPECT_EQ(BuildPatch(kConfigMaps, "d", "c", PatchType::kStrategic, "{}", "")->content_type,
            "application/strategic-merge-patch+json");
}

TEST(BuildTest, DeleteSendsOptionsOnlyWhenThereAreSome) {
  auto bare = BuildDelete(kConfigMaps, "default", "cfg", {});
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->method, "DELETE");
  EXPECT_TRUE(bare->body.empty());
  DeleteOptions opts;
  opts.propagation_policy = "Orphan";
  opts.precondition_resource_version = "7";
  opts.grace_period_seconds = 0;
  auto req = BuildDelete(kConfigMaps, "default", "cfg", opts);
  ASSERT_TRUE(req.ok());
  json::object body = ParseJsonObject(req->body).value();
  EXPECT_EQ(body["kind"], "DeleteOptions");
  EXPECT_EQ(body["propagationPolicy"], "Orphan");
  EXPECT_EQ(body["gracePeriodSeconds"], 0);
  EXPECT_EQ(*Find(body, "preconditions.resourceVersion"), "7");
  EXPECT_EQ(Find(body, "preconditions.uid"), nullptr);
}

TEST(BuildTest, UpdateScaleIsAMergePatchOfTheScaleSubresource) {
  auto req = BuildUpdateScale(kDeployments, "default", "web", 3);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->method, "PATCH");
  EXPECT_EQ(req->path, "/apis/apps/v1/namespaces/default/deployments/web/scale");
  EXPECT_EQ(req->body, R"({"spec":{"replicas":3}})");
  EXPECT_TRUE(
      BuildUpdateScale(kDeployments, "default", "web", -1).status().Is(Reason::kBadRequest));
}

TEST(BuildTest, InvalidPathSegmentsAreRejectedBeforeSending) {
  EXPECT_EQ(BuildGet(kConfigMaps, "default", "").status().message(),
            "resource name may not be empty");
  EXPECT_EQ(BuildGet(kConfigMaps, "default", "a/b").status().message(),
            "resource name may not contain '/'");
  EXPECT_EQ(BuildGet(kConfigMaps, "default", "..").status().message(),
            "resource name may not be '..'");
  EXPECT_EQ(BuildGet(kConfigMaps, "x%2F", "cfg").status().message(),
            "namespace may not contain '%'");
  EXPECT_EQ(BuildPatch(kConfigMaps, "d", "c", PatchType::kMerge, "{}", "a/b").status().message(),
            "subresource may not contain '/'");
}

}  // namespace
}  // namespace flotilla::client
