#include "federation/common/cluster_clients.h"

#include <gtest/gtest.h>

#include "runtime/fake_client.h"

namespace flotilla::federation {
namespace {

// Records every callback as "ready a", "notready a", "removed a".
struct Recorder {
  std::vector<std::string> events;
  ClusterCallbacks Callbacks() {
    return {[this](const std::string& n, std::shared_ptr<client::Client>) {
              events.push_back("ready " + n);
            },
            [this](const std::string& n) { events.push_back("notready " + n); },
            [this](const std::string& n) { events.push_back("removed " + n); }};
  }
};

// Only the pointers matter here: which client a callback was given.
std::shared_ptr<client::Client> NewClient() {
  static FakeClock clock;
  return std::make_shared<runtime::FakeClient>(clock);
}

TEST(ClusterClientsTest, ReportsJoinFailReturnAndLeaveOnce) {
  ClusterClients clients;
  Recorder r;
  clients.Subscribe(r.Callbacks());
  auto a = NewClient();
  clients.SetNotReady("a");  // joined, not ready yet: nobody had it
  clients.SetReady("a", a);
  clients.SetReady("a", a);  // unchanged
  EXPECT_EQ(clients.Get("a"), a);
  EXPECT_EQ(clients.ReadyClusters(), std::vector<std::string>{"a"});
  clients.SetNotReady("a");
  clients.SetNotReady("a");
  EXPECT_EQ(clients.Get("a"), nullptr);
  EXPECT_TRUE(clients.ReadyClusters().empty());
  auto a2 = NewClient();
  clients.SetReady("a", a2);
  clients.SetReady("a", NewClient());  // Secret changed: a new client
  clients.Remove("a");
  clients.Remove("a");
  EXPECT_EQ(r.events,
            (std::vector<std::string>{"ready a", "notready a", "ready a", "ready a", "removed a"}));
}

TEST(ClusterClientsTest, LateSubscriberHearsOfReadyClustersOnly) {
  ClusterClients clients;
  clients.SetReady("a", NewClient());
  clients.SetNotReady("b");
  clients.SetReady("c", NewClient());
  Recorder r;
  clients.Subscribe(r.Callbacks());
  EXPECT_EQ(r.events, (std::vector<std::string>{"ready a", "ready c"}));
  clients.Remove("b");
  EXPECT_EQ(r.events.back(), "removed b");
}

TEST(ClusterClientsTest, UnsubscribedHearsNothingMore) {
  ClusterClients clients;
  Recorder kept, gone;
  clients.Subscribe(kept.Callbacks());
  int id = clients.Subscribe(gone.Callbacks());
  clients.SetReady("a", NewClient());
  clients.Unsubscribe(id);
  clients.SetNotReady("a");
  EXPECT_EQ(kept.events, (std::vector<std::string>{"ready a", "notready a"}));
  EXPECT_EQ(gone.events, std::vector<std::string>{"ready a"});
}

}  // namespace
}  // namespace flotilla::federation
