// What only the etcd backend has: members that fail, several stores (API
// servers) on one etcd, lists at a revision, and revisions set on read. The
// Store contract itself runs against etcd in store_test.cc.
#include "storage/etcd_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include "base/mutex.h"
#include "storage/etcd_cluster.h"
#include "storage/test_util.h"

namespace flotilla::storage {
namespace {

using testing::EventLog;
using testing::SetValue;
using testing::TempDir;

constexpr auto kStartTimeout = std::chrono::seconds(60);

// "rv=N" values, whose revision the store sets as it would a resourceVersion.
StatusOr<std::string> SetRv(std::string_view value, int64_t revision) {
  return "rv=" + std::to_string(revision);
}

Mutation WriteRv() {
  return [](int64_t rev, const std::optional<KeyValue>&) -> StatusOr<Encoded> {
    return "rv=" + std::to_string(rev);
  };
}

class EtcdStoreTest : public ::testing::Test {
 protected:
  void StartEtcd(int members) {
    auto started = EtcdCluster::Start(dir_.path() + "/etcd", members, kStartTimeout);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    etcd_ = std::move(started).value();
  }

  // With `rv`, values are "rv=N" and get their revision set on read.
  std::unique_ptr<Store> Open(std::chrono::milliseconds timeout = std::chrono::seconds(10),
                              bool rv = false) {
    auto store = OpenEtcdStore({.endpoints = etcd_->endpoints(),
                                .request_timeout = timeout,
                                .compaction_interval = std::chrono::milliseconds(0),
                                .set_revision = rv ? SetRv : nullptr});
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  TempDir dir_;
  std::unique_ptr<EtcdCluster> etcd_;
};

TEST(PrefixRangeEnd, IncrementsTheLastByteBelow0xff) {
  EXPECT_EQ(PrefixRangeEnd("/registry/"), "/registry0");
  EXPECT_EQ(PrefixRangeEnd(std::string("a\xff", 2)), "b");
  EXPECT_EQ(PrefixRangeEnd(std::string("\xff", 1)), std::string(1, '\0'));
}

TEST_F(EtcdStoreTest, UnreachableEtcdIsUnavailable) {
  auto store = OpenEtcdStore(
      {.endpoints = {"http://127.0.0.1:1"}, .request_timeout = std::chrono::milliseconds(300)});
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(store.status().Is(Reason::kServiceUnavailable)) << store.status().ToString();
  EXPECT_THAT(store.status().message(), ::testing::HasSubstr("127.0.0.1:1"));
  EXPECT_TRUE(OpenEtcdStore({}).status().Is(Reason::kBadRequest));
}

// Two API servers on one etcd: what one writes the other reads at once, and
// its watchers see every write, in order.
TEST_F(EtcdStoreTest, TwoStoresShareOneEtcd) {
  StartEtcd(1);
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a && b);
  EventLog log;
  auto watcher = b->Watch("/k/", 0, log.Callback());
  ASSERT_TRUE(watcher.ok());
  std::vector<int64_t> revisions;
  for (int i = 0; i < 50; ++i) {
    auto kv = a->Create("/k/" + std::to_string(i), SetValue("v" + std::to_string(i)));
    ASSERT_TRUE(kv.ok()) << kv.status().ToString();
    revisions.push_back(kv->mod_revision);
    auto read = b->Get(kv->key);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(read->value, "v" + std::to_string(i));
    EXPECT_EQ(read->mod_revision, kv->mod_revision);
  }
  std::vector<Event> events = log.WaitFor(50);
  ASSERT_EQ(events.size(), 50u);
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].kv.mod_revision, revisions[i]);
  // A write through b conflicts with a stale precondition from a.
  ASSERT_TRUE(b->Update("/k/0", 0, SetValue("b")).ok());
  EXPECT_TRUE(a->Update("/k/0", revisions[0], SetValue("a")).status().Is(Reason::kConflict));
}

// A write whose mutation was given another revision than etcd assigned (b
// wrote in between) is read with the right one, from the write's result, a
// Get, a List and a watch.
TEST_F(EtcdStoreTest, RevisionIsSetWhenTheGuessWasWrong) {
  StartEtcd(1);
  auto a = Open(std::chrono::seconds(10), true);
  auto b = Open(std::chrono::seconds(10), true);
  ASSERT_TRUE(a && b);
  EventLog log;
  auto watcher = a->Watch("/k/", 0, log.Callback());
  ASSERT_TRUE(watcher.ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(b->Create("/k/b" + std::to_string(i), WriteRv()).ok());
  // a has not seen b's writes: its guess is three revisions short.
  auto kv = a->Create("/k/a", WriteRv());
  ASSERT_TRUE(kv.ok());
  const std::string want = "rv=" + std::to_string(kv->mod_revision);
  EXPECT_EQ(kv->value, want);
  EXPECT_EQ(a->Get("/k/a")->value, want);
  EXPECT_EQ(b->Get("/k/a")->value, want);
  auto listed = b->List("/k/a", {});
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_EQ(listed->items[0].value, want);
  std::vector<Event> events = log.WaitFor(4);
  ASSERT_EQ(events.size(), 4u);
  for (const Event& e : events) EXPECT_EQ(e.kv.value, "rv=" + std::to_string(e.kv.mod_revision));
}

// A list comes from the cache when it has caught up with etcd, else from
// etcd: when another user of the same etcd (here a store on another prefix)
// wrote last, the cache cannot know it is current.
TEST_F(EtcdStoreTest, ListsComeFromTheCacheOnlyWhenItIsCurrent) {
  StartEtcd(1);
  auto store = Open();
  auto other = OpenEtcdStore({.endpoints = etcd_->endpoints(),
                              .prefix = "/other",
                              .compaction_interval = std::chrono::milliseconds(0)});
  ASSERT_TRUE(store && other.ok());
  auto mine = store->Create("/k/a", SetValue("a"));
  ASSERT_TRUE(mine.ok());
  auto cached = store->List("/k/", {});
  ASSERT_TRUE(cached.ok());
  EXPECT_EQ(cached->revision, mine->mod_revision);  // the cache's revision
  ASSERT_EQ(cached->items.size(), 1u);

  auto theirs = (*other)->Create("/k/b", SetValue("b"));
  ASSERT_TRUE(theirs.ok());
  auto read = store->List("/k/", {});
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->revision, theirs->mod_revision);  // etcd's, read from etcd
  ASSERT_EQ(read->items.size(), 1u);
  EXPECT_EQ(read->items[0].value, "a");
}

// The pages of one list are one snapshot: later pages, read at the first
// page's revision, show no write made in between; once etcd compacted that
// revision the list is Expired.
TEST_F(EtcdStoreTest, PagesAreReadAtTheFirstPagesRevision) {
  StartEtcd(1);
  auto store = Open();
  ASSERT_TRUE(store);
  for (const char* k : {"/k/a", "/k/b", "/k/c", "/k/d"})
    ASSERT_TRUE(store->Create(k, SetValue("old")).ok());
  auto first = store->List("/k/", {.limit = 2});
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(first->more);
  ASSERT_TRUE(store->Update("/k/c", 0, SetValue("new")).ok());
  ASSERT_TRUE(store->Delete("/k/d", 0).ok());
  ASSERT_TRUE(store->Create("/k/e", SetValue("new")).ok());
  auto second = store->List(
      "/k/", {.start_after = first->items.back().key, .limit = 2, .revision = first->revision});
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_EQ(second->items.size(), 2u);
  EXPECT_EQ(second->items[0].key, "/k/c");
  EXPECT_EQ(second->items[0].value, "old");
  EXPECT_EQ(second->items[1].key, "/k/d");
  EXPECT_FALSE(second->more);
  EXPECT_EQ(second->revision, first->revision);
  auto latest = store->List("/k/", {.start_after = "/k/b"});
  ASSERT_EQ(latest->items.size(), 2u);
  EXPECT_EQ(latest->items[1].key, "/k/e");

  ASSERT_TRUE(store->Compact(store->CurrentRevision()).ok());
  Status expired =
      store->List("/k/", {.start_after = "/k/b", .revision = first->revision}).status();
  EXPECT_TRUE(expired.Is(Reason::kExpired)) << expired.ToString();
  Status watch = store->Watch("/k/", first->revision, [](const std::vector<Event>&) {}).status();
  EXPECT_TRUE(watch.Is(Reason::kExpired)) << watch.ToString();
}

// Another server's compaction (through compact_rev_key, as the compactor
// writes it) reaches this store's watch cache.
TEST_F(EtcdStoreTest, CompactionBySomeoneElseReachesTheCache) {
  StartEtcd(1);
  auto compactor = OpenEtcdStore(
      {.endpoints = etcd_->endpoints(), .compaction_interval = std::chrono::milliseconds(200)});
  ASSERT_TRUE(compactor.ok());
  auto store = Open();
  ASSERT_TRUE(store);
  int64_t first = 0;
  for (int i = 0; i < 5; ++i) {
    auto kv = store->Create("/k/" + std::to_string(i), SetValue("v"));
    ASSERT_TRUE(kv.ok());
    if (first == 0) first = kv->mod_revision;
  }
  // The compactor compacts to what it saw one interval before; poll for it
  // (a condition, not a time).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (store->CompactedRevision() < first && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_TRUE(store->Update("/k/0", 0, SetValue("again")).ok());
  }
  EXPECT_GE(store->CompactedRevision(), first);
  EXPECT_TRUE(store->Watch("/k/", first - 1, [](const std::vector<Event>&) {})
                  .status()
                  .Is(Reason::kExpired));
  // The key the compactors coordinate on is no object: lists leave it out.
  auto all = store->List("", {});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->items.size(), 5u);
  for (const KeyValue& kv : all->items) EXPECT_TRUE(kv.key.starts_with("/k/")) << kv.key;
}

// The watch stream breaks when etcd goes away; the cache resumes from its
// last revision, so a watcher sees every write after the restart exactly once.
TEST_F(EtcdStoreTest, WatchResumesAfterEtcdRestarts) {
  StartEtcd(1);
  auto store = Open(std::chrono::milliseconds(500));
  ASSERT_TRUE(store);
  EventLog log;
  auto watcher = store->Watch("/k/", 0, log.Callback());
  ASSERT_TRUE(watcher.ok());
  ASSERT_TRUE(store->Create("/k/before", SetValue("v")).ok());
  etcd_->Kill(0);
  Status down = store->Create("/k/down", SetValue("v")).status();
  EXPECT_TRUE(down.Is(Reason::kServiceUnavailable) || down.Is(Reason::kTimeout)) << down.ToString();
  ASSERT_TRUE(etcd_->Restart(0, kStartTimeout).ok());
  std::vector<int64_t> revisions;
  for (int i = 0; i < 5; ++i) {
    StatusOr<KeyValue> kv = Status::Unavailable("");
    // The first writes may still find the channel reconnecting.
    for (int attempt = 0; attempt < 100 && !kv.ok(); ++attempt) {
      kv = store->Create("/k/after" + std::to_string(i), SetValue("v"));
    }
    ASSERT_TRUE(kv.ok()) << kv.status().ToString();
    revisions.push_back(kv->mod_revision);
  }
  std::vector<Event> events = log.WaitFor(6);
  ASSERT_EQ(events.size(), 6u);
  EXPECT_EQ(events[0].kv.key, "/k/before");
  for (int i = 0; i < 5; ++i) EXPECT_EQ(events[i + 1].kv.mod_revision, revisions[i]);
}

// kill -9 of one member of three (the one the store talks to) while four
// writers make 1,000 writes, each retried until acknowledged: all 1,000 are
// there afterwards, each acknowledged one with its value and revision; with
// two members down writes fail with a 5xx and leave nothing partial behind.
TEST_F(EtcdStoreTest, MemberLossLosesNoAcknowledgedWrite) {
  StartEtcd(3);
  auto store = Open(std::chrono::seconds(5));
  ASSERT_TRUE(store);
  constexpr int kWriters = 4, kPerWriter = 250;
  Mutex mu;
  std::map<std::string, int64_t> acked;  // key -> revision
  std::set<std::string> unknown;         // a failed attempt had been applied
  std::atomic<int> done = 0;
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kPerWriter; ++i) {
        std::string key = "/k/" + std::to_string(w) + "-" + std::to_string(i);
        // Each write is retried until it is acknowledged (a client's
        // retry), so that all 1,000 end up written.
        for (int attempt = 0; attempt < 200; ++attempt) {
          auto kv = store->Create(key, SetValue(key));
          MutexLock lock(mu);
          if (kv.ok()) {
            acked[key] = kv->mod_revision;
            break;
          }
          // An attempt whose outcome was unknown (its connection died) had
          // been applied after all.
          if (kv.status().Is(Reason::kAlreadyExists)) {
            unknown.insert(key);
            break;
          }
        }
        ++done;
      }
    });
  }
  while (done.load() < kWriters * kPerWriter / 3) std::this_thread::yield();
  etcd_->Kill(0);  // the member the store's channel is connected to
  for (auto& t : writers) t.join();
  EXPECT_EQ(acked.size() + unknown.size(), static_cast<size_t>(kWriters * kPerWriter));
  std::cout << acked.size() << " writes acknowledged, " << unknown.size()
            << " applied with their acknowledgement lost\n";
  for (const std::string& key : unknown) {
    auto kv = store->Get(key);
    ASSERT_TRUE(kv.ok()) << key << ": " << kv.status().ToString();
    EXPECT_EQ(kv->value, key);
  }
  for (const auto& [key, rev] : acked) {
    auto kv = store->Get(key);
    ASSERT_TRUE(kv.ok()) << key << ": " << kv.status().ToString();
    EXPECT_EQ(kv->value, key);
    EXPECT_EQ(kv->mod_revision, rev);
  }
  auto all = store->List("/k/", {});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->items.size(), static_cast<size_t>(kWriters * kPerWriter));
  for (const KeyValue& kv : all->items) EXPECT_EQ(kv.value, kv.key);

  etcd_->Kill(2);  // two of three down: no quorum
  auto lonely = OpenEtcdStore({.endpoints = {etcd_->endpoints()[1]},
                               .request_timeout = std::chrono::seconds(2),
                               .compaction_interval = std::chrono::milliseconds(0)});
  // Without quorum even the first read fails: the store cannot open.
  ASSERT_FALSE(lonely.ok());
  EXPECT_TRUE(lonely.status().Is(Reason::kServiceUnavailable)) << lonely.status().ToString();
  Status write = store->Create("/k/no-quorum", SetValue("/k/no-quorum")).status();
  EXPECT_TRUE(write.Is(Reason::kServiceUnavailable) || write.Is(Reason::kTimeout))
      << write.ToString();
  ASSERT_TRUE(etcd_->Restart(0, kStartTimeout).ok());
  auto after = store->Get("/k/no-quorum");
  // Either the write was never applied, or (its outcome having been unknown)
  // it is there whole.
  if (after.ok())
    EXPECT_EQ(after->value, "/k/no-quorum");
  else
    EXPECT_TRUE(after.status().Is(Reason::kNotFound)) << after.status().ToString();
}

}  // namespace
}  // namespace flotilla::storage
