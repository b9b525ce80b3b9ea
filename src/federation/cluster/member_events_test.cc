// The members' pod Events on the federation: what a copy keeps and how it
// is named, and against real API servers (cluster::testing::ControllerTest,
// members a, b and c) Events about pods copied, followed and deleted, and
// the others left alone. The tests play the members' kubelets.
#include "federation/cluster/member_events.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <utility>

#include "api/federated.h"
#include "api/managed_fields.h"
#include "api/validation.h"
#include "federation/cluster/controller_fixture.h"
#include "runtime/forwarding_client.h"

namespace flotilla::federation::cluster {
namespace {

using client::kEvents;
using client::kNamespaces;

json::object Parse(std::string_view text) {
  StatusOr<json::object> o = ParseJsonObject(text);
  EXPECT_TRUE(o.ok()) << text;
  return o.ok() ? *o : json::object{};
}

// An Event as a member's API server returns it: identity, managedFields,
// the fields it writes empty.
constexpr std::string_view kStarted = R"({"apiVersion":"v1","kind":"Event",
  "metadata":{"name":"web-1.17f3a2b4c5d6e7f8","namespace":"default","uid":"0c1d",
    "resourceVersion":"812","creationTimestamp":"2026-12-02T08:00:00Z",
    "labels":{"team":"shop"},
    "managedFields":[{"manager":"kubelet","operation":"Update"}]},
  "involvedObject":{"kind":"Pod","namespace":"default","name":"web-1","uid":"9f2e",
    "apiVersion":"v1","fieldPath":"spec.containers{web}"},
  "reason":"Started","message":"Started container web",
  "source":{"component":"kubelet","host":"node-1"},
  "firstTimestamp":"2026-12-02T08:00:00Z","lastTimestamp":"2026-12-02T08:00:00Z",
  "count":1,"type":"Normal","eventTime":null,"reportingComponent":"","reportingInstance":""})";

TEST(EventCopy, KeepsTheEventAndNoneOfTheMembersIdentity) {
  json::object copy = EventCopy(Parse(kStarted), "east");
  EXPECT_EQ(json::serialize(copy["metadata"]),
            R"({"name":"web-1.17f3a2b4c5d6e7f8.east","namespace":"default",)"
            R"("labels":{"team":"shop","federation.kubernetes.io/cluster":"east"}})");
  EXPECT_EQ(StringAt(copy, "involvedObject.uid"), "9f2e");
  EXPECT_EQ(StringAt(copy, "reason"), "Started");
  EXPECT_EQ(StringAt(copy, "source.host"), "node-1");
  EXPECT_EQ(IntAt(copy, "count"), 1);
}

TEST(EventCopy, DiffersOnlyWhenItSaysSomethingElse) {
  json::object desired = EventCopy(Parse(kStarted), "east");
  // What the federation's server returns: its identity, empty fields left
  // out.
  json::object stored = desired;
  stored.erase("eventTime");
  stored.erase("reportingComponent");
  json::object& meta = stored["metadata"].as_object();
  meta["uid"] = "77aa";
  meta["resourceVersion"] = "5";
  meta["managedFields"] = json::array{};
  EXPECT_FALSE(EventCopyDiffers(stored, desired));

  json::object again = desired;
  again["count"] = 2;
  again["lastTimestamp"] = "2026-12-02T08:05:00Z";
  EXPECT_TRUE(EventCopyDiffers(stored, again));
  json::object relabelled = desired;
  relabelled["metadata"].as_object()["labels"].as_object()["team"] = "cart";
  EXPECT_TRUE(EventCopyDiffers(stored, relabelled));
  json::object extra = stored;
  extra["action"] = "Pulling";
  EXPECT_TRUE(EventCopyDiffers(extra, desired));
}

// What the informers cache: the keys, and the Event as one string that
// gives back the Event without its managedFields.
TEST(CompactEvent, KeepsTheKeysAndTheEventAsOneString) {
  json::object event = Parse(kStarted);
  json::object compact = CompactEvent(event);
  EXPECT_EQ(json::serialize(compact["metadata"]),
            R"({"name":"web-1.17f3a2b4c5d6e7f8","namespace":"default","uid":"0c1d",)"
            R"("resourceVersion":"812"})");
  ASSERT_TRUE(compact["event"].is_string());
  EXPECT_EQ(compact.size(), 2u);
  EXPECT_EQ(CompactEvent(compact), compact);  // idempotent
  json::object back = CachedEvent(compact);
  EXPECT_EQ(Find(back, "metadata.managedFields"), nullptr);
  EXPECT_EQ(back, api::WithoutManagedFields(event));
  EXPECT_EQ(EventCopy(back, "east"), EventCopy(event, "east"));
  EXPECT_EQ(CachedEvent(event), event);  // never compacted: as it is
}

TEST(EventCopyName, StaysAValidNameOfItsOwn) {
  EXPECT_EQ(EventCopyName("web-1.17f3", "east"), "web-1.17f3.east");
  std::string long_name(250, 'w');
  std::string east = EventCopyName(long_name, "east");
  std::string west = EventCopyName(long_name, "west");
  EXPECT_LE(east.size(), 253u);
  EXPECT_TRUE(api::IsDNS1123Subdomain(east).empty()) << east;
  EXPECT_NE(east, west);
}

class MemberEventsTest : public testing::ControllerTest {
 protected:
  MemberEventsTest()
      : ControllerTest({MemberEventsController::kName}, "a/default/web-1.17f3a2b4c5d6e7f8") {}

  void Start() {
    StartWith([&] { Make<MemberEventsController>(); });
  }
  // Member i's Event `name` about `kind` `object`, `count` times.
  json::object Event(const std::string& name, const std::string& kind, const std::string& object,
                     int count, const std::string& ns = kNs) {
    json::object e = Parse(kStarted);
    json::object& meta = e["metadata"].as_object();
    for (const char* field : {"uid", "resourceVersion", "creationTimestamp", "managedFields"}) {
      meta.erase(field);
    }
    meta["name"] = name;
    meta["namespace"] = ns;
    e["involvedObject"].as_object()["kind"] = kind;
    e["involvedObject"].as_object()["name"] = object;
    e["involvedObject"].as_object()["namespace"] = ns;
    e["count"] = count;
    return e;
  }
  void Put(int i, json::object e) {
    std::string ns(StringViewAt(e, "metadata.namespace"));
    auto current = member_clients_[i]->Get(kEvents, ns, StringAt(e, "metadata.name"));
    auto written = current.ok() ? (e["metadata"].as_object()["resourceVersion"] =
                                       StringAt(*current, "metadata.resourceVersion"),
                                   member_clients_[i]->Update(kEvents, ns, e))
                                : member_clients_[i]->Create(kEvents, ns, e);
    ASSERT_TRUE(written.ok()) << written.status().ToString();
  }
  // The federation's copy `name`; empty when there is none.
  json::object Copy(const std::string& name, const std::string& ns = kNs) {
    auto got = fed_client_->Get(kEvents, ns, name);
    return got.ok() ? *got : json::object{};
  }
};

TEST_F(MemberEventsTest, CopiesFollowsAndDeletesTheMembersPodEvents) {
  Start();
  // Member a's watch delivers in order: the ReplicaSet's Event would be
  // copied by the time the pod's is.
  Put(0, Event("web.17f3a2b4c5d6e7f9", "ReplicaSet", "web", 1));
  Put(0, Event("web-1.17f3a2b4c5d6e7f8", "Pod", "web-1", 1));
  Put(1, Event("web-1.17f3a2b4c5d6e7f8", "Pod", "web-1", 3));
  Holds([&] {
    json::object a = Copy("web-1.17f3a2b4c5d6e7f8.a");
    return !a.empty() && !Copy("web-1.17f3a2b4c5d6e7f8.b").empty();
  });
  json::object a = Copy("web-1.17f3a2b4c5d6e7f8.a");
  EXPECT_EQ(api::ObjectView(a).label(api::kMemberClusterLabel), "a");
  EXPECT_EQ(StringAt(a, "involvedObject.name"), "web-1");
  EXPECT_EQ(IntAt(Copy("web-1.17f3a2b4c5d6e7f8.b"), "count"), 3);
  // Only Events about pods.
  EXPECT_TRUE(Copy("web.17f3a2b4c5d6e7f9.a").empty());

  // A new occurrence.
  Put(0, Event("web-1.17f3a2b4c5d6e7f8", "Pod", "web-1", 4));
  Holds([&] { return IntAt(Copy("web-1.17f3a2b4c5d6e7f8.a"), "count") == 4; });

  // Gone in the member: gone here; the other cluster's stays.
  ASSERT_TRUE(member_clients_[0]->Delete(kEvents, kNs, "web-1.17f3a2b4c5d6e7f8").ok());
  Holds([&] { return Copy("web-1.17f3a2b4c5d6e7f8.a").empty(); });
  EXPECT_FALSE(Copy("web-1.17f3a2b4c5d6e7f8.b").empty());
}

// The federation's client, counting what the controller asks of its Events.
class CountingClient : public runtime::testing::ForwardingClient {
 public:
  using ForwardingClient::ForwardingClient;
  StatusOr<json::object> Get(const client::ResourceRef& r, const std::string& ns,
                             const std::string& name) override {
    if (r.resource == "events") ++gets;
    return ForwardingClient::Get(r, ns, name);
  }
  StatusOr<json::object> Create(const client::ResourceRef& r, const std::string& ns,
                                const json::object& obj) override {
    if (r.resource == "events") ++writes;
    return ForwardingClient::Create(r, ns, obj);
  }
  StatusOr<json::object> Update(const client::ResourceRef& r, const std::string& ns,
                                const json::object& obj) override {
    if (r.resource == "events") ++writes;
    return ForwardingClient::Update(r, ns, obj);
  }
  std::atomic<int> gets{0};
  std::atomic<int> writes{0};
};

// The controller on a client that counts its Event calls; the test reads
// and writes through the federation's own.
class MemberEventsCallsTest : public MemberEventsTest {
 protected:
  void StartCounting() {
    auto counting = std::make_unique<CountingClient>(*fed_client_);
    calls_ = counting.get();
    counting_ = std::move(counting);
    std::swap(fed_client_, counting_);  // the context is made on fed_client_
    Start();
    std::swap(fed_client_, counting_);
  }
  CountingClient* calls_ = nullptr;
  std::unique_ptr<client::Client> counting_;  // goes before fed_client_, after TearDown
};

TEST_F(MemberEventsCallsTest, ACopyIsWrittenWithoutReadingItAndNotWrittenAgainUnchanged) {
  StartCounting();
  Put(0, Event("web-1.17f3a2b4c5d6e7f8", "Pod", "web-1", 1));
  // Holds checks the Event once more after the copy is there: the member's
  // Event unchanged, nothing is read or written again.
  Holds([&] { return IntAt(Copy("web-1.17f3a2b4c5d6e7f8.a"), "count") == 1; });
  EXPECT_EQ(calls_->writes, 1);
  EXPECT_EQ(calls_->gets, 0);

  // A new occurrence: one update from what was written, no read.
  Put(0, Event("web-1.17f3a2b4c5d6e7f8", "Pod", "web-1", 2));
  Holds([&] { return IntAt(Copy("web-1.17f3a2b4c5d6e7f8.a"), "count") == 2; });
  EXPECT_EQ(calls_->writes, 2);
  EXPECT_EQ(calls_->gets, 0);

  // The copy changed by someone else: the next occurrence's update
  // conflicts, and the controller reads the copy and writes what the member
  // says.
  json::object copy = Copy("web-1.17f3a2b4c5d6e7f8.a");
  copy["message"] = "edited";
  ASSERT_TRUE(fed_client_->Update(kEvents, kNs, copy).ok());
  Put(0, Event("web-1.17f3a2b4c5d6e7f8", "Pod", "web-1", 3));
  Holds([&] {
    json::object now = Copy("web-1.17f3a2b4c5d6e7f8.a");
    return IntAt(now, "count") == 3 && StringAt(now, "message") == "Started container web";
  });
  EXPECT_EQ(calls_->writes, 4);
  EXPECT_EQ(calls_->gets, 1);

  // Gone here (expired) while the member keeps it: a new occurrence makes
  // it again.
  ASSERT_TRUE(fed_client_->Delete(kEvents, kNs, "web-1.17f3a2b4c5d6e7f8.a").ok());
  Put(0, Event("web-1.17f3a2b4c5d6e7f8", "Pod", "web-1", 4));
  Holds([&] { return IntAt(Copy("web-1.17f3a2b4c5d6e7f8.a"), "count") == 4; });

  // A copy there already that this controller did not write (another
  // leader's, before a fail-over): created, found, read, and left alone
  // when it says the same.
  json::object other = EventCopy(Event("web-2.17f3a2b4c5d6e7f9", "Pod", "web-2", 1), "a");
  auto made = fed_client_->Create(kEvents, kNs, other);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  int writes = calls_->writes, gets = calls_->gets;
  Put(0, Event("web-2.17f3a2b4c5d6e7f9", "Pod", "web-2", 1));
  ASSERT_TRUE(Settle([&] { return calls_->gets > gets; }));
  ASSERT_TRUE(Settle([&] {
    runtime::WorkQueueStats q = Controller().Metrics().queue;
    return q.depth == 0 && q.processing == 0 && q.waiting == 0;
  }));
  EXPECT_EQ(calls_->writes, writes + 1);  // the create that found it
  EXPECT_EQ(calls_->gets, gets + 1);
  EXPECT_EQ(StringAt(Copy("web-2.17f3a2b4c5d6e7f9.a"), "metadata.resourceVersion"),
            StringAt(*made, "metadata.resourceVersion"));
}

TEST_F(MemberEventsTest, AnEventInANamespaceTheFederationLacksIsLeftOut) {
  json::object ns = Parse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"edge"}})");
  ASSERT_TRUE(member_clients_[0]->Create(kNamespaces, "", ns).ok());
  Start();
  Put(0, Event("probe.1", "Pod", "probe", 1, "edge"));
  Put(0, Event("web-1.17f3a2b4c5d6e7f8", "Pod", "web-1", 1));
  Holds([&] { return !Copy("web-1.17f3a2b4c5d6e7f8.a").empty(); });
  ASSERT_TRUE(Settle([&] {
    runtime::WorkQueueStats q = Controller().Metrics().queue;
    return q.depth == 0 && q.processing == 0 && q.waiting == 0;
  }));
  EXPECT_TRUE(Copy("probe.1.a", "edge").empty());
}

}  // namespace
}  // namespace flotilla::federation::cluster
