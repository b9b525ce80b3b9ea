// The watch fan-out on its own: ordering, batching, isolation of a slow
// watcher, and Stop() waiting for a callback in progress.
#include "storage/watch_hub.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "storage/test_util.h"

namespace flotilla::storage {
namespace {

using testing::EventLog;

std::vector<HistoryEntry> Puts(const std::string& key, int64_t from, int64_t to) {
  std::vector<HistoryEntry> out;
  for (int64_t r = from; r <= to; ++r) {
    out.push_back(
        {r, std::make_shared<const KeyValue>(KeyValue{key, std::to_string(r), from, r}), nullptr});
  }
  return out;
}

TEST(WatchHubTest, DeliversBacklogThenLiveInBoundedOrderedBatches) {
  WatchHub hub;
  EventLog log;
  auto watcher = hub.Add("/a/", 2, log.Callback(), Puts("/a/x", 1, 1));
  hub.Publish(Puts("/a/x", 2, 2501));
  hub.Publish(Puts("/b/x", 2502, 2510));  // other prefix
  std::vector<Event> events = log.WaitFor(2500);
  ASSERT_EQ(events.size(), 2500u);  // the backlog entry, then 3..2501
  EXPECT_EQ(events[0].kv.mod_revision, 1);
  for (size_t i = 1; i < events.size(); ++i) EXPECT_EQ(events[i].kv.mod_revision, int64_t(i) + 2);
  EXPECT_GE(log.batches(), 3u);  // at most kMaxBatch per callback
}

// Writers build an object for a key only while a watcher that reads
// objects watches it; one stopped is forgotten by the next Publish.
TEST(WatchHubTest, WantsObjectsWhileAWatcherThatReadsThemWatchesTheKey) {
  WatchHub hub;
  auto plain = hub.Add("/", 0, [](const std::vector<Event>&) {}, {});
  EXPECT_FALSE(hub.WantsObjects("/a/x"));
  auto reader = hub.Add(
      "/a/", 0, [](const std::vector<Event>&) {}, {}, true);
  EXPECT_TRUE(hub.WantsObjects("/a/x"));
  EXPECT_FALSE(hub.WantsObjects("/b/x"));
  reader->Stop();
  hub.Publish(Puts("/b/x", 1, 1));
  EXPECT_FALSE(hub.WantsObjects("/a/x"));
}

TEST(WatchHubTest, SlowWatcherDoesNotHoldUpPublishOrOthers) {
  WatchHub hub;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> slow_events = 0;
  auto slow = hub.Add("/", 0,
                      [&](const std::vector<Event>& batch) {
                        released.wait();
                        slow_events += static_cast<int>(batch.size());
                      },
                      {});
  EventLog fast;
  auto other = hub.Add("/", 0, fast.Callback(), {});
  for (int64_t r = 1; r <= 100; ++r) hub.Publish(Puts("/k", r, r));  // returns while slow blocks
  EXPECT_EQ(fast.WaitFor(100).size(), 100u);
  EXPECT_LT(slow_events.load(), 100);
  release.set_value();
  slow->Stop();
  EXPECT_LE(slow_events.load(), 100);
}

TEST(WatchHubTest, StopWaitsForTheCallbackInProgress) {
  WatchHub hub;
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> finished = false;
  auto watcher = hub.Add("/", 0,
                         [&](const std::vector<Event>&) {
                           entered.set_value();
                           released.wait();
                           finished = true;
                         },
                         {});
  hub.Publish(Puts("/k", 1, 1));
  entered.get_future().wait();
  std::thread stopper([&] {
    watcher->Stop();
    EXPECT_TRUE(finished.load());
  });
  release.set_value();
  stopper.join();
}

TEST(WatchHubTest, WatcherMayOutliveTheHub) {
  EventLog log;
  std::unique_ptr<Watcher> watcher;
  {
    WatchHub hub;
    watcher = hub.Add("/", 0, log.Callback(), {});
    hub.Publish(Puts("/k", 1, 1));
    EXPECT_EQ(log.WaitFor(1).size(), 1u);
  }
  watcher->Stop();
  EXPECT_EQ(log.events().size(), 1u);
}

TEST(WatchHubTest, StoppedWatchersAreForgottenOnTheNextPublish) {
  WatchHub hub;
  EventLog kept_log;
  auto kept = hub.Add("/", 0, kept_log.Callback(), {});
  for (int i = 0; i < 50; ++i) {
    EventLog log;
    auto watcher = hub.Add("/", 0, log.Callback(), {});
    watcher->Stop();
    watcher.reset();  // the hub holds the last reference; Publish drops it
    hub.Publish(Puts("/k", i + 1, i + 1));
  }
  EXPECT_EQ(kept_log.WaitFor(50).size(), 50u);
  kept->Stop();
}

}  // namespace
}  // namespace flotilla::storage
