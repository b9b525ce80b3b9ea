// The store of the members' pods view: what MemberPods writes, how a name
// of several clusters reads, and that nothing else writes.
#include "federation/cluster/member_pods.h"

#include <gtest/gtest.h>

#include "api/federated.h"
#include "base/clock.h"

namespace flotilla::federation::cluster {
namespace {

json::object Pod(const std::string& name, const std::string& node) {
  return json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                     R"(","namespace":"default","resourceVersion":"812","uid":"u-)" + name +
                     R"(","labels":{"app":"web"},"managedFields":[{"manager":"kubectl"}]},)"
                     R"("spec":{"nodeName":")" +
                     node + R"("}})")
      .as_object();
}

json::object Stored(const storage::KeyValue& kv) { return json::parse(kv.value).as_object(); }

TEST(MemberPodsStoreTest, APodIsItsMembersLabelledWithItsCluster) {
  FakeClock clock;
  MemberPodsStore view(clock);
  ASSERT_TRUE(view.Put("a", Pod("web-1", "a-node-1")).ok());
  auto got = view.Get("/core/pods/default/web-1");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->key, "/core/pods/default/web-1 a");
  json::object pod = Stored(*got);
  EXPECT_EQ(json::serialize(pod.at("metadata").at("labels")),
            R"({"app":"web","federation.kubernetes.io/cluster":"a"})");
  EXPECT_EQ(StringAt(pod, "metadata.uid"), "u-web-1");
  EXPECT_FALSE(pod.at("metadata").as_object().contains("managedFields"));
  // The view's own revision, not the member's.
  EXPECT_EQ(StringAt(pod, "metadata.resourceVersion"), std::to_string(got->mod_revision));
  EXPECT_EQ(StringAt(pod, "spec.nodeName"), "a-node-1");

  ASSERT_TRUE(view.Put("a", Pod("web-1", "a-node-2")).ok());
  auto updated = view.Get("/core/pods/default/web-1");
  ASSERT_TRUE(updated.ok());
  EXPECT_GT(updated->mod_revision, got->mod_revision);
  EXPECT_EQ(StringAt(Stored(*updated), "spec.nodeName"), "a-node-2");

  EXPECT_TRUE(view.Get("/core/pods/default/web").status().Is(Reason::kNotFound));
  EXPECT_TRUE(view.Get("/core/pods/other/web-1").status().Is(Reason::kNotFound));
}

TEST(MemberPodsStoreTest, ANameInSeveralClustersIsAConflictNamingThem) {
  FakeClock clock;
  MemberPodsStore view(clock);
  ASSERT_TRUE(view.Put("b", Pod("twin", "b-node-1")).ok());
  ASSERT_TRUE(view.Put("a", Pod("twin", "a-node-1")).ok());
  ASSERT_TRUE(view.Put("a", Pod("twin-2", "a-node-1")).ok());
  auto got = view.Get("/core/pods/default/twin");
  ASSERT_TRUE(got.status().Is(Reason::kConflict)) << got.status().ToString();
  EXPECT_EQ(got.status().message(),
            "pods \"twin\" run in several clusters (a, b): read one with kubectl get pods "
            "--field-selector metadata.name=twin -l federation.kubernetes.io/cluster=CLUSTER");
  auto listed = view.List("/core/pods/default/", {});
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->items.size(), 3u);
  // In name order, then by cluster.
  EXPECT_EQ(listed->items[0].key, "/core/pods/default/twin a");
  EXPECT_EQ(listed->items[1].key, "/core/pods/default/twin b");
  EXPECT_EQ(listed->items[2].key, "/core/pods/default/twin-2 a");

  // A cluster that goes takes its pods; the others stay, "ba" too.
  ASSERT_TRUE(view.Put("ba", Pod("solo", "ba-node-1")).ok());
  view.RemoveCluster("a");
  auto left = view.List("/core/pods/", {});
  ASSERT_TRUE(left.ok());
  ASSERT_EQ(left->items.size(), 2u);
  EXPECT_EQ(left->items[0].key, "/core/pods/default/solo ba");
  EXPECT_EQ(left->items[1].key, "/core/pods/default/twin b");
  EXPECT_TRUE(view.Get("/core/pods/default/twin").ok());
  ASSERT_TRUE(view.Remove("b", Pod("twin", "")).ok());
  EXPECT_TRUE(view.Remove("b", Pod("twin", "")).ok());  // already gone: fine
  view.RemoveCluster("b");                              // nothing left of it: fine
  EXPECT_EQ(*view.Count("/core/pods/"), 1);
  view.RemoveCluster("ba");
  EXPECT_EQ(*view.Count("/core/pods/"), 0);
}

TEST(MemberPodsStoreTest, OnlyTheMembersWriteIt) {
  FakeClock clock;
  MemberPodsStore view(clock);
  ASSERT_TRUE(view.Put("a", Pod("web-1", "n")).ok());
  auto write = [](int64_t, const std::optional<storage::KeyValue>&) -> StatusOr<storage::Encoded> {
    return std::string("{}");
  };
  for (const Status& s : {view.Create("/core/pods/default/x", write).status(),
                          view.Update("/core/pods/default/web-1", 0, write).status(),
                          view.Delete("/core/pods/default/web-1", 0).status()}) {
    EXPECT_TRUE(s.Is(Reason::kMethodNotAllowed)) << s.ToString();
    EXPECT_NE(s.message().find("read-only view of the member clusters' pods"), std::string::npos);
  }
  EXPECT_EQ(*view.Count("/core/pods/"), 1);
}

}  // namespace
}  // namespace flotilla::federation::cluster
