#include "runtime/informer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "runtime/fake_client.h"
#include "runtime/test_util.h"

namespace flotilla::runtime {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using testing::Eventually;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

using testing::kConfigMaps;

json::object ConfigMap(const std::string& ns, const std::string& name, const std::string& value,
                       json::object labels = {}) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", ns}, {"labels", std::move(labels)}}},
          {"data", {{"v", value}}}};
}

std::string Rv(const ObjectPtr& obj) { return ResourceVersionOf(*obj); }

// Records what handlers see as "add ns/a@rv", "update ns/a@rv1->rv2",
// "delete ns/a".
class Recorder {
 public:
  EventHandler Handler() {
    return {[this](const ObjectPtr& o) { Push("add " + ObjectKey(*o) + "@" + Rv(o)); },
            [this](const ObjectPtr& o, const ObjectPtr& n) {
              Push("update " + ObjectKey(*n) + "@" + Rv(o) + "->" + Rv(n));
            },
            [this](const ObjectPtr& o) { Push("delete " + ObjectKey(*o)); }};
  }
  std::vector<std::string> Take() {
    MutexLock lock(mu_);
    return std::exchange(events_, {});
  }
  size_t Size() {
    MutexLock lock(mu_);
    return events_.size();
  }

 private:
  void Push(std::string e) {
    MutexLock lock(mu_);
    events_.push_back(std::move(e));
  }
  Mutex mu_;
  std::vector<std::string> events_;
};

class InformerTest : public ::testing::Test {
 protected:
  std::string Create(const std::string& ns, const std::string& name, const std::string& v,
                     json::object labels = {}) {
    auto made = client_.Create(kConfigMaps, ns, ConfigMap(ns, name, v, std::move(labels)));
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    return made.ok() ? ResourceVersionOf(*made) : "";
  }
  std::string Update(const std::string& ns, const std::string& name, const std::string& v) {
    auto made = client_.Update(kConfigMaps, ns, ConfigMap(ns, name, v));
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    return made.ok() ? ResourceVersionOf(*made) : "";
  }
  void Delete(const std::string& ns, const std::string& name) {
    EXPECT_TRUE(client_.Delete(kConfigMaps, ns, name).ok());
  }
  // key -> resourceVersion, as the server has it and as the cache has it.
  std::map<std::string, std::string> ServerState() {
    std::map<std::string, std::string> out;
    auto list = client_.List(kConfigMaps, "", {});
    EXPECT_TRUE(list.ok());
    for (const auto& item : list->items) out[ObjectKey(item)] = ResourceVersionOf(item);
    return out;
  }
  static std::map<std::string, std::string> CacheState(const Informer& informer) {
    std::map<std::string, std::string> out;
    for (const auto& obj : informer.cache().List()) out[ObjectKey(*obj)] = Rv(obj);
    return out;
  }
  std::unique_ptr<Informer> StartInformer(InformerOptions options = {}) {
    auto informer = std::make_unique<Informer>(client_, kConfigMaps, clock_, options);
    informer->AddEventHandler(recorder_.Handler());
    informer->Start();
    EXPECT_TRUE(informer->WaitForSync());
    // Tests that steer the watch need it open.
    EXPECT_TRUE(Eventually([&] { return client_.OpenWatches() == 1; }));
    return informer;
  }
  bool CacheMatchesServer(const Informer& informer) {
    return Eventually([&] { return CacheState(informer) == ServerState(); });
  }

  FakeClock clock_;
  FakeClient client_{clock_};
  Recorder recorder_;
};

TEST_F(InformerTest, DeliversTheListThenEveryCreateUpdateDelete) {
  std::string a1 = Create("ns", "a", "1");
  std::string b1 = Create("ns", "b", "1");
  auto informer = StartInformer();
  EXPECT_TRUE(informer->HasSynced());
  EXPECT_THAT(recorder_.Take(), ElementsAre("add ns/a@" + a1, "add ns/b@" + b1));

  std::string c1 = Create("other", "c", "1");
  std::string a2 = Update("ns", "a", "2");
  Delete("ns", "b");
  ASSERT_TRUE(Eventually([&] { return recorder_.Size() == 3; }));
  EXPECT_THAT(recorder_.Take(),
              ElementsAre("add other/c@" + c1, "update ns/a@" + a1 + "->" + a2, "delete ns/b"));
  EXPECT_TRUE(CacheMatchesServer(*informer));
  EXPECT_EQ(informer->Stats().lists, 1u);
  EXPECT_EQ(informer->Stats().events, 3u);
}

TEST_F(InformerTest, ExpiredWatchRelistsAndDeliversOnlyTheDifference) {
  std::string a1 = Create("ns", "a", "1");
  Create("ns", "b", "1");
  std::string c1 = Create("ns", "c", "1");
  auto informer = StartInformer();
  recorder_.Take();
  std::string a2 = Update("ns", "a", "2");  // delivered by the watch as usual
  ASSERT_TRUE(Eventually([&] { return recorder_.Size() == 1; }));
  recorder_.Take();

  client_.PauseWatches();  // what follows never reaches the watch
  std::string a3 = Update("ns", "a", "3");
  Delete("ns", "b");
  std::string d1 = Create("ns", "d", "1");
  Create("ns", "e", "1");
  Delete("ns", "e");
  Update("ns", "c", "2");
  std::string c3 = Update("ns", "c", "3");
  client_.ExpireWatches();
  client_.ResumeWatches();

  ASSERT_TRUE(CacheMatchesServer(*informer));
  ASSERT_TRUE(Eventually([&] { return recorder_.Size() == 4; }));
  EXPECT_THAT(recorder_.Take(),
              UnorderedElementsAre("update ns/a@" + a2 + "->" + a3, "delete ns/b", "add ns/d@" + d1,
                                   "update ns/c@" + c1 + "->" + c3));
  EXPECT_EQ(informer->Stats().lists, 2u);

  // And the new watch (from the relist's resourceVersion) carries on.
  std::string a4 = Update("ns", "a", "4");
  ASSERT_TRUE(Eventually([&] { return recorder_.Size() == 1; }));
  EXPECT_THAT(recorder_.Take(), ElementsAre("update ns/a@" + a3 + "->" + a4));
}

TEST_F(InformerTest, BrokenStreamRelists) {
  Create("ns", "a", "1");
  auto informer = StartInformer();
  recorder_.Take();
  client_.PauseWatches();
  Delete("ns", "a");
  std::string b1 = Create("ns", "b", "1");
  client_.BreakWatches();
  client_.ResumeWatches();
  ASSERT_TRUE(CacheMatchesServer(*informer));
  ASSERT_TRUE(Eventually([&] { return recorder_.Size() == 2; }));
  EXPECT_THAT(recorder_.Take(), UnorderedElementsAre("delete ns/a", "add ns/b@" + b1));
  EXPECT_EQ(informer->Stats().lists, 2u);
}

TEST_F(InformerTest, CleanlyClosedWatchResumesFromLastResourceVersionWithoutRelisting) {
  std::string a1 = Create("ns", "a", "1");
  auto informer = StartInformer();
  recorder_.Take();
  client_.PauseWatches();
  std::string a2 = Update("ns", "a", "2");
  std::string b1 = Create("ns", "b", "1");
  client_.CloseWatches();  // drops the two undelivered events
  client_.ResumeWatches();
  ASSERT_TRUE(Eventually([&] { return recorder_.Size() == 2; }));
  EXPECT_THAT(recorder_.Take(), ElementsAre("update ns/a@" + a1 + "->" + a2, "add ns/b@" + b1));
  EXPECT_EQ(informer->Stats().lists, 1u);
  EXPECT_TRUE(Eventually([&] { return informer->Stats().watches == 2; }));
}

TEST_F(InformerTest, WatchFromCompactedResourceVersionRelists) {
  Create("ns", "a", "1");
  auto informer = StartInformer();
  recorder_.Take();
  client_.PauseWatches();
  std::string b1 = Create("ns", "b", "1");
  // Compacted before the watch closes: the informer's next watch, started
  // as soon as this one ends, gets 410 (the other order let it resume in
  // between and see b1 without relisting).
  client_.Compact();
  client_.CloseWatches();
  client_.ResumeWatches();
  ASSERT_TRUE(Eventually([&] { return recorder_.Size() == 1; }));
  EXPECT_THAT(recorder_.Take(), ElementsAre("add ns/b@" + b1));
  EXPECT_TRUE(CacheMatchesServer(*informer));
  EXPECT_EQ(informer->Stats().lists, 2u);
}

TEST_F(InformerTest, ResyncRedeliversCachedObjectsOnTheClock) {
  std::string a1 = Create("ns", "a", "1");
  InformerOptions options;
  options.resync_period = 30s;
  auto informer = StartInformer(options);
  recorder_.Take();
  clock_.Advance(29s);
  EXPECT_EQ(recorder_.Size(), 0u);
  clock_.Advance(1s);
  ASSERT_TRUE(Eventually([&] { return recorder_.Size() == 1; }));
  EXPECT_THAT(recorder_.Take(), ElementsAre("update ns/a@" + a1 + "->" + a1));
  clock_.Advance(30s);
  ASSERT_TRUE(Eventually([&] { return recorder_.Size() == 1; }));
  EXPECT_EQ(informer->Stats().resyncs, 2u);
}

TEST_F(InformerTest, FailedListsAreRetriedWithBackoff) {
  Create("ns", "a", "1");
  client_.InjectError(FakeClient::Verb::kList, Status::Unavailable("etcd is down"), 2);
  Informer informer(client_, kConfigMaps, clock_);
  informer.AddEventHandler(recorder_.Handler());
  informer.Start();
  auto lists = [&] {
    int n = 0;
    for (const auto& a : client_.Actions()) n += a.verb == FakeClient::Verb::kList;
    return n;
  };
  // The first failure is retried at once; the second waits 800 ms, on a
  // timer of the clock.
  ASSERT_TRUE(Eventually([&] { return lists() == 2; }));
  ASSERT_TRUE(Eventually([&] { return clock_.timers().next_deadline() == clock_.Now() + 800ms; }));
  EXPECT_FALSE(informer.HasSynced());
  clock_.Advance(799ms);
  EXPECT_FALSE(informer.HasSynced());
  clock_.Advance(1ms);
  EXPECT_TRUE(informer.WaitForSync());
  EXPECT_EQ(informer.Stats().list_failures, 2u);
  EXPECT_EQ(recorder_.Size(), 1u);
}

// Issue 37: a member of an older Kubernetes that does not serve the
// resource answers its list NotFound. The informer says so, tells its
// handlers the cache is as complete as it gets, and lists again only after
// not_served_retry: no loop of lists.
TEST_F(InformerTest, AResourceTheServerDoesNotServeIsToldOnceAndTriedAgainLater) {
  Create("ns", "a", "1");
  client_.InjectError(FakeClient::Verb::kList,
                      Status::NotFound("the server could not find the requested resource"), 2);
  Informer informer(client_, kConfigMaps, clock_, {.not_served_retry = std::chrono::minutes(5)});
  std::atomic<int> synced = 0;
  informer.AddEventHandler({.on_synced = [&] { ++synced; }});
  EXPECT_TRUE(informer.Served());
  informer.Start();
  auto lists = [&] {
    int n = 0;
    for (const auto& a : client_.Actions()) n += a.verb == FakeClient::Verb::kList;
    return n;
  };
  ASSERT_TRUE(Eventually([&] { return !informer.Served() && synced == 1; }));
  ASSERT_TRUE(Eventually([&] { return clock_.timers().next_deadline() == clock_.Now() + 5min; }));
  EXPECT_EQ(lists(), 1);
  EXPECT_FALSE(informer.HasSynced());
  clock_.Advance(5min);
  // Still not served: one more list, the next one five minutes later.
  ASSERT_TRUE(Eventually([&] { return lists() == 2; }));
  ASSERT_TRUE(Eventually([&] { return clock_.timers().next_deadline() == clock_.Now() + 5min; }));
  EXPECT_FALSE(informer.Served());
  // The member was upgraded: the next list succeeds, and on_synced is told
  // again (the cache has data now: a controller re-checks with it).
  clock_.Advance(5min);
  ASSERT_TRUE(informer.WaitForSync());
  EXPECT_TRUE(informer.Served());
  EXPECT_EQ(informer.cache().List().size(), 1u);
  ASSERT_TRUE(Eventually([&] { return synced == 2; }));
}

// A resource that starts being served (a CRD established in a member):
// RetryNotServed lists at once instead of after not_served_retry.
TEST_F(InformerTest, RetryNotServedListsAtOnce) {
  Create("ns", "a", "1");
  client_.InjectError(FakeClient::Verb::kList,
                      Status::NotFound("the server could not find the requested resource"), 1);
  Informer informer(client_, kConfigMaps, clock_, {.not_served_retry = std::chrono::minutes(5)});
  informer.RetryNotServed();  // served as far as it knows: nothing to do
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return clock_.timers().next_deadline() == clock_.Now() + 5min; }));
  EXPECT_FALSE(informer.Served());
  informer.RetryNotServed();
  ASSERT_TRUE(informer.WaitForSync());  // the clock never moved
  EXPECT_TRUE(informer.Served());
  EXPECT_EQ(informer.cache().List().size(), 1u);
}

// A server told to serve a resource publishes it a moment later (longer
// on a busy machine): after RetryNotServed, a list still answered NotFound
// is tried again with backoff, not after not_served_retry.
TEST_F(InformerTest, AfterRetryNotServedTheServerIsGivenTimeToCatchUp) {
  Create("ns", "a", "1");
  client_.InjectError(FakeClient::Verb::kList,
                      Status::NotFound("the server could not find the requested resource"), 3);
  Informer informer(client_, kConfigMaps, clock_, {.not_served_retry = std::chrono::minutes(5)});
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return clock_.timers().next_deadline() == clock_.Now() + 5min; }));
  informer.RetryNotServed();
  // Still NotFound: again after 800 ms, then 1.6 s, and the third is served.
  ASSERT_TRUE(Eventually([&] { return clock_.timers().next_deadline() == clock_.Now() + 800ms; }));
  EXPECT_FALSE(informer.Served());
  clock_.Advance(800ms);
  ASSERT_TRUE(Eventually([&] { return clock_.timers().next_deadline() == clock_.Now() + 1600ms; }));
  EXPECT_FALSE(informer.HasSynced());
  clock_.Advance(1600ms);
  ASSERT_TRUE(informer.WaitForSync());
  EXPECT_TRUE(informer.Served());
  EXPECT_EQ(informer.cache().List().size(), 1u);
}

// A FakeClient whose lists wait until the test opens the gate.
class GatedListClient : public FakeClient {
 public:
  using FakeClient::FakeClient;

  StatusOr<client::ObjectList> List(const client::ResourceRef& res, const std::string& ns,
                                    const client::ListOptions& opts) override {
    {
      MutexLock lock(gate_mu_);
      ++arrived_;
      gate_cv_.Wait(lock, [&]() REQUIRES(gate_mu_) { return open_; });
    }
    return FakeClient::List(res, ns, opts);
  }
  int Arrived() {
    MutexLock lock(gate_mu_);
    return arrived_;
  }
  void Open() {
    MutexLock lock(gate_mu_);
    open_ = true;
    gate_cv_.NotifyAll();
  }

 private:
  Mutex gate_mu_;
  CondVar gate_cv_;
  int arrived_ GUARDED_BY(gate_mu_) = 0;
  bool open_ GUARDED_BY(gate_mu_) = false;
};

// A member's informer on a custom kind lists while the member is still
// establishing the kind's definition: the server answers NotFound, and
// the definition's Established (RetryNotServed) comes while that list is
// under way, when the informer still holds the resource served. It counts:
// the list that finds the resource not served is followed by another at
// once, not after not_served_retry (the informer would wait five minutes).
TEST_F(InformerTest, RetryNotServedDuringAListCountsIfTheListFindsItNotServed) {
  GatedListClient gated(clock_);
  ASSERT_TRUE(gated.Create(kConfigMaps, "ns", ConfigMap("ns", "a", "1")).ok());
  gated.InjectError(FakeClient::Verb::kList,
                    Status::NotFound("the server could not find the requested resource"), 1);
  Informer informer(gated, kConfigMaps, clock_, {.not_served_retry = std::chrono::minutes(5)});
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return gated.Arrived() == 1; }));
  EXPECT_TRUE(informer.Served());
  informer.RetryNotServed();
  gated.Open();
  ASSERT_TRUE(Eventually([&] { return informer.HasSynced(); }));  // the clock never moved
  EXPECT_TRUE(informer.Served());
  EXPECT_EQ(gated.Arrived(), 2);
  EXPECT_EQ(informer.cache().List().size(), 1u);
}

TEST_F(InformerTest, LabelSelectedInformerSeesObjectsLeaveTheSelector) {
  Create("ns", "a", "1", {{"app", "web"}});
  Create("ns", "b", "1", {{"app", "db"}});
  InformerOptions options;
  options.label_selector = "app=web";
  auto informer = StartInformer(options);
  EXPECT_THAT(informer->cache().Keys(), ElementsAre("ns/a"));
  recorder_.Take();
  json::object relabelled = ConfigMap("ns", "a", "1", {{"app", "db"}});
  ASSERT_TRUE(client_.Update(kConfigMaps, "ns", relabelled).ok());
  ASSERT_TRUE(Eventually([&] { return recorder_.Size() == 1; }));
  EXPECT_THAT(recorder_.Take(), ElementsAre("delete ns/a"));
  EXPECT_THAT(informer->cache().Keys(), IsEmpty());
}

TEST_F(InformerTest, TransformedObjectsAreWhatTheCacheAndHandlersHold) {
  std::string a1 = Create("ns", "a", "1");
  InformerOptions options;
  options.transform = [](const json::object& obj) {
    json::object view = obj;
    view.erase("data");
    return view;
  };
  std::vector<ObjectPtr> seen;
  Mutex mu;
  auto informer = std::make_unique<Informer>(client_, kConfigMaps, clock_, options);
  informer->AddEventHandler(recorder_.Handler());
  informer->AddEventHandler({.on_add =
                                 [&](const ObjectPtr& o) {
                                   MutexLock lock(mu);
                                   seen.push_back(o);
                                 },
                             .on_update =
                                 [&](const ObjectPtr&, const ObjectPtr& o) {
                                   MutexLock lock(mu);
                                   seen.push_back(o);
                                 }});
  informer->Start();
  ASSERT_TRUE(informer->WaitForSync());
  std::string b1 = Create("ns", "b", "1");
  std::string a2 = Update("ns", "a", "2");
  // Handlers run one after the other for each event: wait for the last.
  ASSERT_TRUE(Eventually([&] {
    MutexLock lock(mu);
    return seen.size() == 3;  // listed, then watched
  }));
  EXPECT_THAT(recorder_.Take(),
              ElementsAre("add ns/a@" + a1, "add ns/b@" + b1, "update ns/a@" + a1 + "->" + a2));
  MutexLock lock(mu);
  for (const ObjectPtr& o : seen) EXPECT_EQ(o->if_contains("data"), nullptr) << ToJson(*o);
  for (const ObjectPtr& o : informer->cache().List()) {
    EXPECT_EQ(o->if_contains("data"), nullptr) << ToJson(*o);
    EXPECT_NE(Find(*o, "metadata.uid"), nullptr);
  }
  EXPECT_TRUE(CacheMatchesServer(*informer));
}

TEST_F(InformerTest, LateHandlerGetsTheCacheAsAddsAndThrowingHandlerIsContained) {
  std::string a1 = Create("ns", "a", "1");
  auto informer = StartInformer();
  Recorder late;
  informer->AddEventHandler(late.Handler());
  EXPECT_THAT(late.Take(), ElementsAre("add ns/a@" + a1));
  informer->AddEventHandler({[](const ObjectPtr&) { throw std::runtime_error("boom"); }, {}, {}});
  std::string b1 = Create("ns", "b", "1");
  ASSERT_TRUE(Eventually([&] { return late.Size() == 1; }));
  EXPECT_THAT(late.Take(), ElementsAre("add ns/b@" + b1));
}

TEST_F(InformerTest, SyncedIsToldOnceAfterTheFirstListAndAtOnceToLateHandlers) {
  Create("ns", "a", "1");
  Informer informer(client_, kConfigMaps, clock_);
  std::atomic<int> synced = 0;
  std::atomic<size_t> cached_when_synced = 0;
  informer.AddEventHandler({.on_synced = [&] {
    cached_when_synced = informer.cache().Size();
    ++synced;
  }});
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync());
  ASSERT_TRUE(Eventually([&] { return synced == 1; }));
  EXPECT_EQ(cached_when_synced, 1u);
  std::atomic<int> late = 0;
  informer.AddEventHandler({.on_synced = [&] { ++late; }});
  EXPECT_EQ(late, 1);
  // A later relist (an expired watch) is not a first sync.
  ASSERT_TRUE(Eventually([&] { return client_.OpenWatches() == 1; }));
  client_.ExpireWatches();
  Create("ns", "b", "1");
  ASSERT_TRUE(Eventually([&] { return informer.cache().Size() == 2; }));
  EXPECT_EQ(synced, 1);
  informer.Stop();
}

TEST_F(InformerTest, ListerReadsThroughIndexes) {
  json::object owned = ConfigMap("ns", "child", "1", {{"tier", "web"}});
  EnsureObject(owned, "metadata")["ownerReferences"] =
      json::array{json::object{{"uid", "owner-1"}, {"kind", "Deployment"}, {"name", "d"}}};
  ASSERT_TRUE(client_.Create(kConfigMaps, "ns", owned).ok());
  Create("ns", "plain", "1", {{"tier", "db"}});
  Create("other", "x", "1", {{"tier", "web"}});
  auto informer = StartInformer();
  Lister lister = informer->lister();
  ASSERT_NE(lister.Get("ns", "child"), nullptr);
  EXPECT_EQ(lister.Get("ns", "missing"), nullptr);
  auto keys = [](const std::vector<ObjectPtr>& objs) {
    std::vector<std::string> out;
    for (const auto& o : objs) out.push_back(ObjectKey(*o));
    return out;
  };
  EXPECT_THAT(keys(lister.List("ns")), ElementsAre("ns/child", "ns/plain"));
  EXPECT_THAT(keys(lister.List()), ElementsAre("ns/child", "ns/plain", "other/x"));
  EXPECT_THAT(keys(lister.List("", *api::LabelSelector::Parse("tier=web"))),
              ElementsAre("ns/child", "other/x"));
  EXPECT_THAT(keys(lister.ByOwner("owner-1")), ElementsAre("ns/child"));
  EXPECT_THAT(keys(lister.ByLabel("tier", "db")), ElementsAre("ns/plain"));
  EXPECT_EQ(informer->cache().CountByIndex(kLabelIndex, "tier=web"), 2u);
  EXPECT_EQ(informer->cache().CountByIndex(kLabelIndex, "tier=none"), 0u);
  EXPECT_EQ(informer->cache().CountByIndex("no-such-index", "tier=web"), 0u);
  Delete("ns", "child");
  ASSERT_TRUE(Eventually([&] { return lister.ByOwner("owner-1").empty(); }));
  EXPECT_THAT(keys(lister.ByLabel("tier", "web")), ElementsAre("other/x"));
  EXPECT_EQ(informer->cache().CountByIndex(kLabelIndex, "tier=web"), 1u);
}

TEST_F(InformerTest, StopEndsTheWatch) {
  auto informer = StartInformer();
  ASSERT_TRUE(Eventually([&] { return client_.OpenWatches() == 1; }));
  informer->Stop();
  EXPECT_EQ(client_.OpenWatches(), 0);
  EXPECT_TRUE(informer->HasSynced()) << "the cache keeps its contents";
}

}  // namespace
}  // namespace flotilla::runtime
