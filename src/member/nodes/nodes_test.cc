// Simulated nodes on a FakeClock: registered as a kubelet registers them,
// kept alive by leases and heartbeats that never touch what others set.
#include "member/nodes/nodes.h"

#include <gtest/gtest.h>

#include "member/object_util.h"
#include "member/test_util.h"
#include "runtime/test_util.h"

namespace flotilla::member {
namespace {

using runtime::testing::Eventually;

const json::object* Condition(const json::object& node, std::string_view type) {
  const json::value* c = Find(node, "status.conditions");
  if (c == nullptr || !c->is_array()) return nullptr;
  for (const json::value& e : c->get_array()) {
    if (StringAt(e.as_object(), "type") == type) return &e.as_object();
  }
  return nullptr;
}

class NodesTest : public ::testing::Test {
 protected:
  void Start(int count, int64_t lease_duration_seconds = 40) {
    env_.options().node_lease_duration_seconds = lease_duration_seconds;
    env_.options().cluster_name = "east";
    env_.options().nodes = count;
    env_.options().zones = {"east-a", "east-b"};
    env_.options().region = "east";
    env_.Add<Nodes>();
    ASSERT_TRUE(env_.Start().ok());
  }

  json::object Node(const std::string& name) {
    auto node = env_.client().Get(kNodes, "", name);
    return node.ok() ? *node : json::object{};
  }

  bool Registered(const std::string& name) {
    return Eventually([&] {
      json::object node = Node(name);
      return Condition(node, "Ready") != nullptr && Find(node, "status.nodeInfo") != nullptr;
    });
  }

  std::string LeaseRenewTime(const std::string& name) {
    auto lease = env_.client().Get(kLeases, "kube-node-lease", name);
    return lease.ok() ? StringAt(*lease, "spec.renewTime") : "";
  }

  std::string Heartbeat(const std::string& name) {
    json::object node = Node(name);
    const json::object* ready = Condition(node, "Ready");
    return ready ? StringAt(*ready, "lastHeartbeatTime") : "";
  }

  // Moves the clock once the controller has nothing queued or in progress,
  // so that no reconcile measures its next delay from before the move.
  void Advance(Duration d) {
    runtime::Controller* nodes = env_.manager().Find("nodes");
    Eventually([&] {
      runtime::ControllerMetrics m = nodes->Metrics();
      return m.busy_workers == 0 && m.queue.depth == 0;
    });
    env_.clock().Advance(d);
  }

  testing::MemberTestEnv env_;
};

TEST_F(NodesTest, CreatesNodesAsAKubeletRegistersThem) {
  Start(3);
  for (std::string name : {"east-node-0", "east-node-1", "east-node-2"}) {
    ASSERT_TRUE(Registered(name)) << name;
  }
  json::object node = Node("east-node-1");
  const json::object& labels = Find(node, "metadata.labels")->as_object();
  EXPECT_EQ(labels.at("kubernetes.io/hostname"), "east-node-1");
  EXPECT_EQ(labels.at("kubernetes.io/os"), "linux");
  EXPECT_EQ(labels.at("kubernetes.io/arch"), "amd64");
  EXPECT_EQ(labels.at("node.kubernetes.io/instance-type"), "flotilla-simulated");
  EXPECT_EQ(labels.at("topology.kubernetes.io/zone"), "east-b");
  EXPECT_EQ(labels.at("topology.kubernetes.io/region"), "east");
  EXPECT_EQ(
      Find(Node("east-node-2"), "metadata.labels")->as_object().at("topology.kubernetes.io/zone"),
      "east-a");
  for (std::string_view path : {"status.allocatable", "status.capacity"}) {
    const json::object& r = Find(node, path)->as_object();
    EXPECT_EQ(r.at("cpu"), "4");
    EXPECT_EQ(r.at("memory"), "16Gi");
    EXPECT_EQ(r.at("pods"), "110");
    EXPECT_TRUE(r.contains("ephemeral-storage"));
  }
  const json::object* ready = Condition(node, "Ready");
  EXPECT_EQ(StringAt(*ready, "status"), "True");
  EXPECT_EQ(StringAt(*ready, "reason"), "KubeletReady");
  EXPECT_EQ(StringAt(*ready, "message"), "kubelet is posting ready status");
  for (auto [type, reason] : {std::pair{"MemoryPressure", "KubeletHasSufficientMemory"},
                              std::pair{"DiskPressure", "KubeletHasNoDiskPressure"},
                              std::pair{"PIDPressure", "KubeletHasSufficientPID"}}) {
    const json::object* c = Condition(node, type);
    ASSERT_NE(c, nullptr) << type;
    EXPECT_EQ(StringAt(*c, "status"), "False");
    EXPECT_EQ(StringAt(*c, "reason"), reason);
  }
  EXPECT_EQ(StringAt(node, "status.nodeInfo.kubeletVersion"), "v1.32.0");
  std::set<std::string> ips;
  for (std::string name : {"east-node-0", "east-node-1", "east-node-2"}) {
    json::object registered = Node(name);
    const json::array& addresses = Find(registered, "status.addresses")->as_array();
    ASSERT_EQ(addresses.size(), 2u);
    EXPECT_EQ(StringAt(addresses[0].as_object(), "type"), "InternalIP");
    ips.insert(StringAt(addresses[0].as_object(), "address"));
    EXPECT_EQ(StringAt(addresses[1].as_object(), "address"), name);
  }
  EXPECT_EQ(ips.size(), 3u);
}

TEST_F(NodesTest, LeaseAndHeartbeatAdvanceWithTheClock) {
  Start(1);
  ASSERT_TRUE(Registered("east-node-0"));
  ASSERT_TRUE(Eventually([&] { return !LeaseRenewTime("east-node-0").empty(); }));
  auto lease = env_.client().Get(kLeases, "kube-node-lease", "east-node-0");
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(StringAt(*lease, "spec.holderIdentity"), "east-node-0");
  EXPECT_EQ(Find(*lease, "spec.leaseDurationSeconds")->to_number<int64_t>(), 40);
  EXPECT_EQ(Find(*lease, "metadata.ownerReferences")->as_array()[0].as_object().at("kind"), "Node");

  std::string first_renew = LeaseRenewTime("east-node-0");
  std::string first_beat = Heartbeat("east-node-0");
  Advance(std::chrono::seconds(10));
  EXPECT_TRUE(Eventually([&] { return LeaseRenewTime("east-node-0") != first_renew; }));
  EXPECT_EQ(Heartbeat("east-node-0"), first_beat);  // less often than the lease
  for (int i = 0; i < 30; ++i) Advance(std::chrono::seconds(10));
  EXPECT_TRUE(Eventually([&] { return Heartbeat("east-node-0") != first_beat; }));
  json::object node = Node("east-node-0");
  EXPECT_EQ(StringAt(*Condition(node, "Ready"), "status"), "True");
}

// A longer Lease (--node-lease-duration-seconds) is renewed every quarter
// of it, not every 10 s.
TEST_F(NodesTest, LeaseRenewedEveryQuarterOfItsDuration) {
  Start(1, /*lease_duration_seconds=*/120);
  ASSERT_TRUE(Registered("east-node-0"));
  ASSERT_TRUE(Eventually([&] { return !LeaseRenewTime("east-node-0").empty(); }));
  auto lease = env_.client().Get(kLeases, "kube-node-lease", "east-node-0");
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(Find(*lease, "spec.leaseDurationSeconds")->to_number<int64_t>(), 120);

  std::string first_renew = LeaseRenewTime("east-node-0");
  Advance(std::chrono::seconds(10));
  Advance(std::chrono::seconds(10));  // 20 s: not due yet
  Advance(Duration::zero());          // and nothing left running
  EXPECT_EQ(LeaseRenewTime("east-node-0"), first_renew);
  Advance(std::chrono::seconds(10));  // 30 s: a quarter of 120
  EXPECT_TRUE(Eventually([&] { return LeaseRenewTime("east-node-0") != first_renew; }));
}

// Renewals fall due on whole seconds (at most a second early), so that a
// process of many clusters renews all its due Leases after one wake-up.
TEST_F(NodesTest, LeaseRenewalsFallDueOnWholeSeconds) {
  env_.clock().Advance(std::chrono::milliseconds(300));  // between two seconds
  Start(1);
  ASSERT_TRUE(Registered("east-node-0"));
  ASSERT_TRUE(Eventually([&] { return !LeaseRenewTime("east-node-0").empty(); }));
  std::string first = LeaseRenewTime("east-node-0");
  EXPECT_TRUE(first.ends_with(".300000Z")) << first;
  Advance(std::chrono::milliseconds(9600));  // 9.9 s after it: not due
  Advance(Duration::zero());                 // and nothing left running
  EXPECT_EQ(LeaseRenewTime("east-node-0"), first);
  Advance(std::chrono::milliseconds(100));  // the whole second before 10.3 s
  ASSERT_TRUE(Eventually([&] { return LeaseRenewTime("east-node-0") != first; }));
  std::string second = LeaseRenewTime("east-node-0");
  EXPECT_TRUE(second.ends_with(".000000Z")) << second;
  Advance(std::chrono::milliseconds(9900));  // then every 10 s on the second
  Advance(Duration::zero());
  EXPECT_EQ(LeaseRenewTime("east-node-0"), second);
  Advance(std::chrono::milliseconds(100));
  EXPECT_TRUE(Eventually([&] { return LeaseRenewTime("east-node-0") != second; }));
  EXPECT_TRUE(LeaseRenewTime("east-node-0").ends_with(".000000Z"));
}

TEST_F(NodesTest, KeepsNodesAddedLaterWithoutOverwritingTheirAllocatable) {
  Start(1);
  json::object extra = {
      {"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", json::object{{"name", "extra"}}}};
  ASSERT_TRUE(env_.client().Create(kNodes, "", extra).ok());
  ASSERT_TRUE(Registered("extra"));
  EXPECT_EQ(StringAt(Node("extra"), "status.allocatable.cpu"), "4");
  EXPECT_EQ(StringAt(Node("extra"), "status.allocatable.pods"), "110");
  EXPECT_EQ(Find(Node("extra"), "metadata.labels")->as_object().at("kubernetes.io/hostname"),
            "extra");
  ASSERT_TRUE(env_.client()
                  .Patch(kNodes, "", "extra", client::PatchType::kMerge,
                         R"({"status":{"allocatable":{"cpu":"8"}}})", "status")
                  .ok());
  std::string beat = Heartbeat("extra");
  for (int i = 0; i < 31; ++i) Advance(std::chrono::seconds(10));
  ASSERT_TRUE(Eventually([&] { return Heartbeat("extra") != beat; }));
  ASSERT_TRUE(Eventually([&] { return !LeaseRenewTime("extra").empty(); }));
  EXPECT_EQ(StringAt(Node("extra"), "status.allocatable.cpu"), "8");
  EXPECT_EQ(StringAt(Node("extra"), "status.capacity.cpu"), "4");
}

TEST_F(NodesTest, ANodeCreatedWithSomeResourcesGetsTheOthersFromTheTemplate) {
  Start(0);
  json::object partial = {
      {"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", json::object{{"name", "partial"}}}};
  ASSERT_TRUE(env_.client().Create(kNodes, "", partial).ok());
  // As the admin endpoint's `node add --cpu 64` may land before registration.
  ASSERT_TRUE(env_.client()
                  .Patch(kNodes, "", "partial", client::PatchType::kMerge,
                         R"({"status":{"capacity":{"cpu":"64"},"allocatable":{"cpu":"64"}}})",
                         "status")
                  .ok());
  ASSERT_TRUE(
      Eventually([&] { return StringAt(Node("partial"), "status.allocatable.pods") == "110"; }));
  json::object node = Node("partial");
  EXPECT_EQ(StringAt(node, "status.allocatable.cpu"), "64");
  EXPECT_EQ(StringAt(node, "status.capacity.cpu"), "64");
  EXPECT_EQ(StringAt(node, "status.allocatable.memory"), "16Gi");
  EXPECT_EQ(StringAt(node, "status.capacity.pods"), "110");
}

TEST_F(NodesTest, ADeletedNodeStaysDeleted) {
  Start(2);
  ASSERT_TRUE(Registered("east-node-0"));
  ASSERT_TRUE(Registered("east-node-1"));
  ASSERT_TRUE(env_.client().Delete(kNodes, "", "east-node-0").ok());
  for (int i = 0; i < 3; ++i) Advance(std::chrono::seconds(10));
  ASSERT_TRUE(Eventually([&] { return LeaseRenewTime("east-node-1") != ""; }));
  std::string renew = LeaseRenewTime("east-node-1");
  Advance(std::chrono::seconds(10));
  ASSERT_TRUE(Eventually([&] { return LeaseRenewTime("east-node-1") != renew; }));
  EXPECT_TRUE(env_.client().Get(kNodes, "", "east-node-0").status().Is(Reason::kNotFound));
}

}  // namespace
}  // namespace flotilla::member
