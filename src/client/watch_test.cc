// Watches against a real API server through both clients: events in order
// from a resourceVersion, current objects first without one, 410 Expired,
// bookmarks moving LastResourceVersion, Stop(), refused watches and server
// timeouts.
#include <gtest/gtest.h>

#include "client/client_test_util.h"

namespace flotilla::client {
namespace {

using testing::ClientKind;
using testing::NameOf;
using testing::RvOf;
using testing::TestCluster;
using testing::WatchRecorder;
using Type = WatchEvent::Type;

using testing::kConfigMaps;

json::object LabelledConfigMap(const std::string& name, const std::string& app = "web") {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"labels", {{"app", app}}}}}};
}

class WatchTest : public ::testing::TestWithParam<ClientKind> {};

INSTANTIATE_TEST_SUITE_P(BothClients, WatchTest,
                         ::testing::Values(ClientKind::kRest, ClientKind::kRestHttp11,
                                           ClientKind::kInProcess),
                         testing::KindName);

TEST_P(WatchTest, FromAResourceVersionSeesLaterEventsInOrder) {
  TestCluster cluster;
  auto client = cluster.Make(GetParam());
  auto a = client->Create(kConfigMaps, "default", LabelledConfigMap("a"));
  ASSERT_TRUE(a.ok());
  WatchRecorder rec;
  WatchOptions opts;
  opts.resource_version = RvOf(*a);
  auto watch = client->StartWatch(kConfigMaps, "default", opts, rec.OnEvent(), rec.OnDone());
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  EXPECT_EQ((*watch)->LastResourceVersion(), "");

  ASSERT_TRUE(client->Create(kConfigMaps, "default", LabelledConfigMap("b")).ok());
  auto patched =
      client->Patch(kConfigMaps, "default", "b", PatchType::kMerge, R"({"data":{"k":"v"}})");
  ASSERT_TRUE(patched.ok());
  ASSERT_TRUE(client->Delete(kConfigMaps, "default", "a").ok());

  ASSERT_TRUE(rec.WaitEvents(3));
  auto events = rec.events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, Type::kAdded);
  EXPECT_EQ(NameOf(events[0].object), "b");
  EXPECT_EQ(events[1].type, Type::kModified);
  EXPECT_EQ(events[1].object, *patched);
  EXPECT_EQ(events[2].type, Type::kDeleted);
  EXPECT_EQ(NameOf(events[2].object), "a");
  EXPECT_EQ((*watch)->LastResourceVersion(), RvOf(events[2].object));
  (*watch)->Stop();
  ASSERT_TRUE(rec.WaitDone());
  EXPECT_TRUE(rec.done()[0].ok());
}

// WatchOptions::shared_objects: from a server in this process, a live
// put's object comes as its writer stored it, shared; whatever the server
// must parse or convert (a delete, a replay from the history, a selector's
// watch) comes as a parsed object, and so does everything over HTTPS.
TEST_P(WatchTest, SharedObjectsAreWhatTheWriterStored) {
  TestCluster cluster;
  auto client = cluster.Make(GetParam());
  const bool in_process = GetParam() == ClientKind::kInProcess;
  auto a = client->Create(kConfigMaps, "default", LabelledConfigMap("a"));
  ASSERT_TRUE(a.ok());
  auto b = client->Create(kConfigMaps, "default", LabelledConfigMap("b"));
  ASSERT_TRUE(b.ok());
  WatchRecorder shared, parsed, selected;
  WatchOptions opts;
  opts.resource_version = RvOf(*a);  // b's creation is replayed from the history
  opts.shared_objects = true;
  auto watch = client->StartWatch(kConfigMaps, "default", opts, shared.OnEvent(), shared.OnDone());
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  WatchOptions plain = opts;
  plain.shared_objects = false;
  auto plain_watch =
      client->StartWatch(kConfigMaps, "default", plain, parsed.OnEvent(), parsed.OnDone());
  ASSERT_TRUE(plain_watch.ok()) << plain_watch.status().ToString();
  WatchOptions by_label = opts;
  by_label.label_selector = "app=web";
  auto selected_watch =
      client->StartWatch(kConfigMaps, "default", by_label, selected.OnEvent(), selected.OnDone());
  ASSERT_TRUE(selected_watch.ok()) << selected_watch.status().ToString();

  auto c = client->Create(kConfigMaps, "default", LabelledConfigMap("c"));
  ASSERT_TRUE(c.ok());
  auto patched =
      client->Patch(kConfigMaps, "default", "c", PatchType::kMerge, R"({"data":{"k":"v"}})");
  ASSERT_TRUE(patched.ok());
  ASSERT_TRUE(client->Delete(kConfigMaps, "default", "a").ok());

  for (WatchRecorder* rec : {&shared, &parsed, &selected}) {
    ASSERT_TRUE(rec->WaitEvents(4));
    auto events = rec->events();
    ASSERT_EQ(events.size(), 4u);
    EXPECT_EQ(events[0].Object(), *b);
    EXPECT_EQ(events[1].Object(), *c);
    EXPECT_EQ(events[2].Object(), *patched);
    EXPECT_EQ(events[3].type, Type::kDeleted);
    EXPECT_EQ(NameOf(events[3].Object()), "a");
    for (size_t i = 0; i < events.size(); ++i) {
      const bool live_put = i == 1 || i == 2;
      const bool shares = rec == &shared && in_process && live_put;
      EXPECT_EQ(events[i].shared != nullptr, shares) << "event " << i;
      EXPECT_EQ(events[i].object.empty(), shares) << "event " << i;
    }
  }
  // The patch's event was written after the watch's last line: the last
  // resourceVersion reads a shared object's too.
  EXPECT_EQ((*watch)->LastResourceVersion(), RvOf(shared.events()[3].Object()));
}

TEST_P(WatchTest, WithoutAResourceVersionCurrentObjectsComeFirst) {
  TestCluster cluster;
  auto client = cluster.Make(GetParam());
  ASSERT_TRUE(client->Create(kConfigMaps, "default", LabelledConfigMap("x")).ok());
  ASSERT_TRUE(client->Create(kConfigMaps, "default", LabelledConfigMap("y", "db")).ok());
  WatchRecorder rec;
  WatchOptions opts;
  opts.label_selector = "app=web";
  auto watch = client->StartWatch(kConfigMaps, "", opts, rec.OnEvent(), rec.OnDone());
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  ASSERT_TRUE(client->Create(kConfigMaps, "default", LabelledConfigMap("z")).ok());
  ASSERT_TRUE(rec.WaitEvents(2));
  auto events = rec.events();
  EXPECT_EQ(NameOf(events[0].object), "x");
  EXPECT_EQ(NameOf(events[1].object), "z");
  for (const auto& e : events) EXPECT_EQ(e.type, Type::kAdded);
}

TEST_P(WatchTest, TooOldResourceVersionIsExpired) {
  storage::StoreOptions store;
  store.history_events = 10;
  TestCluster cluster(store);
  auto client = cluster.Make(GetParam());
  auto first = client->Create(kConfigMaps, "default", LabelledConfigMap("c0"));
  ASSERT_TRUE(first.ok());
  for (int i = 1; i < 30; ++i) {
    ASSERT_TRUE(
        client->Create(kConfigMaps, "default", LabelledConfigMap("c" + std::to_string(i))).ok());
  }
  WatchRecorder rec;
  WatchOptions opts;
  opts.resource_version = RvOf(*first);
  auto watch = client->StartWatch(kConfigMaps, "default", opts, rec.OnEvent(), rec.OnDone());
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  ASSERT_TRUE(rec.WaitDone());
  auto events = rec.events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, Type::kError);
  EXPECT_EQ(events[0].object.at("code"), 410);
  Status done = rec.done()[0];
  EXPECT_TRUE(done.Is(Reason::kExpired)) << done.ToString();
  EXPECT_EQ(done.message().rfind("too old resource version", 0), 0u) << done.message();
}

TEST_P(WatchTest, BookmarksMoveTheLastResourceVersion) {
  FakeClock clock;
  TestCluster cluster({}, &clock);
  auto client = cluster.Make(GetParam());
  WatchRecorder rec;
  WatchOptions opts;
  opts.label_selector = "app=web";
  opts.resource_version = "0";
  auto watch = client->StartWatch(kConfigMaps, "default", opts, rec.OnEvent(), rec.OnDone());
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  // Filtered out: no event, yet the server's position moves past it.
  auto hidden = client->Create(kConfigMaps, "default", LabelledConfigMap("hidden", "db"));
  ASSERT_TRUE(hidden.ok());
  // The server sends a bookmark every 60 s of its clock; the first ones may
  // still carry the position from before the create.
  for (int i = 0; i < 100 && (*watch)->LastResourceVersion() != RvOf(*hidden); ++i) {
    clock.Advance(std::chrono::seconds(61));
    rec.WaitEvents(rec.events().size() + 1, std::chrono::milliseconds(300));
  }
  EXPECT_EQ((*watch)->LastResourceVersion(), RvOf(*hidden));
  auto events = rec.events();
  ASSERT_FALSE(events.empty());
  for (const auto& e : events) EXPECT_EQ(e.type, Type::kBookmark);
  EXPECT_EQ(RvOf(events.back().object), RvOf(*hidden));
}

TEST_P(WatchTest, StopEndsTheStreamAndNoCallbackFollows) {
  TestCluster cluster;
  auto client = cluster.Make(GetParam());
  WatchRecorder rec;
  auto watch = client->StartWatch(kConfigMaps, "default", {}, rec.OnEvent(), rec.OnDone());
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  ASSERT_TRUE(client->Create(kConfigMaps, "default", LabelledConfigMap("a")).ok());
  ASSERT_TRUE(rec.WaitEvents(1));
  (*watch)->Stop();
  ASSERT_EQ(rec.done().size(), 1u);
  EXPECT_TRUE(rec.done()[0].ok());
  ASSERT_TRUE(client->Create(kConfigMaps, "default", LabelledConfigMap("b")).ok());
  (*watch)->Stop();  // idempotent
  watch->reset();
  EXPECT_EQ(rec.events().size(), 1u);
  EXPECT_EQ(rec.done().size(), 1u);
}

TEST_P(WatchTest, RefusedWatchesFailAtStart) {
  TestCluster cluster;
  auto client = cluster.Make(GetParam());
  WatchRecorder rec;
  const ResourceRef unknown{"", "v1", "widgets", true};
  auto missing = client->StartWatch(unknown, "default", {}, rec.OnEvent(), rec.OnDone());
  EXPECT_TRUE(missing.status().Is(Reason::kNotFound)) << missing.status().ToString();
  WatchOptions bad;
  bad.label_selector = "a in (";
  auto selector = client->StartWatch(kConfigMaps, "default", bad, rec.OnEvent(), rec.OnDone());
  EXPECT_TRUE(selector.status().Is(Reason::kBadRequest)) << selector.status().ToString();
  EXPECT_TRUE(rec.done().empty());
  EXPECT_TRUE(rec.events().empty());
}

TEST_P(WatchTest, ServerTimeoutEndsTheStreamNormally) {
  FakeClock clock;
  TestCluster cluster({}, &clock);
  auto client = cluster.Make(GetParam());
  WatchRecorder rec;
  WatchOptions opts;
  opts.timeout_seconds = 60;
  auto watch = client->StartWatch(kConfigMaps, "default", opts, rec.OnEvent(), rec.OnDone());
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  // The timeout runs on the server's clock. The server may set its
  // deadline after a first advance: then the next one passes it.
  for (int i = 0; i < 10 && !rec.WaitDone(std::chrono::milliseconds(300)); ++i) {
    clock.Advance(std::chrono::seconds(61));
  }
  ASSERT_EQ(rec.done().size(), 1u);
  EXPECT_TRUE(rec.done()[0].ok()) << rec.done()[0].ToString();
  EXPECT_TRUE(rec.events().empty());
}

TEST(InProcessWatchTest, RunsWithoutAnAuthenticator) {
  apiserver::ApiServerOptions opts;
  api::Registry registry;
  api::RegisterFoundationKinds(registry);
  auto store = storage::NewMemoryStore();
  opts.registry = &registry;
  opts.store = store.get();
  opts.clock = &RealClock();
  apiserver::ApiServer server(opts);
  ASSERT_TRUE(server.EnsureDefaultNamespaces().ok());
  auto client = NewInProcessClient(server);
  WatchRecorder rec;
  auto watch = client->StartWatch(kConfigMaps, "default", {}, rec.OnEvent(), rec.OnDone());
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  ASSERT_TRUE(client->Create(kConfigMaps, "default", LabelledConfigMap("a")).ok());
  ASSERT_TRUE(rec.WaitEvents(1));
  (*watch)->Stop();
}

}  // namespace
}  // namespace flotilla::client
