#include "runtime/event_recorder.h"

#include <gtest/gtest.h>

#include <map>

#include "base/mutex.h"
#include "runtime/fake_client.h"
#include "runtime/forwarding_client.h"
#include "runtime/test_util.h"

namespace flotilla::runtime {
namespace {

using namespace std::chrono_literals;

json::object ReplicaSet(const std::string& ns, const std::string& name) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "ReplicaSet"},
          {"metadata",
           {{"name", name}, {"namespace", ns}, {"uid", "uid-" + name}, {"resourceVersion", "7"}}}};
}

class EventRecorderTest : public ::testing::Test {
 protected:
  std::vector<json::object> Events() {
    auto list = client_.List(kEvents, "", {});
    EXPECT_TRUE(list.ok());
    return list.ok() ? list->items : std::vector<json::object>{};
  }
  std::vector<FakeClient::Verb> Writes() {
    std::vector<FakeClient::Verb> out;
    for (const auto& a : client_.Actions()) {
      if (a.verb != FakeClient::Verb::kList) out.push_back(a.verb);
    }
    return out;
  }

  FakeClock clock_;
  FakeClient client_{clock_};
};

TEST_F(EventRecorderTest, FirstOccurrenceCreatesAnEventWithItsObjectAndSource) {
  EventRecorder recorder(client_, clock_, {"federated-replicaset-controller", "node-1"});
  recorder.Event(ReplicaSet("web", "frontend"), kEventTypeNormal, "CreateInCluster",
                 "Creating replicaset in cluster c1");
  recorder.Flush();
  auto events = Events();
  ASSERT_EQ(events.size(), 1u);
  const json::object& e = events[0];
  EXPECT_EQ(*Find(e, "metadata.namespace"), "web");
  std::string name(Find(e, "metadata.name")->as_string());
  EXPECT_EQ(name.rfind("frontend.", 0), 0u) << name;
  EXPECT_EQ(e.at("involvedObject"), (json::value{{"kind", "ReplicaSet"},
                                                 {"namespace", "web"},
                                                 {"name", "frontend"},
                                                 {"uid", "uid-frontend"},
                                                 {"apiVersion", "apps/v1"},
                                                 {"resourceVersion", "7"}}));
  EXPECT_EQ(e.at("type"), "Normal");
  EXPECT_EQ(e.at("reason"), "CreateInCluster");
  EXPECT_EQ(e.at("message"), "Creating replicaset in cluster c1");
  EXPECT_EQ(e.at("source"),
            (json::value{{"component", "federated-replicaset-controller"}, {"host", "node-1"}}));
  EXPECT_EQ(e.at("count"), 1);
  EXPECT_EQ(e.at("firstTimestamp"), json::value(FormatRfc3339(clock_.Now())));
  EXPECT_EQ(e.at("lastTimestamp"), json::value(FormatRfc3339(clock_.Now())));
  EXPECT_EQ(recorder.Stats().created, 1u);
}

TEST_F(EventRecorderTest, RepeatsPatchCountAndLastTimestamp) {
  EventRecorder recorder(client_, clock_, {"fed"});
  TimePoint first = clock_.Now();
  json::object rs = ReplicaSet("web", "frontend");
  for (int i = 0; i < 3; ++i) {
    if (i > 0) clock_.Advance(10s);
    recorder.Event(rs, kEventTypeWarning, "FailedCreate", "cluster c2 unreachable");
    recorder.Flush();  // each written alone (queued together they are one write)
  }
  auto events = Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].at("count"), 3);
  EXPECT_EQ(events[0].at("firstTimestamp"), json::value(FormatRfc3339(first)));
  EXPECT_EQ(events[0].at("lastTimestamp"), json::value(FormatRfc3339(clock_.Now())));
  EXPECT_EQ(Writes(),
            (std::vector<FakeClient::Verb>{FakeClient::Verb::kCreate, FakeClient::Verb::kPatch,
                                           FakeClient::Verb::kPatch}));
  // Another message, reason or object is another event.
  recorder.Event(rs, kEventTypeWarning, "FailedCreate", "cluster c3 unreachable");
  recorder.Event(rs, kEventTypeNormal, "FailedCreate", "cluster c2 unreachable");
  recorder.Event(ReplicaSet("web", "backend"), kEventTypeWarning, "FailedCreate",
                 "cluster c2 unreachable");
  recorder.Flush();
  EXPECT_EQ(Events().size(), 4u);
  EXPECT_EQ(recorder.Stats().created, 4u);
  EXPECT_EQ(recorder.Stats().patched, 2u);
}

TEST_F(EventRecorderTest, RepeatsWithinThePaceAreHeldThenWrittenAsOne) {
  EventRecorder recorder(client_, clock_, {"fed"});
  json::object rs = ReplicaSet("web", "frontend");
  recorder.Event(rs, kEventTypeNormal, "CreateInCluster", "created in c1");
  recorder.Flush();
  // Two repeats less than kRepeatPace after the write, then another
  // event: once that one is created, the repeats before it have been seen
  // to (a write of them would have come first), and they are held.
  recorder.Event(rs, kEventTypeNormal, "CreateInCluster", "created in c1");
  clock_.Advance(EventRecorder::kRepeatPace / 2);
  recorder.Event(rs, kEventTypeNormal, "CreateInCluster", "created in c1");
  recorder.Event(ReplicaSet("web", "other"), kEventTypeNormal, "CreateInCluster", "x");
  ASSERT_TRUE(testing::Eventually([&] { return Writes().size() == 2; }));
  EXPECT_EQ(Writes(),
            (std::vector<FakeClient::Verb>{FakeClient::Verb::kCreate, FakeClient::Verb::kCreate}));
  // Once kRepeatPace has passed since the write, the timer writes them:
  // one patch, the count exact, the last timestamp the latest repeat's.
  TimePoint latest = clock_.Now();
  clock_.Advance(EventRecorder::kRepeatPace / 2);
  ASSERT_TRUE(testing::Eventually([&] { return Writes().size() == 3; }));
  EXPECT_EQ(Writes().back(), FakeClient::Verb::kPatch);
  for (const json::object& e : Events()) {
    if (*Find(e, "involvedObject.name") != "frontend") continue;
    EXPECT_EQ(e.at("count"), 3);
    EXPECT_EQ(e.at("lastTimestamp"), json::value(FormatRfc3339(latest)));
  }
  // Counted once the write has returned, on the recorder's thread.
  EXPECT_TRUE(testing::Eventually([&] { return recorder.Stats().patched == 1u; }));
  // A repeat held is written at once by a Flush.
  recorder.Event(rs, kEventTypeNormal, "CreateInCluster", "created in c1");
  recorder.Flush();
  EXPECT_EQ(Writes().size(), 4u);
  EXPECT_EQ(recorder.Stats().patched, 2u);
}

TEST_F(EventRecorderTest, ClusterScopedObjectsGetEventsInDefault) {
  EventRecorder recorder(client_, clock_, {"cluster-controller"});
  json::object cluster{{"apiVersion", "federation/v1beta1"},
                       {"kind", "Cluster"},
                       {"metadata", {{"name", "c1"}, {"uid", "u1"}}}};
  recorder.Event(cluster, kEventTypeNormal, "ClusterReady", "Cluster c1 is ready");
  recorder.Flush();
  auto events = Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(*Find(events[0], "metadata.namespace"), "default");
  EXPECT_EQ(Find(events[0], "involvedObject.namespace"), nullptr);
}

TEST_F(EventRecorderTest, DeletedEventIsCreatedAgainKeepingItsCount) {
  EventRecorder recorder(client_, clock_, {"fed"});
  json::object rs = ReplicaSet("web", "frontend");
  recorder.Event(rs, kEventTypeNormal, "Scaled", "to 3");
  recorder.Flush();
  std::string name(Find(Events()[0], "metadata.name")->as_string());
  ASSERT_TRUE(client_.Delete(kEvents, "web", name).ok());
  recorder.Event(rs, kEventTypeNormal, "Scaled", "to 3");
  recorder.Flush();
  auto events = Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(*Find(events[0], "metadata.name"), json::value(name));
  EXPECT_EQ(events[0].at("count"), 2);
}

TEST_F(EventRecorderTest, FailedWritesAreCountedAndDropped) {
  client_.InjectError(FakeClient::Verb::kCreate, Status::Unavailable("down"));
  EventRecorder recorder(client_, clock_, {"fed"});
  recorder.Event(ReplicaSet("web", "a"), kEventTypeNormal, "R", "m");
  recorder.Event(ReplicaSet("web", "b"), kEventTypeNormal, "R", "m");
  recorder.Flush();
  EXPECT_EQ(recorder.Stats().failed, 1u);
  EXPECT_EQ(recorder.Stats().created, 1u);
  EXPECT_EQ(Events().size(), 1u);
}

TEST_F(EventRecorderTest, NoQueueRoomDropsEvents) {
  EventRecorder recorder(client_, clock_, {"fed"}, /*max_queued=*/0);
  recorder.Event(ReplicaSet("web", "a"), kEventTypeNormal, "R", "m");
  recorder.Flush();
  EXPECT_EQ(recorder.Stats().dropped, 1u);
  EXPECT_TRUE(Events().empty());
}

TEST_F(EventRecorderTest, ForgetsTheLeastRecentlySeenPastItsCacheSize) {
  EventRecorder recorder(client_, clock_, {"fed"}, /*max_queued=*/10000);
  json::object rs = ReplicaSet("web", "frontend");
  // Distinct reasons, so that none is combined with another.
  auto tick = [&](size_t i) {
    recorder.Event(rs, kEventTypeNormal, "Tick" + std::to_string(i), "tick");
  };
  for (size_t i = 0; i <= EventRecorder::kCacheSize; ++i) tick(i);
  recorder.Flush();
  tick(EventRecorder::kCacheSize);
  tick(0);  // evicted: a new event
  recorder.Flush();
  EXPECT_EQ(recorder.Stats().patched, 1u);
  EXPECT_EQ(recorder.Stats().created, EventRecorder::kCacheSize + 2);
}

TEST_F(EventRecorderTest, SimilarEventsPastTheThresholdAreCombinedIntoOne) {
  EventRecorder recorder(client_, clock_, {"fed"});
  json::object rs = ReplicaSet("web", "frontend");
  auto created_in = [&](int cluster) {
    recorder.Event(rs, kEventTypeNormal, "CreateInCluster",
                   "Created in cluster c" + std::to_string(cluster));
    recorder.Flush();
  };
  for (int c = 1; c <= 12; ++c) created_in(c);
  // Another reason is not similar.
  recorder.Event(rs, kEventTypeNormal, "UpdateInCluster", "Updated in cluster c1");
  recorder.Flush();
  auto by_message = [&] {
    std::map<std::string, int64_t> out;
    for (const auto& e : Events()) {
      out[std::string(e.at("message").as_string())] = e.at("count").as_int64();
    }
    return out;
  };
  std::map<std::string, int64_t> want;
  for (int c = 1; c <= 9; ++c) want["Created in cluster c" + std::to_string(c)] = 1;
  want["(combined from similar events): Created in cluster c12"] = 3;
  want["Updated in cluster c1"] = 1;
  EXPECT_EQ(by_message(), want);
  EXPECT_EQ(recorder.Stats().created, 11u);
  EXPECT_EQ(recorder.Stats().patched, 2u);

  // A message seen among the last nine is still its own event.
  created_in(9);
  want["Created in cluster c9"] = 2;
  EXPECT_EQ(by_message(), want);

  // Similar events more than the window apart start over.
  clock_.Advance(EventRecorder::kSimilarWindow + 1s);
  created_in(13);
  want["Created in cluster c13"] = 1;
  EXPECT_EQ(by_message(), want);
}

// A client whose first Create waits until the test lets it go on.
class HeldClient : public testing::ForwardingClient {
 public:
  using ForwardingClient::ForwardingClient;
  StatusOr<json::object> Create(const client::ResourceRef& r, const std::string& ns,
                                const json::object& obj) override {
    MutexLock lock(mu_);
    if (!entered_) {
      entered_ = true;
      cv_.NotifyAll();
      cv_.Wait(lock, [&]() REQUIRES(mu_) { return released_; });
    }
    lock.Unlock();
    return ForwardingClient::Create(r, ns, obj);
  }
  void AwaitEntered() {
    MutexLock lock(mu_);
    cv_.Wait(lock, [&]() REQUIRES(mu_) { return entered_; });
  }
  void Release() {
    MutexLock lock(mu_);
    released_ = true;
    cv_.NotifyAll();
  }

 private:
  Mutex mu_;
  CondVar cv_;
  bool entered_ = false, released_ = false;
};

TEST_F(EventRecorderTest, OccurrencesQueuedWhileAWriteIsInFlightAreWrittenTogether) {
  HeldClient held(client_);
  EventRecorder recorder(held, clock_, {"fed"});
  json::object a = ReplicaSet("web", "a"), b = ReplicaSet("web", "b");
  recorder.Event(a, kEventTypeWarning, "FailedCreate", "cluster c2 unreachable");
  held.AwaitEntered();
  TimePoint first_b = clock_.Now();
  for (int i = 0; i < 5; ++i) {
    recorder.Event(b, kEventTypeWarning, "FailedCreate", "cluster c2 unreachable");
    clock_.Advance(1s);
  }
  for (int i = 0; i < 3; ++i) {
    recorder.Event(a, kEventTypeWarning, "FailedCreate", "cluster c2 unreachable");
  }
  held.Release();
  recorder.Flush();
  std::map<std::string, json::object> by_object;
  for (const auto& e : Events()) {
    by_object[std::string(Find(e, "involvedObject.name")->as_string())] = e;
  }
  ASSERT_EQ(by_object.size(), 2u);
  EXPECT_EQ(by_object["a"].at("count"), 4);
  EXPECT_EQ(by_object["b"].at("count"), 5);
  EXPECT_EQ(by_object["b"].at("firstTimestamp"), json::value(FormatRfc3339(first_b)));
  EXPECT_EQ(by_object["b"].at("lastTimestamp"), json::value(FormatRfc3339(clock_.Now() - 1s)));
  EXPECT_EQ(Writes(),
            (std::vector<FakeClient::Verb>{FakeClient::Verb::kCreate, FakeClient::Verb::kCreate,
                                           FakeClient::Verb::kPatch}));
  EXPECT_EQ(recorder.Stats().combined, 6u);
}

}  // namespace
}  // namespace flotilla::runtime
