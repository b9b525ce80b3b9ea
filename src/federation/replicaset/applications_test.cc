// Coupled applications (federation/applications/applications.h) made of
// federated ReplicaSets, against real API servers: a federation and three
// members started in-process on port 0, with nodes of different sizes
// (a: 2 cpu, b: 3 cpu, c: 4 cpu). The members run no controllers: the
// tests write the nodes, and the local ReplicaSets' statuses as their
// controller would. Time moves on a FakeClock.
#include "federation/applications/applications.h"

#include <gtest/gtest.h>

#include "api/federated.h"
#include "federation/cluster/controller_fixture.h"
#include "federation/replicaset/replicaset_controller.h"

namespace flotilla::federation::replicaset {
namespace {

using runtime::testing::Eventually;

constexpr Duration kTimeout = std::chrono::minutes(5);
// The workloads' default preferences favour b.
constexpr char kPreferB[] = R"({"clusters": {"b": {"weight": 2}, "*": {"weight": 1}}})";

class ApplicationsTest : public cluster::testing::ControllerTest {
 protected:
  ApplicationsTest() : ControllerTest({ReplicaSetController::kName}, "default/web") {}

  void SetUp() override {
    ControllerTest::SetUp();
    const char* zones[] = {"z1", "z1", "z2"};
    for (int i = 0; i < kMembers; ++i) {
      AddNode(i, std::to_string(2 + i));
      // The zones the cluster controller would record.
      auto c = fed_client_->Get(kClusters, "", Name(i));
      ASSERT_TRUE(c.ok());
      json::object with = *c;
      with["status"] = json::object{{"zones", json::array{zones[i]}}};
      ASSERT_TRUE(fed_client_->UpdateStatus(kClusters, "", with).ok());
    }
  }
  void Start() {
    StartWith([&] {
      WorkloadOptions options{.recheck_delay = std::chrono::seconds(30),
                              .member_change_delay = Duration::zero()};
      apps_ = &Make<Applications>(ApplicationOptions{.migration_timeout = kTimeout,
                                                     .recheck_delay = options.recheck_delay});
      options.applications = apps_;
      Make<ReplicaSetController>(options);
    });
  }

  void AddNode(int i, const std::string& cpu) {
    json::object node{
        {"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", json::object{{"name", "n1"}}}};
    auto made = member_clients_[i]->Create(kNodes, "", node);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    json::object with = *made;
    with["status"] = json::object{
        {"allocatable", json::object{{"cpu", cpu}, {"memory", "8Gi"}, {"pods", "110"}}},
        {"conditions", json::array{json::object{{"type", "Ready"}, {"status", "True"}}}}};
    ASSERT_TRUE(member_clients_[i]->UpdateStatus(kNodes, "", with).ok());
  }

  // A federated ReplicaSet of application `app` whose pods request `cpu`.
  void CreateRs(const std::string& name, int64_t replicas, const std::string& cpu,
                const std::string& app, json::object annotations = {}) {
    auto rs = ParseJsonObject(R"({"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "spec": {"selector": {"matchLabels": {"app": "APP"}},
                 "template": {"metadata": {"labels": {"app": "APP"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})");
    ASSERT_TRUE(rs.ok());
    json::object out = *rs;
    if (!annotations.contains(api::kReplicaSetPreferencesAnnotation)) {
      annotations[api::kReplicaSetPreferencesAnnotation] = kPreferB;
    }
    if (!annotations.contains(api::kLocationAffinityAnnotation)) {
      annotations[api::kLocationAffinityAnnotation] = api::kPreferentiallyCoupled;
    }
    out["metadata"] = json::object{{"name", name},
                                   {"labels", json::object{{api::kApplicationLabel, app}}},
                                   {"annotations", std::move(annotations)}};
    json::object& spec = out["spec"].as_object();
    spec["replicas"] = replicas;
    spec["selector"].as_object()["matchLabels"].as_object()["app"] = name;
    json::object& tmpl = spec["template"].as_object();
    tmpl["metadata"].as_object()["labels"].as_object()["app"] = name;
    tmpl["spec"].as_object()["containers"].as_array()[0].as_object()["resources"] =
        json::object{{"requests", json::object{{"cpu", cpu}}}};
    auto made = fed_client_->Create(kReplicaSets, kNs, out);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
  }
  // Changes federated ReplicaSet `name` with `edit`.
  void Edit(const std::string& name, const std::function<void(json::object&)>& edit) {
    ASSERT_TRUE(Eventually([&] {
      auto rs = fed_client_->Get(kReplicaSets, kNs, name);
      if (!rs.ok()) return false;
      json::object obj = *rs;
      edit(obj);
      return fed_client_->Update(kReplicaSets, kNs, obj).ok();
    }));
  }
  void Annotate(const std::string& name, const std::string& key, const std::string& value) {
    Edit(name, [&](json::object& obj) {
      EnsureObject(EnsureObject(obj, "metadata"), "annotations")[key] = value;
    });
  }

  // spec.replicas of the local ReplicaSet `name` per member, -1 where there
  // is none.
  std::vector<int64_t> Placement(const std::string& name) {
    std::vector<int64_t> out;
    for (int i = 0; i < kMembers; ++i) {
      auto lrs = member_clients_[i]->Get(kReplicaSets, kNs, name);
      out.push_back(lrs.ok() ? IntAt(*lrs, "spec.replicas") : -1);
    }
    return out;
  }
  // Plays member i's ReplicaSet controller: every replica available.
  void RunAll(int i, const std::string& name) {
    ASSERT_TRUE(Eventually([&] {
      auto lrs = member_clients_[i]->Get(kReplicaSets, kNs, name);
      if (!lrs.ok()) return false;
      json::object obj = *lrs;
      int64_t n = IntAt(obj, "spec.replicas");
      obj["status"] = json::object{{"replicas", n},
                                   {"fullyLabeledReplicas", n},
                                   {"readyReplicas", n},
                                   {"availableReplicas", n},
                                   {"observedGeneration", IntAt(obj, "metadata.generation")}};
      return member_clients_[i]->UpdateStatus(kReplicaSets, kNs, obj).ok();
    }));
  }
  // "reason: message" of the LocationAffinity condition of `name`.
  std::string Condition(const std::string& name) {
    auto rs = fed_client_->Get(kReplicaSets, kNs, name);
    const json::value* conds = rs.ok() ? Find(*rs, "status.conditions") : nullptr;
    for (const json::value& c : conds && conds->is_array() ? conds->get_array() : json::array()) {
      if (GetString(c.get_object(), "type") == "LocationAffinity") {
        return std::string(GetString(c.get_object(), "reason").value_or("")) + ": " +
               std::string(GetString(c.get_object(), "message").value_or(""));
      }
    }
    return "<none>";
  }
  bool HasEvent(const std::string& reason, const std::string& object = "") {
    return Eventually([&] {
      auto list = fed_client_->List(runtime::kEvents, kNs, {});
      for (const json::object& e : list.ok() ? list->items : std::vector<json::object>()) {
        if (GetString(e, "reason") == reason &&
            (object.empty() || StringAt(e, "involvedObject.name") == object)) {
          return true;
        }
      }
      return false;
    });
  }
  // The controller has nothing to do before the clock moves.
  bool Idle() {
    return Eventually([&] {
      runtime::WorkQueueStats q = Controller().Metrics().queue;
      return q.depth == 0 && q.processing == 0;
    });
  }
  // Waits until web and db have these local replica counts per member.
  bool ShopIs(const std::vector<int64_t>& web, const std::vector<int64_t>& db) {
    return Eventually([&] { return Placement("web") == web && Placement("db") == db; });
  }
  // shop (web of 3) moves from b to c: both run it until c runs all of it.
  void ShopMovesFromBToC() {
    ASSERT_TRUE(ShopIs({-1, 3, 3}, {-1, 1, 1})) << Condition("web");
    RunAll(2, "web");
    RunAll(2, "db");
    ASSERT_TRUE(ShopIs({-1, -1, 3}, {-1, -1, 1})) << Condition("web");
  }
  // shop: web (3 x 500m) and db (1 x 1000m), 2500m in all, in b.
  void ShopInB(json::object annotations = {}) {
    CreateRs("web", 3, "500m", "shop", annotations);
    CreateRs("db", 1, "1", "shop", annotations);
    ASSERT_TRUE(ShopIs({-1, 3, -1}, {-1, 1, -1})) << Condition("web");
    RunAll(1, "web");
    RunAll(1, "db");
  }

  Applications* apps_ = nullptr;  // the fixture's while it runs
};

TEST_F(ApplicationsTest, AnApplicationRunsWholeWhereItHasRoomAndReservesIt) {
  Start();
  ShopInB();
  EXPECT_TRUE(Eventually([&] {
    return Condition("db") == "Placed: application shop runs in cluster b";
  })) << Condition("db");
  EXPECT_TRUE(HasEvent("ApplicationPlaced", "web"));
  // blog also prefers b, but no pod of shop is bound yet: what shop
  // reserved there leaves b 500m, so blog goes to the best other cluster
  // with room, c (a has 2 cpu).
  CreateRs("blog", 5, "500m", "blog");
  ASSERT_TRUE(Eventually([&] {
    return Placement("blog") == std::vector<int64_t>{-1, -1, 5};
  })) << Condition("blog");
  // An application no cluster has room for stays unplaced and says so.
  CreateRs("big", 9, "1", "huge");
  ASSERT_TRUE(Eventually([&] { return Condition("big").starts_with("NoClusterWithRoom: "); }))
      << Condition("big");
  EXPECT_EQ(Placement("big"), (std::vector<int64_t>{-1, -1, -1}));
  // shop deleted: what it reserved in b is free again.
  ASSERT_TRUE(fed_client_->Delete(kReplicaSets, kNs, "web").ok());
  ASSERT_TRUE(fed_client_->Delete(kReplicaSets, kNs, "db").ok());
  CreateRs("next", 5, "500m", "next");
  ASSERT_TRUE(Eventually([&] {
    return Placement("next") == std::vector<int64_t>{-1, 5, -1};
  })) << Condition("next");
}

TEST_F(ApplicationsTest, GrownPastItsRoomItMovesWholeMakeBeforeBreak) {
  Start();
  ShopInB();
  // web grows to 5: 3500m, more than b's 3 cpu; c has 4.
  Edit("web", [](json::object& rs) { rs["spec"].as_object()["replicas"] = 5; });
  ASSERT_TRUE(ShopIs({-1, 5, 5}, {-1, 1, 1})) << Condition("web");
  EXPECT_TRUE(HasEvent("MigrationStarted", "db"));
  EXPECT_TRUE(Eventually([&] { return Condition("web").starts_with("Migrating: "); }));
  // Until all of it is available in c, b keeps its replicas.
  RunAll(2, "web");
  ASSERT_TRUE(Idle());
  EXPECT_EQ(Placement("db"), (std::vector<int64_t>{-1, 1, 1}));
  RunAll(2, "db");
  ASSERT_TRUE(ShopIs({-1, -1, 5}, {-1, -1, 1})) << Condition("web");
  EXPECT_TRUE(HasEvent("Migrated", "web"));
  EXPECT_EQ(apps_->HomeOf(kNs, "shop"), (std::pair<std::string, std::string>{"c", ""}));
}

TEST_F(ApplicationsTest, PodsUnschedulableTooLongMoveItWhole) {
  Start();
  ShopInB();
  // Plays b's scheduler: a pod of web finds no node (a node failed, say).
  auto lrs = member_clients_[1]->Get(kReplicaSets, kNs, "web");
  ASSERT_TRUE(lrs.ok());
  json::object owner{{"apiVersion", "apps/v1"},
                     {"kind", "ReplicaSet"},
                     {"name", "web"},
                     {"uid", StringAt(*lrs, "metadata.uid")},
                     {"controller", true}};
  json::object pod{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", json::object{{"name", "web-x"},
                                {"labels", json::object{{"app", "web"}}},
                                {"ownerReferences", json::array{owner}}}},
      {"spec",
       json::object{{"containers", json::array{json::object{{"name", "c"}, {"image", "nginx"}}}}}}};
  CreateUnschedulablePod(1, pod);
  ASSERT_TRUE(Idle());
  clock_.Advance(std::chrono::seconds(59));
  ASSERT_TRUE(Idle());
  EXPECT_EQ(Placement("web"), (std::vector<int64_t>{-1, 3, -1}));
  clock_.Advance(std::chrono::seconds(1));
  ShopMovesFromBToC();
}

TEST_F(ApplicationsTest, AMoveNotDoneWithinTheTimeoutIsRolledBack) {
  Start();
  ShopInB();
  Edit("web", [](json::object& rs) { rs["spec"].as_object()["replicas"] = 5; });
  ASSERT_TRUE(Eventually([&] { return Placement("web") == std::vector<int64_t>{-1, 5, 5}; }));
  ASSERT_TRUE(Idle());
  clock_.Advance(kTimeout - std::chrono::seconds(1));
  ASSERT_TRUE(Idle());
  EXPECT_EQ(Placement("web"), (std::vector<int64_t>{-1, 5, 5}));
  clock_.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(ShopIs({-1, 5, -1}, {-1, 1, -1})) << Condition("web");
  EXPECT_TRUE(HasEvent("MigrationRolledBack", "web"));
  // c is not tried again at once; shop says why it stays.
  EXPECT_TRUE(Eventually([&] {
    return Condition("web").starts_with("NoClusterWithRoom: stays in b");
  })) << Condition("web");
}

TEST_F(ApplicationsTest, ItsClusterFailedItComesUpWholeElsewhereAtOnce) {
  Start();
  ShopInB();
  ctx_->clusters().SetNotReady("b");
  // c gets all of it; b is out of reach: its copies stay as they were.
  ASSERT_TRUE(ShopIs({-1, 3, 3}, {-1, 1, 1})) << Condition("web");
  EXPECT_EQ(apps_->HomeOf(kNs, "shop"), (std::pair<std::string, std::string>{"c", ""}));
}

TEST_F(ApplicationsTest, AStrictlyCoupledApplicationWaitsForAPersonToMoveIt) {
  Start();
  ShopInB({{api::kLocationAffinityAnnotation, api::kStrictlyCoupled}});
  ctx_->clusters().SetNotReady("b");
  ASSERT_TRUE(HasEvent("ManualMigrationRequired", "web"));
  EXPECT_TRUE(Eventually([&] { return Condition("db").starts_with("ManualMigrationRequired: "); }))
      << Condition("db");
  ASSERT_TRUE(Idle());
  EXPECT_EQ(Placement("web"), (std::vector<int64_t>{-1, 3, -1}));
  // b is back; a person moves it to c: make-before-break.
  SetReady(1);
  ASSERT_TRUE(Eventually([&] { return Condition("db").starts_with("Placed: "); }));
  Annotate("web", api::kMigrateToAnnotation, "c");
  ShopMovesFromBToC();
  // Done: without the annotation it stays where it was moved to.
  Edit("web", [](json::object& rs) {
    rs["metadata"].as_object()["annotations"].as_object().erase(api::kMigrateToAnnotation);
  });
  ASSERT_TRUE(Idle());
  EXPECT_EQ(Placement("web"), (std::vector<int64_t>{-1, -1, 3}));
}

TEST_F(ApplicationsTest, AMoveWaitsForItsWindowButAFailoverDoesNot) {
  // The clock starts at 22:13:20 UTC; the window opens at 23:00.
  Start();
  ShopInB({{api::kMigrationWindowAnnotation, "23:00-01:00"}});
  Edit("web", [](json::object& rs) { rs["spec"].as_object()["replicas"] = 5; });
  ASSERT_TRUE(Eventually([&] { return Condition("web").starts_with("MigrationWindowClosed: "); }))
      << Condition("web");
  ASSERT_TRUE(Idle());
  EXPECT_EQ(Placement("web"), (std::vector<int64_t>{-1, 5, -1}));
  clock_.Advance(std::chrono::minutes(46));
  ASSERT_TRUE(Idle());
  EXPECT_EQ(Placement("web"), (std::vector<int64_t>{-1, 5, -1}));
  clock_.Advance(std::chrono::seconds(40));
  ASSERT_TRUE(Eventually([&] {
    return Placement("web") == std::vector<int64_t>{-1, 5, 5};
  })) << Condition("web");
}

TEST_F(ApplicationsTest, APolicyChangeMovesItMakeBeforeBreak) {
  Start();
  ShopInB();
  // Only c is admitted now: b's copies stay until c runs everything.
  for (const char* name : {"web", "db"}) {
    Annotate(name, api::kPlacementClusterAnnotation, "c");
  }
  ShopMovesFromBToC();
}

TEST_F(ApplicationsTest, AntiAffinityKeepsItOutOfTheOtherApplicationsClustersAndZones) {
  Start();
  ShopInB();
  // mirror prefers b too, and fits in a (z1, as b) or c (z2).
  CreateRs("mirror", 2, "500m", "mirror", {{api::kAntiAffinityAnnotation, "shop"}});
  ASSERT_TRUE(Eventually([&] {
    return Placement("mirror") == std::vector<int64_t>{-1, -1, 2};
  })) << Condition("mirror");
}

TEST(MigrationWindowTest, ParsesAndOpens) {
  auto w = ParseMigrationWindow("02:00-04:30");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(*w, (std::pair{120, 270}));
  for (const char* bad : {"", "2:00-04:00", "02:00-24:00", "02:00-02:00", "02:00 04:00",
                          "02:60-04:00", "02:00-04:00x"}) {
    EXPECT_FALSE(ParseMigrationWindow(bad).ok()) << bad;
  }
  TimePoint day = TimePoint(std::chrono::hours(24 * 20000));  // a midnight UTC
  using std::chrono::hours, std::chrono::minutes;
  EXPECT_EQ(NextWindowOpen(*w, day + hours(3)), day + hours(3));
  EXPECT_EQ(NextWindowOpen(*w, day + hours(1)), day + hours(2));
  EXPECT_EQ(NextWindowOpen(*w, day + hours(5)), day + hours(26));
  auto night = ParseMigrationWindow("23:00-01:00");
  ASSERT_TRUE(night.ok());
  EXPECT_EQ(NextWindowOpen(*night, day + minutes(30)), day + minutes(30));
  EXPECT_EQ(NextWindowOpen(*night, day + hours(12)), day + hours(23));
  EXPECT_EQ(NextWindowOpen(*night, day + hours(12) + std::chrono::seconds(30)), day + hours(23));
}

}  // namespace
}  // namespace flotilla::federation::replicaset
