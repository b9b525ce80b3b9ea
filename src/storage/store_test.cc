// The Store contract, run against every backend.
#include "storage/store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "storage/etcd_cluster.h"
#include "storage/etcd_store.h"
#include "storage/test_util.h"

namespace flotilla::storage {
namespace {

using testing::EventLog;
using ::testing::HasSubstr;
using testing::SetValue;
using testing::TempDir;

// One etcd for the whole binary; each test has its own key prefix. etcd's
// revision counts every test's writes, so the tests check revisions relative
// to the one their store started at (Rev).
// Stopped, and its directory removed, when the binary exits (members are
// destroyed in reverse order: etcd first).
struct SharedEtcdMember {
  TempDir dir;
  std::unique_ptr<EtcdCluster> etcd;
};

EtcdCluster* SharedEtcd() {
  static SharedEtcdMember shared;
  if (!shared.etcd) {
    auto started = EtcdCluster::Start(shared.dir.path(), 1, std::chrono::seconds(60));
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    if (started.ok()) shared.etcd = std::move(started).value();
  }
  return shared.etcd.get();
}

class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    static int tests = 0;
    prefix_ = "/store-test-" + std::to_string(++tests);
    store_ = Open();
    ASSERT_NE(store_, nullptr);
    r0_ = store_->CurrentRevision();
  }

  std::unique_ptr<Store> Open(StoreOptions opts = {}) {
    if (opts.clock == nullptr) opts.clock = &clock_;
    if (GetParam() == "memory") return NewMemoryStore(opts);
    StatusOr<std::unique_ptr<Store>> store = Status::Internal("no backend " + GetParam());
    if (GetParam() == "sqlite") store = OpenSqliteStore(dir_.path() + "/state.db", opts);
    if (GetParam() == "etcd" && SharedEtcd() == nullptr) store = Status::Unavailable("no etcd");
    if (GetParam() == "etcd" && SharedEtcd() != nullptr) {
      store = OpenEtcdStore({.endpoints = SharedEtcd()->endpoints(),
                             .prefix = prefix_,
                             .compaction_interval = std::chrono::milliseconds(0),
                             .history_events = opts.history_events});
    }
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  // The revision of the store's n-th write in this test.
  int64_t Rev(int64_t n) const { return r0_ + n; }

  KeyValue MustCreate(const std::string& key, const std::string& value) {
    auto kv = store_->Create(key, SetValue(value));
    EXPECT_TRUE(kv.ok()) << kv.status().ToString();
    return kv.ok() ? *kv : KeyValue{};
  }

  // Expiry on the fake clock; etcd measures TTLs on its own, so a test of
  // expiry gives it a TTL of a second and waits for it.
  bool FakeTime() const { return GetParam() != "etcd"; }
  void PassTime(Duration d) {
    if (FakeTime()) clock_.Advance(d);
  }

  TempDir dir_;
  std::string prefix_;
  FakeClock clock_;
  std::unique_ptr<Store> store_;
  int64_t r0_ = 0;
};

TEST_P(StoreTest, CreateGetUpdateDelete) {
  EXPECT_EQ(store_->CurrentRevision(), Rev(0));
  KeyValue created = MustCreate("/registry/pods/ns/a", "v1");
  EXPECT_EQ(created.key, "/registry/pods/ns/a");
  EXPECT_EQ(created.value, "v1");
  EXPECT_EQ(created.create_revision, Rev(1));
  EXPECT_EQ(created.mod_revision, Rev(1));

  auto got = store_->Get("/registry/pods/ns/a");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->value, "v1");
  EXPECT_EQ(got->mod_revision, Rev(1));

  MustCreate("/registry/pods/ns/b", "other");
  auto updated = store_->Update("/registry/pods/ns/a", Rev(1), SetValue("v2"));
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ(updated->create_revision, Rev(1));
  EXPECT_EQ(updated->mod_revision, Rev(3));
  EXPECT_EQ(store_->Get("/registry/pods/ns/a")->value, "v2");

  auto deleted = store_->Delete("/registry/pods/ns/a", 0);
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted->value, "v2");
  EXPECT_EQ(deleted->create_revision, Rev(1));
  EXPECT_EQ(deleted->mod_revision, Rev(4));
  EXPECT_TRUE(store_->Get("/registry/pods/ns/a").status().Is(Reason::kNotFound));
  EXPECT_EQ(store_->CurrentRevision(), Rev(4));

  KeyValue again = MustCreate("/registry/pods/ns/a", "v3");
  EXPECT_EQ(again.create_revision, Rev(5));
  EXPECT_EQ(again.mod_revision, Rev(5));
}

TEST_P(StoreTest, ErrorsNameTheKeyAndWriteNothing) {
  MustCreate("/k/a", "v");
  Status exists = store_->Create("/k/a", SetValue("w")).status();
  EXPECT_TRUE(exists.Is(Reason::kAlreadyExists)) << exists.ToString();
  EXPECT_THAT(exists.message(), HasSubstr("/k/a"));

  Status missing = store_->Update("/k/missing", 0, SetValue("w")).status();
  EXPECT_TRUE(missing.Is(Reason::kNotFound)) << missing.ToString();
  EXPECT_THAT(missing.message(), HasSubstr("/k/missing"));
  Status get_missing = store_->Get("/k/missing").status();
  EXPECT_TRUE(get_missing.Is(Reason::kNotFound));
  EXPECT_THAT(get_missing.message(), HasSubstr("/k/missing"));
  EXPECT_TRUE(store_->Delete("/k/missing", 0).status().Is(Reason::kNotFound));

  EXPECT_EQ(store_->CurrentRevision(), Rev(1));
  EXPECT_EQ(store_->Get("/k/a")->value, "v");
}

TEST_P(StoreTest, StaleExpectedRevisionConflicts) {
  MustCreate("/k/a", "v1");
  ASSERT_TRUE(store_->Update("/k/a", Rev(1), SetValue("v2")).ok());

  Status stale = store_->Update("/k/a", Rev(1), SetValue("v3")).status();
  EXPECT_TRUE(stale.Is(Reason::kConflict)) << stale.ToString();
  EXPECT_THAT(stale.message(), HasSubstr("/k/a"));
  Status stale_delete = store_->Delete("/k/a", Rev(1)).status();
  EXPECT_TRUE(stale_delete.Is(Reason::kConflict)) << stale_delete.ToString();
  EXPECT_EQ(store_->Get("/k/a")->value, "v2");
  EXPECT_EQ(store_->CurrentRevision(), Rev(2));

  EXPECT_TRUE(store_->Update("/k/a", 0, SetValue("v4")).ok());  // unconditional
  EXPECT_TRUE(store_->Delete("/k/a", Rev(3)).ok());
}

TEST_P(StoreTest, MutationSeesRevisionAndCurrentValue) {
  MustCreate("/k/other", "x");
  int64_t seen_revision = 0;
  bool saw_current = true;
  auto created = store_->Create("/k/a", [&](int64_t rev, const std::optional<KeyValue>& cur) {
    seen_revision = rev;
    saw_current = cur.has_value();
    return StatusOr<Encoded>("rv=" + std::to_string(rev));
  });
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(seen_revision, Rev(2));
  EXPECT_FALSE(saw_current);
  EXPECT_EQ(created->value, "rv=" + std::to_string(Rev(2)));

  std::optional<KeyValue> current;
  auto updated = store_->Update("/k/a", 0, [&](int64_t rev, const std::optional<KeyValue>& cur) {
    current = cur;
    return StatusOr<Encoded>(cur->value + ",rv=" + std::to_string(rev));
  });
  ASSERT_TRUE(updated.ok());
  ASSERT_TRUE(current.has_value());
  EXPECT_EQ(current->value, "rv=" + std::to_string(Rev(2)));
  EXPECT_EQ(current->mod_revision, Rev(2));
  EXPECT_EQ(updated->value, "rv=" + std::to_string(Rev(2)) + ",rv=" + std::to_string(Rev(3)));
}

TEST_P(StoreTest, MutationErrorAbortsTheWrite) {
  MustCreate("/k/a", "v1");
  auto fail = [](int64_t, const std::optional<KeyValue>&) -> StatusOr<Encoded> {
    return Status::Invalid("spec.replicas: must be non-negative");
  };
  Status update = store_->Update("/k/a", 0, fail).status();
  EXPECT_TRUE(update.Is(Reason::kInvalid));
  EXPECT_EQ(update.message(), "spec.replicas: must be non-negative");
  EXPECT_TRUE(store_->Create("/k/b", fail).status().Is(Reason::kInvalid));
  EXPECT_EQ(store_->Get("/k/a")->value, "v1");
  EXPECT_TRUE(store_->Get("/k/b").status().Is(Reason::kNotFound));
  EXPECT_EQ(store_->CurrentRevision(), Rev(1));
  EXPECT_EQ(MustCreate("/k/c", "v").mod_revision, Rev(2));  // no revision was used up
}

TEST_P(StoreTest, ThrowingMutationIsAnInternalError) {
  auto thrower = [](int64_t, const std::optional<KeyValue>&) -> StatusOr<Encoded> {
    throw std::runtime_error("boom");
  };
  Status status = store_->Create("/k/a", thrower).status();
  EXPECT_TRUE(status.Is(Reason::kInternalError)) << status.ToString();
  EXPECT_THAT(status.message(), HasSubstr("boom"));
  EXPECT_EQ(MustCreate("/k/a", "v").mod_revision, Rev(1));  // the store still works
}

TEST_P(StoreTest, ListIsSortedFilteredAndPaged) {
  for (const char* key :
       {"/registry/pods/ns2/b", "/registry/services/ns1/a", "/registry/pods/ns1/b",
        "/registry/pods/ns1/a", "/registry/podsx/ns1/a", "/registry/pods/ns2/a"}) {
    MustCreate(key, key);
  }
  auto all = store_->List("/registry/pods/", {});
  ASSERT_TRUE(all.ok());
  std::vector<std::string> keys;
  for (const KeyValue& kv : all->items) keys.push_back(kv.key);
  EXPECT_THAT(keys, ::testing::ElementsAre("/registry/pods/ns1/a", "/registry/pods/ns1/b",
                                           "/registry/pods/ns2/a", "/registry/pods/ns2/b"));
  EXPECT_FALSE(all->more);
  EXPECT_EQ(all->revision, Rev(6));
  EXPECT_EQ(all->items[0].value, "/registry/pods/ns1/a");
  EXPECT_EQ(all->items[0].mod_revision, Rev(4));

  auto page1 = store_->List("/registry/pods/", {.limit = 3});
  ASSERT_EQ(page1->items.size(), 3u);
  EXPECT_TRUE(page1->more);
  auto page2 =
      store_->List("/registry/pods/", {.start_after = page1->items.back().key, .limit = 3});
  ASSERT_EQ(page2->items.size(), 1u);
  EXPECT_EQ(page2->items[0].key, "/registry/pods/ns2/b");
  EXPECT_FALSE(page2->more);

  auto exact = store_->List("/registry/pods/", {.start_after = "", .limit = 4});
  EXPECT_FALSE(exact->more);  // exactly `limit` items left
  auto before_prefix = store_->List("/registry/pods/ns2/", {.start_after = "/a"});
  EXPECT_EQ(before_prefix->items.size(), 2u);
  EXPECT_EQ(store_->List("", {})->items.size(), 6u);
  EXPECT_TRUE(store_->List("/registry/nothing/", {})->items.empty());

  // Shared: the same records, in the same pages, without copies.
  auto shared = store_->List("/registry/pods/", {.limit = 3, .shared = true});
  ASSERT_TRUE(shared.ok());
  EXPECT_TRUE(shared->items.empty());
  ASSERT_EQ(shared->shared_items.size(), 3u);
  EXPECT_TRUE(shared->more);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(shared->shared_items[i]->key, page1->items[i].key);
    EXPECT_EQ(shared->shared_items[i]->value, page1->items[i].value);
    EXPECT_EQ(shared->shared_items[i]->mod_revision, page1->items[i].mod_revision);
  }
}

TEST_P(StoreTest, WatchFromNowSeesPutsAndDeletesUnderPrefix) {
  MustCreate("/registry/pods/ns/old", "before");
  EventLog log;
  auto watcher = store_->Watch("/registry/pods/", 0, log.Callback());
  ASSERT_TRUE(watcher.ok());

  MustCreate("/registry/services/ns/s", "ignored");
  MustCreate("/registry/pods/ns/a", "v1");
  ASSERT_TRUE(store_->Update("/registry/pods/ns/a", 0, SetValue("v2")).ok());
  ASSERT_TRUE(store_->Delete("/registry/pods/ns/a", 0).ok());

  std::vector<Event> events = log.WaitFor(3);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, Event::Type::kPut);
  EXPECT_EQ(events[0].kv.value, "v1");
  EXPECT_EQ(events[0].kv.mod_revision, Rev(3));
  EXPECT_FALSE(events[0].prev.has_value());
  EXPECT_EQ(events[1].type, Event::Type::kPut);
  EXPECT_EQ(events[1].kv.value, "v2");
  ASSERT_TRUE(events[1].prev.has_value());
  EXPECT_EQ(events[1].prev->value, "v1");
  EXPECT_EQ(events[2].type, Event::Type::kDelete);
  EXPECT_EQ(events[2].kv.value, "v2");
  EXPECT_EQ(events[2].kv.mod_revision, Rev(5));
  EXPECT_EQ(events[2].kv.create_revision, Rev(3));
  ASSERT_TRUE(events[2].prev.has_value());
  EXPECT_EQ(events[2].prev->mod_revision, Rev(4));
}

TEST_P(StoreTest, WatchFromPastRevisionReplaysThenFollows) {
  for (int i = 1; i <= 5; ++i) MustCreate("/k/" + std::to_string(i), "v");
  EventLog log;
  auto watcher = store_->Watch("/k/", Rev(2), log.Callback());
  ASSERT_TRUE(watcher.ok());
  MustCreate("/k/6", "v");
  MustCreate("/k/7", "v");
  std::vector<Event> events = log.WaitFor(5);
  ASSERT_EQ(events.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(events[i].kv.mod_revision, Rev(i + 3));
    EXPECT_EQ(events[i].kv.key, "/k/" + std::to_string(i + 3));
  }
}

// Encoded::object goes with a put's live delivery to every watcher, and
// nowhere else: a replay from the history has none, nor does etcd's stream.
// SharesObjects tells a writer whether to build one: only while a watcher
// that reads them (WatchWithObjects) watches the key, and never on etcd.
TEST_P(StoreTest, AWritersObjectGoesWithItsLiveEventsOnly) {
  auto object = std::make_shared<const json::object>(json::object{{"n", 1}});
  auto with_object = [&](int64_t, const std::optional<KeyValue>&) -> StatusOr<Encoded> {
    return Encoded(R"({"n":1})", object);
  };
  ASSERT_TRUE(store_->Create("/k/old", with_object).ok());
  EventLog live, replayed;
  auto plain = store_->Watch("/k/", 0, [](const std::vector<Event>&) {});
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(store_->SharesObjects("/k/new")) << "no watcher reads objects";
  auto from_now = store_->WatchWithObjects("/k/", 0, live.Callback());
  ASSERT_TRUE(from_now.ok());
  const bool shares = GetParam() != "etcd";
  EXPECT_EQ(store_->SharesObjects("/k/new"), shares);
  EXPECT_FALSE(store_->SharesObjects("/other/new")) << "a key no such watcher watches";
  ASSERT_TRUE(store_->Create("/k/new", with_object).ok());
  ASSERT_TRUE(store_->Update("/k/new", 0, SetValue("plain")).ok());
  ASSERT_TRUE(store_->Delete("/k/new", 0).ok());
  std::vector<Event> events = live.WaitFor(3);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].object == object, shares);
  EXPECT_EQ(events[1].object, nullptr) << "a mutation that gave none";
  EXPECT_EQ(events[2].object, nullptr) << "a delete";
  auto after_old = store_->Watch("/k/", Rev(1), replayed.Callback());
  ASSERT_TRUE(after_old.ok());
  events = replayed.WaitFor(3);
  ASSERT_EQ(events.size(), 3u);
  for (const Event& e : events) EXPECT_EQ(e.object, nullptr) << e.kv.key;
}

TEST_P(StoreTest, WatchFromCompactedRevisionIsExpired) {
  for (int i = 1; i <= 5; ++i) MustCreate("/k/a" + std::to_string(i), "v");
  ASSERT_TRUE(store_->Update("/k/a1", 0, SetValue("w")).ok());
  ASSERT_TRUE(store_->Compact(Rev(3)).ok());
  EXPECT_EQ(store_->CompactedRevision(), Rev(3));

  Status expired = store_->Watch("/k/", Rev(2), [](const std::vector<Event>&) {}).status();
  EXPECT_TRUE(expired.Is(Reason::kExpired)) << expired.ToString();
  EventLog log;
  auto watcher = store_->Watch("/k/", Rev(3), log.Callback());
  ASSERT_TRUE(watcher.ok());
  EXPECT_EQ(log.WaitFor(3).size(), 3u);  // revisions 4, 5, 6
  EXPECT_EQ(log.events().front().kv.mod_revision, Rev(4));

  EXPECT_EQ(store_->Get("/k/a1")->value, "w");  // latest values survive
  EXPECT_EQ(store_->Get("/k/a2")->value, "v");
  EXPECT_TRUE(store_->Compact(Rev(2)).ok());  // already compacted: nothing to do
  EXPECT_EQ(store_->CompactedRevision(), Rev(3));
  EXPECT_TRUE(store_->Compact(Rev(100)).Is(Reason::kBadRequest));
}

TEST_P(StoreTest, HistoryIsBoundedByHistoryEvents) {
  store_.reset();
  store_ = Open({.history_events = 5});
  for (int i = 1; i <= 20; ++i) MustCreate("/k/" + std::to_string(i), "v");
  EXPECT_EQ(store_->CompactedRevision(), Rev(15));
  EXPECT_TRUE(store_->Watch("/k/", Rev(14), [](const std::vector<Event>&) {})
                  .status()
                  .Is(Reason::kExpired));
  EventLog log;
  auto watcher = store_->Watch("/k/", Rev(15), log.Callback());
  ASSERT_TRUE(watcher.ok());
  std::vector<Event> events = log.WaitFor(5);
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events.front().kv.mod_revision, Rev(16));
  EXPECT_EQ(store_->List("/k/", {})->items.size(), 20u);
}

TEST_P(StoreTest, HistoryIsBoundedInTime) {
  if (!FakeTime()) GTEST_SKIP() << "etcd's history is bounded by its compaction interval instead";
  for (int i = 1; i <= 3; ++i) MustCreate("/k/" + std::to_string(i), "v");
  clock_.Advance(std::chrono::minutes(4));
  MustCreate("/k/4", "v");
  EXPECT_EQ(store_->CompactedRevision(), Rev(0));  // nothing older than 5 minutes yet
  clock_.Advance(std::chrono::minutes(2));
  MustCreate("/k/5", "v");
  EXPECT_EQ(store_->CompactedRevision(), Rev(3));
  EXPECT_TRUE(
      store_->Watch("/k/", Rev(2), [](const std::vector<Event>&) {}).status().Is(Reason::kExpired));
  EventLog log;
  auto watcher = store_->Watch("/k/", Rev(3), log.Callback());
  ASSERT_TRUE(watcher.ok());
  std::vector<Event> events = log.WaitFor(2);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events.front().kv.mod_revision, Rev(4));
  EXPECT_EQ(store_->List("/k/", {})->items.size(), 5u);
  // And so on, write after write.
  for (int i = 6; i <= 8; ++i) {
    clock_.Advance(std::chrono::minutes(6));
    MustCreate("/k/" + std::to_string(i), "v");
    EXPECT_EQ(store_->CompactedRevision(), Rev(i - 1));
  }
}

TEST_P(StoreTest, StopFromInsideTheCallbackEndsDelivery) {
  std::atomic<int> calls = 0;
  std::promise<void> called;
  std::unique_ptr<Watcher> watcher;
  Mutex mu;
  MutexLock hold(mu);  // the callback waits until `watcher` is assigned
  auto result = store_->Watch("/k/", 0, [&](const std::vector<Event>&) {
    MutexLock lock(mu);
    watcher->Stop();
    if (++calls == 1) called.set_value();
  });
  ASSERT_TRUE(result.ok());
  watcher = std::move(result).value();
  hold.Unlock();

  EventLog witness;
  auto other = store_->Watch("/k/", 0, witness.Callback());
  ASSERT_TRUE(other.ok());
  for (int i = 0; i < 20; ++i) MustCreate("/k/" + std::to_string(i), "v");
  EXPECT_EQ(witness.WaitFor(20).size(), 20u);
  called.get_future().wait();
  watcher->Stop();  // from outside too: waits for a callback in progress
  EXPECT_EQ(calls.load(), 1);
}

TEST_P(StoreTest, NoCallbackAfterStopReturns) {
  EventLog stopped, witness;
  auto watcher = store_->Watch("/k/", 0, stopped.Callback());
  auto other = store_->Watch("/k/", 0, witness.Callback());
  ASSERT_TRUE(watcher.ok() && other.ok());
  MustCreate("/k/a", "v");
  EXPECT_EQ(stopped.WaitFor(1).size(), 1u);
  (*watcher)->Stop();
  MustCreate("/k/b", "v");
  EXPECT_EQ(witness.WaitFor(2).size(), 2u);
  EXPECT_EQ(stopped.events().size(), 1u);
}

TEST_P(StoreTest, ConcurrentWritersAndWatchers) {
  constexpr int kThreads = 8, kWrites = 100;
  EventLog all, evens;
  auto w1 = store_->Watch("/c/", 0, all.Callback());
  auto w2 = store_->Watch("/c/0", 0, evens.Callback());
  ASSERT_TRUE(w1.ok() && w2.ok());
  std::vector<std::vector<KeyValue>> acked(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::string key = "/c/" + std::to_string(t % 2) + "/" + std::to_string(t);
      auto kv = store_->Create(key, SetValue("0"));
      if (kv.ok()) acked[t].push_back(*kv);
      for (int i = 1; i < kWrites; ++i) {
        kv = store_->Update(key, acked[t].back().mod_revision, SetValue(std::to_string(i)));
        if (!kv.ok()) return;
        acked[t].push_back(*kv);
      }
    });
  }
  for (auto& t : threads) t.join();

  std::set<int64_t> revisions;
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(acked[t].size(), static_cast<size_t>(kWrites)) << "thread " << t;
    for (size_t i = 1; i < acked[t].size(); ++i) {
      EXPECT_GT(acked[t][i].mod_revision, acked[t][i - 1].mod_revision);
    }
    for (const KeyValue& kv : acked[t]) revisions.insert(kv.mod_revision);
    auto latest = store_->Get(acked[t].back().key);
    ASSERT_TRUE(latest.ok());
    EXPECT_EQ(latest->mod_revision, acked[t].back().mod_revision);
  }
  constexpr int kTotal = kThreads * kWrites;
  EXPECT_EQ(revisions.size(), static_cast<size_t>(kTotal));
  EXPECT_EQ(store_->CurrentRevision(), Rev(kTotal));

  std::vector<Event> events = all.WaitFor(kTotal);
  ASSERT_EQ(events.size(), static_cast<size_t>(kTotal));
  for (int i = 0; i < kTotal; ++i) EXPECT_EQ(events[i].kv.mod_revision, Rev(i + 1));
  std::vector<Event> even = evens.WaitFor(kTotal / 2);
  ASSERT_EQ(even.size(), static_cast<size_t>(kTotal / 2));
  for (size_t i = 1; i < even.size(); ++i) {
    EXPECT_GT(even[i].kv.mod_revision, even[i - 1].kv.mod_revision);
    EXPECT_TRUE(even[i].kv.key.starts_with("/c/0/"));
  }
}

TEST_P(StoreTest, KeysWithATtlExpireAsADeleteThatWatchersSee) {
  constexpr Duration kTtl = std::chrono::seconds(1);
  EventLog log;
  auto watcher = store_->Watch("/ev/", 0, log.Callback());
  ASSERT_TRUE(watcher.ok());
  ASSERT_TRUE(store_->Create("/ev/a", SetValue("a"), kTtl).ok());
  MustCreate("/ev/kept", "k");
  auto listed = store_->List("/ev/", {});
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->items.size(), 2u);

  PassTime(kTtl);
  std::vector<Event> events = log.WaitFor(3);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2].type, Event::Type::kDelete);
  EXPECT_EQ(events[2].kv.key, "/ev/a");
  EXPECT_EQ(events[2].kv.value, "a");
  EXPECT_EQ(events[2].kv.mod_revision, Rev(3));  // a write of its own
  EXPECT_TRUE(store_->Get("/ev/a").status().Is(Reason::kNotFound));
  listed = store_->List("/ev/", {});
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_EQ(listed->items[0].key, "/ev/kept");
  EXPECT_EQ(*store_->Count("/ev/"), 1);
  // Recreated without a TTL, the key stays.
  MustCreate("/ev/a", "again");
  EXPECT_TRUE(store_->Get("/ev/a").ok());
}

TEST_P(StoreTest, AWriteWithoutATtlTakesTheExpiryAway) {
  constexpr Duration kTtl = std::chrono::seconds(1);
  ASSERT_TRUE(store_->Create("/ev/a", SetValue("a"), kTtl).ok());
  ASSERT_TRUE(store_->Update("/ev/a", 0, SetValue("b")).ok());
  EventLog log;
  auto watcher = store_->Watch("/ev/", 0, log.Callback());
  ASSERT_TRUE(watcher.ok());
  // A key that expires after the first would have: once it is gone, the
  // first one's deadline has passed too.
  ASSERT_TRUE(store_->Create("/ev/sentinel", SetValue("s"), 2 * kTtl).ok());
  PassTime(2 * kTtl);
  std::vector<Event> events = log.WaitFor(2);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].type, Event::Type::kDelete);
  EXPECT_EQ(events[1].kv.key, "/ev/sentinel");
  auto a = store_->Get("/ev/a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->value, "b");
}

TEST_P(StoreTest, ARewriteWithATtlStartsItAgain) {
  if (!FakeTime()) GTEST_SKIP() << "etcd measures TTLs on its own clock; the fake one moves here";
  constexpr Duration kTtl = std::chrono::seconds(10);
  ASSERT_TRUE(store_->Create("/ev/a", SetValue("a"), kTtl).ok());
  clock_.Advance(std::chrono::seconds(6));
  ASSERT_TRUE(store_->Update("/ev/a", 0, SetValue("b"), kTtl).ok());
  EventLog log;
  auto watcher = store_->Watch("/ev/", 0, log.Callback());
  ASSERT_TRUE(watcher.ok());
  ASSERT_TRUE(store_->Create("/ev/sentinel", SetValue("s"), std::chrono::seconds(5)).ok());
  clock_.Advance(std::chrono::seconds(5));  // 11 s after the create, 5 after the update
  std::vector<Event> events = log.WaitFor(2);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].kv.key, "/ev/sentinel");
  EXPECT_TRUE(store_->Get("/ev/a").ok());
  clock_.Advance(std::chrono::seconds(5));
  events = log.WaitFor(3);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2].type, Event::Type::kDelete);
  EXPECT_EQ(events[2].kv.key, "/ev/a");
}

// On etcd the keys share a few leases (one per second of writes), and a
// lease's keys go in one revision: the watch must deliver every one of them.
// The watch starts first: on etcd's own clock, keys created first may expire
// before the last is written on a loaded machine.
TEST_P(StoreTest, ManyKeysExpireTogether) {
  constexpr int kKeys = 200;
  constexpr Duration kTtl = std::chrono::seconds(1);
  EventLog log;
  auto watcher = store_->Watch("/ev/", 0, log.Callback());
  ASSERT_TRUE(watcher.ok());
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_TRUE(store_->Create("/ev/" + std::to_string(i), SetValue("v"), kTtl).ok());
  }
  PassTime(kTtl);
  std::vector<Event> events = log.WaitFor(2 * kKeys);
  ASSERT_EQ(events.size(), static_cast<size_t>(2 * kKeys));
  std::set<std::string> deleted;
  for (const Event& e : events) {
    if (e.type == Event::Type::kDelete) deleted.insert(e.kv.key);
  }
  EXPECT_EQ(deleted.size(), static_cast<size_t>(kKeys));
  EXPECT_EQ(*store_->Count("/ev/"), 0);
  EXPECT_TRUE(store_->List("/ev/", {})->items.empty());
}

TEST_P(StoreTest, CountAndRemainingCountLiveKeysUnderThePrefix) {
  for (int i = 0; i < 7; ++i) MustCreate("/c/" + std::to_string(i), "v");
  MustCreate("/cx/0", "v");
  ASSERT_TRUE(store_->Delete("/c/3", 0).ok());
  EXPECT_EQ(*store_->Count("/c/"), 6);
  EXPECT_EQ(*store_->Count("/none/"), 0);
  auto page = store_->List("/c/", {.limit = 2});
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->more);
  EXPECT_EQ(page->remaining, 4);
  page = store_->List("/c/", {.start_after = "/c/4", .limit = 2});
  EXPECT_FALSE(page->more);
  EXPECT_EQ(page->remaining, 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::Values("memory", "sqlite", "etcd"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace flotilla::storage
