#include "federation/common/dependencies.h"

#include <gtest/gtest.h>

namespace flotilla::federation {
namespace {

TEST(DependenciesTest, RefsByNameInTheDependentsNamespace) {
  std::vector<DependencyRef> refs = DependencyRefs(json::parse(R"([
      {"apiVersion":"v1","kind":"ConfigMap","name":"cfg"},
      {"apiVersion":"v1","kind":"Secret","namespace":"other","name":"pw"},
      {"apiVersion":"v1","kind":"ConfigMap","labelSelector":{"matchLabels":{"a":"b"}}},
      {"apiVersion":"v1","kind":"ConfigMap","name":"cfg"}])")
                                                       .as_array(),
                                                   "shop");
  EXPECT_EQ(refs, (std::vector<DependencyRef>{{"v1", "ConfigMap", "shop", "cfg"},
                                              {"v1", "Secret", "other", "pw"}}));
}

TEST(DependenciesTest, AnObjectIsNeededWhereItsDependentsAre) {
  Dependencies deps;
  const DependencyRef cfg{"v1", "ConfigMap", "shop", "cfg"};
  const DependencyRef pw{"v1", "Secret", "shop", "pw"};
  EXPECT_EQ(deps.Set("a", {cfg}, {"m1"}), std::vector<DependencyRef>{cfg});
  EXPECT_EQ(deps.Set("b", {cfg, pw}, {"m2"}), (std::vector<DependencyRef>{cfg, pw}));
  EXPECT_TRUE(deps.NeededIn(cfg, "m1"));
  EXPECT_TRUE(deps.NeededIn(cfg, "m2"));
  EXPECT_FALSE(deps.NeededIn(pw, "m1"));
  // Unchanged: nothing to re-check.
  EXPECT_TRUE(deps.Set("a", {cfg}, {"m1"}).empty());
  // "a" moves to m3 and stops naming anything after.
  EXPECT_EQ(deps.Set("a", {cfg}, {"m3"}), std::vector<DependencyRef>{cfg});
  EXPECT_FALSE(deps.NeededIn(cfg, "m1"));
  EXPECT_TRUE(deps.NeededIn(cfg, "m3"));
  EXPECT_EQ(deps.Set("a", {}, {}), std::vector<DependencyRef>{cfg});
  EXPECT_FALSE(deps.NeededIn(cfg, "m3"));
  EXPECT_TRUE(deps.NeededIn(cfg, "m2"));
  // "b" is gone.
  EXPECT_EQ(deps.Remove("b"), (std::vector<DependencyRef>{cfg, pw}));
  EXPECT_FALSE(deps.NeededIn(cfg, "m2"));
  EXPECT_TRUE(deps.Remove("b").empty());
}

}  // namespace
}  // namespace flotilla::federation
