#include "federation/common/context.h"

#include <gtest/gtest.h>

#include "runtime/fake_client.h"

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
  std::mutex mu;
  std::vector<std::string> seen;  // at each call: the clusters with member caches
  ctx.OnClusterChange([&] {
    std::string clusters;
    for (const std::string& c : ctx.members().Clusters()) clusters += c + ";";
    std::lock_guard lock(mu);
    seen.push_back(clusters);
  });
  ASSERT_TRUE(ctx.Start().ok());
  ctx.clusters().SetReady("a", member);
  ctx.clusters().SetReady("b", std::make_shared<runtime::FakeClient>(clock));
  ctx.clusters().SetNotReady("a");
  ctx.clusters().Remove("b");
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(seen, (std::vector<std::string>{"a;", "a;b;", "b;", ""}));
  }
  ctx.Stop();
}

}  // namespace
}  // namespace flotilla::federation
