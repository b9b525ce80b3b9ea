#include "federation/common/context.h"

#include <gtest/gtest.h>

#include "base/mutex.h"
#include "runtime/fake_client.h"
#include "runtime/test_util.h"

namespace flotilla::federation {
namespace {

// A controller told that the clusters changed must find the member caches
// changed already: a cluster that left without caches, one that came with
// them. Told first, a workload checked at once still saw the cluster that
// left, and nothing told it again.
TEST(FederationContextTest, ControllersHearOfAClusterAfterItsMemberCaches) {
  FakeClock clock;
  runtime::FakeClient fed(clock);
  auto member = std::make_shared<runtime::FakeClient>(clock);
  FederationContext ctx(fed, clock);
  ctx.members().AddHandler(kPods, [](const std::string&) { return runtime::EventHandler{}; });
  Mutex mu;
  std::vector<std::string> seen;  // at each call: the clusters with member caches
  ctx.OnClusterChange([&] {
    std::string clusters;
    for (const std::string& c : ctx.members().Clusters()) clusters += c + ";";
    MutexLock lock(mu);
    seen.push_back(clusters);
  });
  ASSERT_TRUE(ctx.Start().ok());
  ctx.clusters().SetReady("a", member);
  ctx.clusters().SetReady("b", std::make_shared<runtime::FakeClient>(clock));
  ctx.clusters().SetNotReady("a");
  ctx.clusters().Remove("b");
  {
    MutexLock lock(mu);
    EXPECT_EQ(seen, (std::vector<std::string>{"a;", "a;b;", "b;", ""}));
  }
  ctx.Stop();
}

TEST(FederationContextTest, FinalizesAtCreateWhatAControllerHoldsOnceAClusterIsJoined) {
  FakeClock clock;
  runtime::FakeClient fed(clock);
  FederationContext ctx(fed, clock);
  ctx.cluster_objects();
  ctx.AddFinalizedResource(
      kSecrets, [](const json::object& obj) { return StringAt(obj, "metadata.name") != "own"; });
  ASSERT_TRUE(ctx.Start().ok());
  json::object held{{"metadata", json::object{{"name", "held"}, {"namespace", "ns"}}}};
  json::object own{{"metadata", json::object{{"name", "own"}, {"namespace", "ns"}}}};
  EXPECT_FALSE(ctx.FinalizesAtCreate("", "secrets", held));  // no cluster joined yet

  ASSERT_TRUE(fed.Create(kClusters, "", {{"metadata", json::object{{"name", "a"}}}}).ok());
  ASSERT_TRUE(
      runtime::testing::Eventually([&] { return ctx.cluster_objects().cache().Size() > 0; }));
  EXPECT_TRUE(ctx.FinalizesAtCreate("", "secrets", held));
  EXPECT_FALSE(ctx.FinalizesAtCreate("", "secrets", own));       // the controller leaves it
  EXPECT_FALSE(ctx.FinalizesAtCreate("", "configmaps", held));   // no controller holds these
  EXPECT_FALSE(ctx.FinalizesAtCreate("apps", "secrets", held));  // another group
  ctx.Stop();
}

}  // namespace
}  // namespace flotilla::federation
