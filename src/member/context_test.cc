// The shared plumbing of member controllers: one informer per resource,
// started by the manager, seeing writes made through the member's client.
#include <gtest/gtest.h>

#include "member/test_util.h"
#include "runtime/test_util.h"

namespace flotilla::member {
namespace {

class Watcher : public Component {
 public:
  explicit Watcher(ControllerContext& ctx)
      : pods(ctx.informers.For(kPods)), again(ctx.informers.For(kPods)) {}
  runtime::Informer& pods;
  runtime::Informer& again;
};

TEST(MemberContextTest, OneInformerPerResourceSeesTheMembersWrites) {
  testing::MemberTestEnv env;
  Watcher& w = env.Add<Watcher>();
  EXPECT_EQ(&w.pods, &w.again);
  ASSERT_TRUE(env.Start().ok());
  json::object pod = {{"apiVersion", "v1"},
                      {"kind", "Pod"},
                      {"metadata", {{"name", "p"}}},
                      {"spec", {{"containers", json::array{{{"name", "c"}, {"image", "nginx"}}}}}}};
  auto created = env.client().Create(kPods, "default", pod);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_TRUE(runtime::testing::Eventually([&] { return w.pods.cache().Size() == 1; }));
}

}  // namespace
}  // namespace flotilla::member
