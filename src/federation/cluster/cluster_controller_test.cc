// The cluster controller against real API servers: a federation and members
// started in-process on port 0; time moves on a FakeClock, probes go over
// real HTTPS (a stopped member refuses connections at once).
#include "federation/cluster/cluster_controller.h"

#include <gtest/gtest.h>

#include <set>

#include "api/views.h"
#include "base/base64.h"
#include "base/mutex.h"
#include "client/client_test_util.h"
#include "federation/cluster/join.h"
#include "federation/cluster/test_util.h"
#include "federation/common/member_informers.h"
#include "runtime/test_util.h"

namespace flotilla::federation::cluster {
namespace {

using client::testing::TestCluster;
using runtime::testing::Eventually;
using testing::MemberServer;

void AddNode(client::Client& member, const std::string& name, const std::string& zone,
             const std::string& region) {
  json::object node{
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", name},
        {"labels",
         {{"topology.kubernetes.io/zone", zone}, {"topology.kubernetes.io/region", region}}}}}};
  ASSERT_TRUE(member.Create(kNodes, "", node).ok());
}

class ClusterControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fed_client_ = fed_.InProcess();
    auto m = member_.InProcess();
    AddNode(*m, "n1", "zone-a", "region-1");
    AddNode(*m, "n2", "zone-b", "region-1");
    JoinOptions join{.name = "m1", .member = member_.AdminConfig(), .labels = {{"env", "test"}}};
    ASSERT_TRUE(Join(*fed_client_, join).ok());
    ctx_ = std::make_unique<FederationContext>(*fed_client_, clock_);
    ctx_->clusters().Subscribe(
        {[this](const std::string& n, std::shared_ptr<client::Client>) { Record("ready " + n); },
         [this](const std::string& n) { Record("notready " + n); },
         [this](const std::string& n) { Record("removed " + n); }});
    // A report period of 60 s (the default is 5m) keeps the fake clock's
    // walks through several periods short.
    ClusterControllerOptions options;
    options.status_report_period = std::chrono::seconds(60);
    options.count_report_period = std::chrono::seconds(30);
    Configure(options);
    controller_ = std::make_unique<ClusterController>(*ctx_, options);
    ASSERT_TRUE(ctx_->Start().ok());
  }
  void TearDown() override { ctx_->Stop(); }
  virtual void Configure(ClusterControllerOptions&) {}

  void Record(const std::string& e) {
    MutexLock lock(mu_);
    events_.push_back(e);
  }
  std::vector<std::string> Events() {
    MutexLock lock(mu_);
    return events_;
  }
  ClusterHealth Health() { return controller_->Health("m1").value_or(ClusterHealth{}); }
  json::object Cluster() {
    auto c = fed_client_->Get(kClusters, "", "m1");
    return c.ok() ? *c : json::object{};
  }
  // The Cluster's condition `type`, {} when absent.
  json::object Condition(const std::string& type) {
    json::object c = Cluster();
    const json::value* conds = Find(c, "status.conditions");
    if (conds == nullptr || !conds->is_array()) return {};
    for (const json::value& v : conds->get_array()) {
      if (v.is_object() && GetString(v.get_object(), "type") == type) return v.get_object();
    }
    return {};
  }
  std::string Field(const json::object& o, const char* key) {
    return std::string(GetString(o, key).value_or(""));
  }
  // Moves the fake time a second at a time, when no probe is in progress,
  // until `done`.
  bool AdvanceUntil(const std::function<bool()>& done) {
    runtime::Controller* c = ctx_->manager().Find("cluster");
    return Eventually([&] {
      if (done()) return true;
      if (c->queue().Stats().processing == 0) clock_.Advance(std::chrono::seconds(1));
      return false;
    });
  }

  FakeClock clock_;
  TestCluster fed_;
  MemberServer member_;
  std::unique_ptr<client::Client> fed_client_;
  std::unique_ptr<FederationContext> ctx_;
  // The manager keeps pointers to the controller's informers: it goes first.
  std::unique_ptr<ClusterController> controller_;
  Mutex mu_;
  std::vector<std::string> events_ GUARDED_BY(mu_);
};

TEST_F(ClusterControllerTest, ReadyWithZonesRegionAndVersion) {
  ASSERT_TRUE(Eventually([&] { return Field(Condition("Ready"), "status") == "True"; }));
  json::object status = Cluster().at("status").as_object();
  EXPECT_EQ(status.at("zones"), (json::array{"zone-a", "zone-b"}));
  EXPECT_EQ(Field(status, "region"), "region-1");
  EXPECT_EQ(Field(status, "kubernetesVersion"), "v1.32.0");
  EXPECT_EQ(Field(Condition("Ready"), "reason"), "ClusterReady");
  EXPECT_EQ(Field(Condition("Ready"), "message"), "/readyz responded with ok");
  EXPECT_EQ(Field(Condition("Offline"), "status"), "False");
  EXPECT_EQ(Field(Condition("Offline"), "reason"), "ClusterReachable");
  EXPECT_EQ(Field(Condition("Ready"), "lastTransitionTime"), FormatRfc3339(clock_.Now()));
  EXPECT_EQ(ctx_->clusters().ReadyClusters(), std::vector<std::string>{"m1"});
  ASSERT_NE(ctx_->clusters().Get("m1"), nullptr);
  EXPECT_TRUE(ctx_->clusters().Get("m1")->Get(kNodes, "", "n1").ok());
  std::string metrics = ctx_->metrics().Render();
  EXPECT_NE(metrics.find("flotilla_cluster_ready{cluster=\"m1\"} 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("flotilla_cluster_probe_duration_seconds{cluster=\"m1\"}"),
            std::string::npos);
}

TEST_F(ClusterControllerTest, CapacityAndManagedObjectsFromTheFederationsCaches) {
  auto m = member_.InProcess();
  json::object node{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "big"}}}};
  auto created = m->Create(kNodes, "", node);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  (*created)["status"] = json::object{
      {"allocatable", {{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}}},
      {"conditions", json::array{json::object{{"type", "Ready"}, {"status", "True"}}}}};
  ASSERT_TRUE(m->UpdateStatus(kNodes, "", *created).ok());
  json::object pod{{"apiVersion", "v1"},
                   {"kind", "Pod"},
                   {"metadata", {{"name", "p"}, {"labels", {{kManagedByLabel, kManagedByValue}}}}},
                   {"spec",
                    {{"nodeName", "big"},
                     {"containers",
                      json::array{json::object{
                          {"name", "c"},
                          {"image", "nginx"},
                          {"resources", {{"requests", {{"cpu", "500m"}, {"memory", "1Gi"}}}}}}}}}}};
  ASSERT_TRUE(m->Create(kPods, "default", pod).ok());
  auto summary = [&](const char* path) { return StringAt(Cluster(), path); };
  ASSERT_TRUE(AdvanceUntil([&] {
    return summary("status.resourceSummary.allocated.cpu") == "500m";
  })) << ToJson(Cluster());
  EXPECT_EQ(summary("status.resourceSummary.allocated.memory"), "1Gi");
  EXPECT_EQ(summary("status.resourceSummary.allocated.pods"), "1");
  EXPECT_EQ(summary("status.resourceSummary.allocatable.cpu"), "4");
  EXPECT_EQ(summary("status.resourceSummary.allocatable.memory"), "8Gi");
  EXPECT_EQ(summary("status.resourceSummary.allocatable.pods"), "110");
  // n1 and n2 have no Ready condition: they count, but not as ready.
  json::object c = Cluster();
  EXPECT_EQ(IntAt(c, "status.nodeSummary.totalNum"), 3);
  EXPECT_EQ(IntAt(c, "status.nodeSummary.readyNum"), 1);
  EXPECT_EQ(IntAt(c, "status.federatedObjects"), 1);
}

TEST_F(ClusterControllerTest, AStatusNoProbeChangedIsWrittenOncePerReportPeriod) {
  // Once the federation's caches of the member are synced, probes find
  // nothing new.
  ASSERT_TRUE(AdvanceUntil([&] { return Find(Cluster(), "status.nodeSummary") != nullptr; }));
  uint64_t start = Health().probes;
  std::set<std::string> probe_times;  // as written
  ASSERT_TRUE(AdvanceUntil([&] {
    probe_times.insert(Field(Condition("Ready"), "lastProbeTime"));
    return Health().probes >= start + 12;  // 120 s at the default 10 s period
  }));
  // Without the report period each probe would write (12 times); with it
  // lastProbeTime moves every 60 s.
  EXPECT_GE(probe_times.size(), 2u);
  EXPECT_LE(probe_times.size(), 3u);
  EXPECT_EQ(Field(Condition("Ready"), "status"), "True");
}

TEST_F(ClusterControllerTest, AStatusAnotherWriterChangedIsMendedAtTheNextProbe) {
  // Settled: the probes find nothing new and write nothing but
  // lastProbeTime, once per report period (60 s here). Just after such a
  // write, the next is 60 s away.
  ASSERT_TRUE(AdvanceUntil([&] { return Find(Cluster(), "status.nodeSummary") != nullptr; }));
  std::string probed = Field(Condition("Ready"), "lastProbeTime");
  ASSERT_TRUE(AdvanceUntil([&] { return Field(Condition("Ready"), "lastProbeTime") != probed; }));
  // Someone else rewrites the zones: the next probes see another object,
  // not the one their status was judged on, and write the zones back
  // without waiting for the report period.
  json::object c = Cluster();
  EnsureObject(c, "status")["zones"] = json::array{"elsewhere"};
  ASSERT_TRUE(fed_client_->UpdateStatus(kClusters, "", c).ok());
  TimePoint changed = clock_.Now();
  auto zones = [&] {
    json::object now = Cluster();
    const json::value* z = Find(now, "status.zones");
    return z == nullptr ? std::string() : json::serialize(*z);
  };
  ASSERT_TRUE(AdvanceUntil([&] { return zones() == R"(["zone-a","zone-b"])"; }));
  EXPECT_LT(clock_.Now() - changed, std::chrono::seconds(45));
}

TEST_F(ClusterControllerTest, AChangeOfTheObjectCountAloneWaitsForItsReportPeriod) {
  ASSERT_TRUE(AdvanceUntil([&] {
    json::object c = Cluster();
    return Find(c, "status.nodeSummary") != nullptr && IntAt(c, "status.federatedObjects") == 0;
  }));
  // Just written (the caches synced): a managed object appears in the
  // member (a pod not bound to a node, so that it takes no resources), and
  // the probes every 10 s see it.
  TimePoint written = clock_.Now();
  json::object pod{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "p"}, {"labels", {{kManagedByLabel, kManagedByValue}}}}},
      {"spec", {{"containers", json::array{json::object{{"name", "c"}, {"image", "nginx"}}}}}}};
  ASSERT_TRUE(member_.InProcess()->Create(kPods, "default", pod).ok());
  uint64_t probes = Health().probes;
  uint64_t built = Health().statuses_built;
  ASSERT_TRUE(AdvanceUntil([&] { return IntAt(Cluster(), "status.federatedObjects") == 1; }));
  // Not before count_report_period (30 s here) after the last write: the
  // probes at 10 and 20 s found the new count and did not write it. (The
  // write before may have been seen a step of AdvanceUntil late: 29 s.)
  EXPECT_GE(clock_.Now() - written, std::chrono::seconds(29));
  EXPECT_GE(Health().probes, probes + 3);
  // Nor did they build a status to compare: only the write built one.
  EXPECT_EQ(Health().statuses_built, built + 1);
}

// One write of a new count alone per 100 s, for all clusters together,
// and no periodic write (which would carry the count) for 300 s.
class ClusterControllerCountRateTest : public ClusterControllerTest {
  void Configure(ClusterControllerOptions& options) override {
    options.count_report_qps = 0.01;
    options.status_report_period = std::chrono::seconds(300);
  }
};

TEST_F(ClusterControllerCountRateTest, ANewCountAloneWaitsForATokenAfterItsPeriod) {
  ASSERT_TRUE(AdvanceUntil([&] {
    json::object c = Cluster();
    return Find(c, "status.nodeSummary") != nullptr && IntAt(c, "status.federatedObjects") == 0;
  }));
  auto add_managed_pod = [&](const std::string& name) {
    json::object pod{
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", name}, {"labels", {{kManagedByLabel, kManagedByValue}}}}},
        {"spec", {{"containers", json::array{json::object{{"name", "c"}, {"image", "nginx"}}}}}}};
    ASSERT_TRUE(member_.InProcess()->Create(kPods, "default", pod).ok());
  };
  // The bucket starts with its one token: the first new count is written
  // once its period is over.
  add_managed_pod("p1");
  ASSERT_TRUE(AdvanceUntil([&] { return IntAt(Cluster(), "status.federatedObjects") == 1; }));
  TimePoint first = clock_.Now();
  // The next one's period (30 s) is over long before the bucket has a
  // token again (100 s after the first write took it).
  add_managed_pod("p2");
  ASSERT_TRUE(AdvanceUntil([&] { return IntAt(Cluster(), "status.federatedObjects") == 2; }));
  TimePoint second = clock_.Now();
  EXPECT_GE(second - first, std::chrono::seconds(95));

  // Someone else writes the Cluster as the next count comes: the probes
  // then compare a built status with one they did not judge, and a new
  // count alone found so waits for a token too.
  add_managed_pod("p3");
  json::object labelled = Cluster();
  EnsureObject(EnsureObject(labelled, "metadata"), "labels")["team"] = "a";
  ASSERT_TRUE(fed_client_->Update(kClusters, "", labelled).ok());
  ASSERT_TRUE(AdvanceUntil([&] { return IntAt(Cluster(), "status.federatedObjects") == 3; }));
  EXPECT_GE(clock_.Now() - second, std::chrono::seconds(95));
}

TEST_F(ClusterControllerTest, SchedulableFollowsTheCordonAsTheControllersCacheHasIt) {
  ASSERT_TRUE(Eventually([&] { return Field(Condition("Schedulable"), "status") == "True"; }));
  EXPECT_EQ(Field(Condition("Schedulable"), "reason"), "ClusterSchedulable");
  ASSERT_TRUE(SetUnschedulable(*fed_client_, "m1", true).ok());
  ASSERT_TRUE(AdvanceUntil([&] { return Field(Condition("Schedulable"), "status") == "False"; }));
  EXPECT_EQ(Field(Condition("Schedulable"), "reason"), "ClusterCordoned");
  // Written from the shared cache: the controllers already see the cordon.
  runtime::ObjectPtr cached = ctx_->cluster_objects().cache().Get("m1");
  ASSERT_NE(cached, nullptr);
  EXPECT_TRUE(api::ClusterView(*cached).cordoned());
  ASSERT_TRUE(SetUnschedulable(*fed_client_, "m1", false).ok());
  ASSERT_TRUE(AdvanceUntil([&] { return Field(Condition("Schedulable"), "status") == "True"; }));
  EXPECT_EQ(Field(Condition("Ready"), "status"), "True");
}

TEST_F(ClusterControllerTest, NotReadyOnlyAfterThreeFailedProbesBackAfterOneSuccess) {
  ASSERT_TRUE(Eventually([&] { return Field(Condition("Ready"), "status") == "True"; }));
  std::string ready_since = Field(Condition("Ready"), "lastTransitionTime");
  member_.server().Stop();
  // While fewer than three probes have failed, the cluster stays Ready.
  bool ready_throughout = true;
  ASSERT_TRUE(AdvanceUntil([&] {
    ClusterHealth h = Health();
    if (h.failures < 3 && !h.ready) ready_throughout = false;
    return !h.ready;
  }));
  EXPECT_TRUE(ready_throughout);
  EXPECT_EQ(Health().failures, 3u);
  ASSERT_TRUE(Eventually([&] { return Field(Condition("Ready"), "status") == "False"; }));
  json::object ready = Condition("Ready"), offline = Condition("Offline");
  EXPECT_EQ(Field(ready, "reason"), "ClusterNotReady");
  EXPECT_NE(Field(ready, "message").find("refused"), std::string::npos) << Field(ready, "message");
  EXPECT_EQ(Field(offline, "status"), "True");
  EXPECT_EQ(Field(offline, "reason"), "ClusterNotReachable");
  std::string down_since = Field(ready, "lastTransitionTime");
  EXPECT_NE(down_since, ready_since);
  EXPECT_EQ(down_since, Field(ready, "lastProbeTime"));
  EXPECT_EQ(Field(offline, "lastTransitionTime"), down_since);
  EXPECT_TRUE(Eventually([&] {
    auto e = Events();
    return !e.empty() && e.back() == "notready m1";
  }));
  EXPECT_TRUE(ctx_->clusters().ReadyClusters().empty());

  // Later failures move lastProbeTime (once a report period has passed),
  // not lastTransitionTime.
  ASSERT_TRUE(
      AdvanceUntil([&] { return Field(Condition("Ready"), "lastProbeTime") != down_since; }));
  EXPECT_GE(Health().failures, 4u);
  EXPECT_EQ(Field(Condition("Ready"), "lastTransitionTime"), down_since);

  ClusterHealth before = Health();
  const uint64_t failures = before.failures;
  member_.Restart();
  ASSERT_TRUE(AdvanceUntil([&] { return Health().ready; }));
  ClusterHealth after = Health();
  EXPECT_EQ(after.probes - after.failures, before.probes - before.failures + 1);
  ASSERT_TRUE(Eventually([&] { return Field(Condition("Ready"), "status") == "True"; }));
  EXPECT_EQ(Field(Condition("Offline"), "status"), "False");
  EXPECT_NE(Field(Condition("Ready"), "lastTransitionTime"), down_since);
  EXPECT_TRUE(Eventually([&] { return Events().back() == "ready m1"; }));
  std::string metrics = ctx_->metrics().Render();
  EXPECT_NE(metrics.find("flotilla_cluster_probe_failures_total{cluster=\"m1\"} " +
                         std::to_string(failures)),
            std::string::npos)
      << metrics;
}

// A probe falls due on the whole second before its period ends, so that a
// member process's clusters are probed together.
TEST_F(ClusterControllerTest, ProbesFallDueOnWholeSeconds) {
  runtime::Controller* c = ctx_->manager().Find("cluster");
  auto idle = [&] { return Eventually([&] { return c->queue().Stats().processing == 0; }); };
  ASSERT_TRUE(Eventually([&] { return Field(Condition("Ready"), "status") == "True"; }));
  ASSERT_TRUE(idle());
  clock_.Advance(std::chrono::milliseconds(300));  // between two seconds
  // A Secret change probes at once: 0.3 s past the whole second.
  uint64_t probes = Health().probes;
  auto secret = fed_client_->Get(kSecrets, kSystemNamespace, "m1-kubeconfig");
  ASSERT_TRUE(secret.ok()) << secret.status().ToString();
  (*secret)["metadata"].as_object()["annotations"] = json::object{{"touched", "1"}};
  ASSERT_TRUE(fed_client_->Update(kSecrets, kSystemNamespace, *secret).ok());
  ASSERT_TRUE(Eventually([&] { return Health().probes == probes + 1; }));
  ASSERT_TRUE(idle());
  // The next one at the whole second before 10.3 s.
  clock_.Advance(std::chrono::milliseconds(9600));  // 9.9 s: not due
  ASSERT_TRUE(idle());
  EXPECT_EQ(Health().probes, probes + 1);
  clock_.Advance(std::chrono::milliseconds(100));
  EXPECT_TRUE(Eventually([&] { return Health().probes == probes + 2; }));
}

TEST_F(ClusterControllerTest, SecretChangeRebuildsTheClients) {
  ASSERT_TRUE(Eventually([&] { return Field(Condition("Ready"), "status") == "True"; }));
  EXPECT_EQ(Health().client_generation, 1u);
  TestCluster other;
  AddNode(*other.InProcess(), "x", "zone-z", "region-9");
  auto kubeconfig = SelfContainedKubeconfig("m1", other.AdminConfig());
  ASSERT_TRUE(kubeconfig.ok());
  auto secret = fed_client_->Get(kSecrets, kSystemNamespace, "m1-kubeconfig");
  ASSERT_TRUE(secret.ok()) << secret.status().ToString();
  (*secret)["data"].as_object()[kKubeconfigKey] = Base64Encode(*kubeconfig);
  ASSERT_TRUE(fed_client_->Update(kSecrets, kSystemNamespace, *secret).ok());
  // Probed at once with the new credentials, without waiting for the period.
  ASSERT_TRUE(Eventually([&] {
    json::object c = Cluster();
    const json::value* zones = Find(c, "status.zones");
    return zones != nullptr && *zones == json::array{"zone-z"};
  })) << ToJson(Cluster());
  EXPECT_EQ(Health().client_generation, 2u);
  EXPECT_TRUE(Eventually([&] { return Events().back() == "ready m1"; }));
  EXPECT_TRUE(ctx_->clusters().Get("m1")->Get(kNodes, "", "x").ok());

  ASSERT_TRUE(Unjoin(*fed_client_, "m1", false).ok());
  EXPECT_TRUE(Eventually([&] { return Events().back() == "removed m1"; }));
  EXPECT_TRUE(Eventually([&] { return !controller_->Health("m1").has_value(); }));
}

TEST_F(ClusterControllerTest, MemberInformersFollowTheClustersReadiness) {
  MemberInformers informers(ctx_->clusters(), clock_);
  std::atomic<int> adds = 0;
  informers.AddHandler(kNodes, [&](const std::string& cluster) {
    EXPECT_EQ(cluster, "m1");
    return runtime::EventHandler{[&](const runtime::ObjectPtr&) { ++adds; }, nullptr, nullptr};
  });
  informers.Start();
  auto synced_nodes = [&](size_t n) {
    auto inf = informers.Get("m1", "nodes");
    return inf != nullptr && inf->HasSynced() && inf->cache().Size() == n;
  };
  ASSERT_TRUE(Eventually([&] { return synced_nodes(2); }));
  // The cache is updated before the handlers run: await the count.
  EXPECT_TRUE(Eventually([&] { return adds == 2; })) << adds;
  const client::ResourceRef nodes[] = {kNodes}, nodes_and_pods[] = {kNodes, kPods};
  auto synced = informers.Synced(nodes);
  ASSERT_EQ(synced.size(), 1u);
  EXPECT_EQ(synced[0].cluster, "m1");
  EXPECT_TRUE(synced[0].synced);
  synced = informers.Synced(nodes_and_pods);  // nobody informs on pods here
  ASSERT_EQ(synced.size(), 1u);
  EXPECT_FALSE(synced[0].synced);

  member_.Stop();
  ASSERT_TRUE(AdvanceUntil([&] { return !Health().ready; }));
  ASSERT_TRUE(Eventually([&] { return informers.Clusters().empty(); }));
  EXPECT_EQ(informers.Get("m1", "nodes"), nullptr);
  EXPECT_TRUE(informers.Synced(nodes).empty());

  member_.Restart();  // an empty store: no nodes
  ASSERT_TRUE(AdvanceUntil([&] { return Health().ready; }));
  ASSERT_TRUE(Eventually([&] { return synced_nodes(0); }));
  AddNode(*member_.InProcess(), "n3", "zone-c", "region-1");
  ASSERT_TRUE(Eventually([&] { return synced_nodes(1); }));
  EXPECT_TRUE(Eventually([&] { return adds == 3; })) << adds;

  ASSERT_TRUE(Unjoin(*fed_client_, "m1", false).ok());
  EXPECT_TRUE(Eventually([&] { return informers.Clusters().empty(); }));
  informers.Stop();
}

}  // namespace
}  // namespace flotilla::federation::cluster
