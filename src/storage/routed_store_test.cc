// The routed store: keys under its prefix live in the side store, the rest
// in the main one; lists and watches above the prefix see main only.
#include "storage/routed_store.h"

#include <gtest/gtest.h>

#include "storage/test_util.h"

namespace flotilla::storage {
namespace {

using testing::EventLog;
using testing::SetValue;

class RoutedStoreTest : public ::testing::Test {
 protected:
  RoutedStoreTest() {
    auto main = NewMemoryStore();
    main_ = main.get();
    side_ = std::shared_ptr<Store>(NewMemoryStore());
    routed_ = NewRoutedStore(std::move(main), "/core/pods/", side_);
  }

  Store* main_;
  std::shared_ptr<Store> side_;
  std::unique_ptr<Store> routed_;
};

TEST_F(RoutedStoreTest, KeysUnderThePrefixLiveInTheSideStore) {
  ASSERT_TRUE(routed_->Create("/core/configmaps/default/a", SetValue("cm")).ok());
  ASSERT_TRUE(routed_->Create("/core/pods/default/p/a", SetValue("pod")).ok());
  EXPECT_EQ(main_->Get("/core/configmaps/default/a")->value, "cm");
  EXPECT_TRUE(main_->Get("/core/pods/default/p/a").status().Is(Reason::kNotFound));
  EXPECT_EQ(side_->Get("/core/pods/default/p/a")->value, "pod");
  EXPECT_EQ(routed_->Get("/core/pods/default/p/a")->value, "pod");
  // Each numbers its own revisions; the routed store's are main's.
  EXPECT_EQ(routed_->Get("/core/pods/default/p/a")->mod_revision, 1);
  EXPECT_EQ(routed_->CurrentRevision(), main_->CurrentRevision());

  ASSERT_TRUE(routed_->Update("/core/pods/default/p/a", 0, SetValue("pod2")).ok());
  EXPECT_EQ(side_->Get("/core/pods/default/p/a")->value, "pod2");
  EXPECT_EQ(routed_->List("/core/pods/", {})->items.size(), 1u);
  EXPECT_EQ(*routed_->Count("/core/pods/default/"), 1);
  ASSERT_TRUE(routed_->Delete("/core/pods/default/p/a", 0).ok());
  EXPECT_EQ(*side_->Count("/core/pods/"), 0);
}

TEST_F(RoutedStoreTest, AboveThePrefixOnlyMainIsSeen) {
  EventLog all, pods;
  auto w_all = routed_->Watch("/", 0, all.Callback());
  auto w_pods = routed_->Watch("/core/pods/", 0, pods.Callback());
  ASSERT_TRUE(w_all.ok() && w_pods.ok());
  ASSERT_TRUE(routed_->Create("/core/pods/default/p/a", SetValue("pod")).ok());
  ASSERT_TRUE(routed_->Create("/core/configmaps/default/a", SetValue("cm")).ok());
  ASSERT_EQ(all.WaitFor(1).size(), 1u);
  EXPECT_EQ(all.events()[0].kv.key, "/core/configmaps/default/a");
  ASSERT_EQ(pods.WaitFor(1).size(), 1u);
  EXPECT_EQ(pods.events()[0].kv.key, "/core/pods/default/p/a");
  auto listed = routed_->List("/", {});
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_EQ(listed->items[0].key, "/core/configmaps/default/a");
  // "/core/" holds the prefix but is not under it: main's.
  EXPECT_EQ(*routed_->Count("/core/"), 1);
}

}  // namespace
}  // namespace flotilla::storage
