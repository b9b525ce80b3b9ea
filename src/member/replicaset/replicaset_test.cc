// The ReplicaSet controller against a member's in-process API, on a
// FakeClock. There is no kubelet: tests write pod status themselves.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>

#include "api/owner.h"
#include "member/replicaset/controller_ref.h"
#include "member/replicaset/replicaset_controller.h"
#include "member/replicaset/workload_test_util.h"
#include "runtime/forwarding_client.h"
#include "runtime/test_util.h"

namespace flotilla::member {
namespace {

using runtime::testing::Eventually;
using testing::ActivePods;
using testing::MemberTestEnv;
using testing::Name;
using testing::ReplicaSetManifest;
using testing::SetPodStatus;

json::object GetRs(MemberTestEnv& env, const std::string& name) {
  auto rs = env.client().Get(kReplicaSets, "default", name);
  return rs.ok() ? *rs : json::object{};
}

int64_t StatusInt(const json::object& obj, const std::string& field) {
  const json::value* v = Find(obj, "status." + field);
  return v != nullptr && v->is_int64() ? v->get_int64() : 0;
}

bool ScaleTo(MemberTestEnv& env, const std::string& name, int replicas) {
  return env.client()
      .Patch(kReplicaSets, "default", name, client::PatchType::kMerge,
             R"({"spec":{"replicas":)" + std::to_string(replicas) + "}}")
      .ok();
}

std::set<std::string> Names(const std::vector<json::object>& objs) {
  std::set<std::string> out;
  for (const auto& o : objs) out.insert(Name(o));
  return out;
}

// ClaimCandidates reads the orphans, then the owned: a pod adopted between
// the two reads is in both. Listed twice it counted twice, and a ReplicaSet
// that had just adopted all its pods deleted one. A writer flips one pod
// between orphan and owned while the reader checks every list for repeats.
TEST(ClaimCandidatesTest, APodAdoptedBetweenTheReadsIsListedOnce) {
  runtime::Cache cache;
  cache.AddIndex(kControllerlessIndex, ControllerlessValues);
  json::object owner = {{"metadata", {{"name", "web"}, {"namespace", "default"}, {"uid", "u1"}}}};
  auto pod = [&](const std::string& name, bool owned) {
    json::object meta = {{"name", name}, {"namespace", "default"}};
    if (owned) {
      meta["ownerReferences"] = json::array{api::NewControllerRef(owner, "apps/v1", "ReplicaSet")};
    }
    return std::make_shared<const json::object>(json::object{{"metadata", std::move(meta)}});
  };
  cache.Upsert(pod("a", true));
  cache.Upsert(pod("b", false));
  std::atomic<bool> stop{false};
  std::atomic<int> flips{0};
  std::thread writer([&] {
    for (bool owned = true; !stop.load(); owned = !owned) {
      cache.Upsert(pod("flip", owned));
      flips.fetch_add(1);
    }
  });
  runtime::Lister lister(cache);
  int lists = 0;
  // The old code listed "flip" twice within 30,000 lists in 10 runs of 10.
  while (flips.load() < 30000 || lists < 30000) {
    std::vector<std::string> keys;
    for (const runtime::ObjectPtr& obj : ClaimCandidates(lister, owner)) {
      keys.push_back(runtime::ObjectKey(*obj));
    }
    ++lists;
    std::set<std::string> once(keys.begin(), keys.end());
    if (once.size() != keys.size()) {
      ADD_FAILURE() << "list " << lists << " names an object twice";
      break;
    }
    EXPECT_EQ(keys.front(), "default/a");
  }
  stop.store(true);
  writer.join();
}

// What an owner's sync reads of its own: the objects of its namespace it is
// the controller of; not those it owns without controlling, not another
// namespace's that name its uid, not another controller's, in key order.
TEST(ControlledByTest, TheOwnersObjectsOfItsNamespaceItControls) {
  runtime::Cache cache;
  json::object owner = {{"metadata", {{"name", "web"}, {"namespace", "default"}, {"uid", "u1"}}}};
  json::object other = {{"metadata", {{"name", "api"}, {"namespace", "default"}, {"uid", "u2"}}}};
  auto pod = [&](const std::string& ns, const std::string& name, const json::object& by,
                 bool controller) {
    json::value ref = api::NewControllerRef(by, "apps/v1", "ReplicaSet");
    ref.as_object()["controller"] = controller;
    cache.Upsert(std::make_shared<const json::object>(json::object{
        {"metadata", {{"name", name}, {"namespace", ns}, {"ownerReferences", json::array{ref}}}}}));
  };
  pod("default", "web-b", owner, true);
  pod("default", "web-a", owner, true);
  pod("default", "owned-only", owner, false);
  pod("elsewhere", "web-c", owner, true);
  pod("default", "api-a", other, true);
  cache.Upsert(std::make_shared<const json::object>(
      json::object{{"metadata", {{"name", "orphan"}, {"namespace", "default"}}}}));
  runtime::Lister lister(cache);
  std::vector<std::string> keys;
  for (const runtime::ObjectPtr& obj : ControlledBy(lister, "default", "u1")) {
    keys.push_back(runtime::ObjectKey(*obj));
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"default/web-a", "default/web-b"}));
  EXPECT_TRUE(ControlledBy(lister, "default", "u3").empty());
}

TEST(ReplicaSetControllerTest, CreatesPodsFromTheTemplateOwnedByTheReplicaSet) {
  MemberTestEnv env;
  env.Add<ReplicaSetController>();
  ASSERT_TRUE(env.Start().ok());
  json::object rs = ReplicaSetManifest("web", 3, "web");
  rs["spec"].as_object()["template"].as_object()["metadata"].as_object()["annotations"] =
      json::object{{"note", "x"}};
  auto created = env.client().Create(kReplicaSets, "default", rs);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_TRUE(Eventually([&] { return ActivePods(env).size() == 3; }));
  for (const json::object& pod : ActivePods(env)) {
    std::string name = Name(pod);
    EXPECT_EQ(name.rfind("web-", 0), 0u) << name;
    EXPECT_EQ(name.size(), 4u + 5u) << name;
    EXPECT_EQ(*Find(pod, "metadata.labels.app"), "web");
    EXPECT_EQ(*Find(pod, "metadata.annotations.note"), "x");
    EXPECT_EQ(*Find(pod, "spec.containers"), *Find(*created, "spec.template.spec.containers"));
    const json::array& refs = Find(pod, "metadata.ownerReferences")->as_array();
    ASSERT_EQ(refs.size(), 1u);
    EXPECT_EQ(refs[0].at("kind"), "ReplicaSet");
    EXPECT_EQ(refs[0].at("apiVersion"), "apps/v1");
    EXPECT_EQ(refs[0].at("name"), "web");
    EXPECT_EQ(refs[0].at("uid"), *Find(*created, "metadata.uid"));
    EXPECT_EQ(refs[0].at("controller"), true);
    EXPECT_EQ(refs[0].at("blockOwnerDeletion"), true);
  }
  ASSERT_TRUE(Eventually([&] {
    json::object now = GetRs(env, "web");
    return StatusInt(now, "replicas") == 3 && StatusInt(now, "fullyLabeledReplicas") == 3 &&
           StatusInt(now, "observedGeneration") == 1;
  }));
  EXPECT_EQ(StatusInt(GetRs(env, "web"), "readyReplicas"), 0);
  // Settled: no more pods than asked for.
  EXPECT_EQ(testing::Pods(env).size(), 3u);
}

// Seeds five orphan pods in different states; the ReplicaSet adopts them
// and, scaled down one at a time, deletes unscheduled, then pending, then
// not ready, then the most recently ready pod.
TEST(ReplicaSetControllerTest, AdoptsOrphansAndDeletesTheLeastUsefulPodsFirst) {
  MemberTestEnv env;
  struct Seed {
    std::string name, node, phase;
    bool ready;
    int ready_age_s;
  };
  std::vector<Seed> seeds = {{"ready-long", "n1", "Running", true, 100},
                             {"ready-recent", "n1", "Running", true, 10},
                             {"running-not-ready", "n1", "Running", false, 0},
                             {"pending", "n1", "Pending", false, 0},
                             {"unscheduled", "", "Pending", false, 0}};
  for (const Seed& s : seeds) {
    json::object pod = {{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata", {{"name", s.name}, {"labels", {{"app", "web"}}}}},
                        {"spec", testing::PodTemplate("web")["spec"]}};
    if (!s.node.empty()) pod["spec"].as_object()["nodeName"] = s.node;
    ASSERT_TRUE(env.client().Create(kPods, "default", pod).ok());
    TimePoint since = env.clock().Now() - std::chrono::seconds(s.ready_age_s);
    ASSERT_TRUE(SetPodStatus(env, s.name, s.phase, s.ready, since));
  }
  env.Add<ReplicaSetController>();
  ASSERT_TRUE(env.Start().ok());
  auto rs = env.client().Create(kReplicaSets, "default", ReplicaSetManifest("web", 5, "web"));
  ASSERT_TRUE(rs.ok()) << rs.status().ToString();
  ASSERT_TRUE(Eventually([&] {
    for (const json::object& p : ActivePods(env)) {
      if (Find(p, "metadata.ownerReferences") == nullptr) return false;
    }
    return StatusInt(GetRs(env, "web"), "replicas") == 5;
  }));
  EXPECT_EQ(StatusInt(GetRs(env, "web"), "readyReplicas"), 2);
  EXPECT_EQ(ActivePods(env).size(), 5u) << "adopted, none created";

  std::vector<std::string> order = {"unscheduled", "pending", "running-not-ready", "ready-recent"};
  for (size_t i = 0; i < order.size(); ++i) {
    ASSERT_TRUE(ScaleTo(env, "web", static_cast<int>(4 - i)));
    ASSERT_TRUE(Eventually([&] { return ActivePods(env).size() == 4 - i; }))
        << "scaling to " << 4 - i;
    EXPECT_EQ(Names(ActivePods(env)).count(order[i]), 0u) << order[i] << " should go first";
  }
  EXPECT_EQ(Names(ActivePods(env)), std::set<std::string>{"ready-long"});
}

TEST(ReplicaSetControllerTest, ReleasesPodsThatNoLongerMatchAndReplacesThem) {
  MemberTestEnv env;
  env.Add<ReplicaSetController>();
  ASSERT_TRUE(env.Start().ok());
  ASSERT_TRUE(
      env.client().Create(kReplicaSets, "default", ReplicaSetManifest("web", 2, "web")).ok());
  ASSERT_TRUE(Eventually([&] { return ActivePods(env).size() == 2; }));
  std::string moved = Name(ActivePods(env)[0]);
  ASSERT_TRUE(env.client()
                  .Patch(kPods, "default", moved, client::PatchType::kMerge,
                         R"({"metadata":{"labels":{"app":"debug"}}})")
                  .ok());
  ASSERT_TRUE(Eventually([&] { return ActivePods(env, "app", "web").size() == 2; }));
  ASSERT_TRUE(Eventually([&] {
    auto pod = env.client().Get(kPods, "default", moved);
    const json::value* refs = pod.ok() ? Find(*pod, "metadata.ownerReferences") : nullptr;
    return pod.ok() && (refs == nullptr || refs->as_array().empty());
  }));
  EXPECT_EQ(ActivePods(env).size(), 3u);
}

TEST(ReplicaSetControllerTest, AFailedPodIsReplaced) {
  MemberTestEnv env;
  env.Add<ReplicaSetController>();
  ASSERT_TRUE(env.Start().ok());
  ASSERT_TRUE(
      env.client().Create(kReplicaSets, "default", ReplicaSetManifest("web", 2, "web")).ok());
  ASSERT_TRUE(Eventually([&] { return ActivePods(env).size() == 2; }));
  std::string failed = Name(ActivePods(env)[0]);
  ASSERT_TRUE(SetPodStatus(env, failed, "Failed", false));
  ASSERT_TRUE(Eventually([&] {
    auto active = Names(ActivePods(env));
    return active.size() == 2 && active.count(failed) == 0;
  }));
  EXPECT_EQ(testing::Pods(env).size(), 3u) << "the failed pod stays for inspection";
  ASSERT_TRUE(Eventually([&] { return StatusInt(GetRs(env, "web"), "replicas") == 2; }));
}

TEST(ReplicaSetControllerTest, PodsAreAvailableMinReadySecondsAfterTheyTurnReady) {
  MemberTestEnv env;
  env.Add<ReplicaSetController>();
  ASSERT_TRUE(env.Start().ok());
  json::object rs = ReplicaSetManifest("web", 2, "web");
  rs["spec"].as_object()["minReadySeconds"] = 10;
  ASSERT_TRUE(env.client().Create(kReplicaSets, "default", rs).ok());
  ASSERT_TRUE(Eventually([&] { return ActivePods(env).size() == 2; }));
  for (const json::object& p : ActivePods(env))
    ASSERT_TRUE(SetPodStatus(env, Name(p), "Running", true));
  ASSERT_TRUE(Eventually([&] { return StatusInt(GetRs(env, "web"), "readyReplicas") == 2; }));
  EXPECT_EQ(StatusInt(GetRs(env, "web"), "availableReplicas"), 0);
  // The controller's minReadySeconds timer is set (the pod handler sets it
  // after it queues the key: the status may come first).
  runtime::Controller* controller = env.manager().Find(ReplicaSetController::kControllerName);
  ASSERT_TRUE(Eventually([&] { return controller->Metrics().queue.waiting == 1; }));
  env.clock().Advance(std::chrono::seconds(5));
  // Nothing wakes the controller before its own timer; still unavailable.
  EXPECT_EQ(StatusInt(GetRs(env, "web"), "availableReplicas"), 0);
  env.clock().Advance(std::chrono::seconds(7));
  EXPECT_TRUE(Eventually([&] { return StatusInt(GetRs(env, "web"), "availableReplicas") == 2; }));
}

// Refuses pod creation as a quota would, until allowed.
class QuotaClient : public runtime::testing::ForwardingClient {
 public:
  using ForwardingClient::ForwardingClient;
  StatusOr<json::object> Create(const client::ResourceRef& r, const std::string& ns,
                                const json::object& obj) override {
    if (r.resource == "pods" && refuse.load()) {
      return Status::Forbidden("pods \"web-x\" is forbidden: exceeded quota: q, requested: pods=1");
    }
    return ForwardingClient::Create(r, ns, obj);
  }
  std::atomic<bool> refuse = true;
};

TEST(ReplicaSetControllerTest, ReplicaFailureWhilePodsCannotBeCreated) {
  MemberTestEnv env;
  QuotaClient quota(env.client());
  ControllerContext base = env.Context();
  ControllerContext ctx{quota,       base.clock,   base.manager, base.informers,
                        base.events, base.options, base.demand};
  auto controller = std::make_unique<ReplicaSetController>(ctx);
  ASSERT_TRUE(env.Start().ok());
  ASSERT_TRUE(
      env.client().Create(kReplicaSets, "default", ReplicaSetManifest("web", 2, "web")).ok());
  auto failure = [&]() -> json::object {
    json::object rs = GetRs(env, "web");
    const json::value* conds = Find(rs, "status.conditions");
    if (conds == nullptr) return {};
    for (const json::value& c : conds->as_array()) {
      if (c.at("type") == "ReplicaFailure") return c.as_object();
    }
    return {};
  };
  ASSERT_TRUE(Eventually([&] { return !failure().empty(); }));
  EXPECT_EQ(failure().at("status"), "True");
  EXPECT_EQ(failure().at("reason"), "FailedCreate");
  EXPECT_EQ(failure().at("message"),
            "pods \"web-x\" is forbidden: exceeded quota: q, requested: pods=1");
  EXPECT_TRUE(ActivePods(env).empty());

  quota.refuse = false;
  // The failed sync is retried with backoff on the clock.
  ASSERT_TRUE(Eventually([&] {
    env.clock().Advance(std::chrono::milliseconds(100));
    return ActivePods(env).size() == 2 && failure().empty();
  }));
  env.Stop();
}

}  // namespace
}  // namespace flotilla::member
