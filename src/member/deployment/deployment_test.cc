// The Deployment controller with the ReplicaSet controller against a
// member's in-process API, on a FakeClock. There is no kubelet: tests mark
// pods Running and Ready themselves.
#include <gtest/gtest.h>

#include <map>

#include "api/deployment/deployment_util.h"
#include "api/owner.h"
#include "base/mutex.h"
#include "member/deployment/deployment_controller.h"
#include "member/object_util.h"
#include "member/replicaset/replicaset_controller.h"
#include "member/replicaset/workload_test_util.h"
#include "runtime/test_util.h"

namespace flotilla::member {
namespace {

using runtime::testing::Eventually;
using testing::ActivePods;
using testing::MemberTestEnv;
using testing::Name;
using testing::SetPodStatus;

class DeploymentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.Add<ReplicaSetController>();
    env_.Add<DeploymentController>();
    ASSERT_TRUE(env_.Start().ok());
  }

  json::object Manifest(int replicas, const std::string& image) {
    return {{"apiVersion", "apps/v1"},
            {"kind", "Deployment"},
            {"metadata", {{"name", "web"}, {"namespace", "default"}}},
            {"spec",
             {{"replicas", replicas},
              {"selector", {{"matchLabels", {{"app", "web"}}}}},
              {"template", testing::PodTemplate("web", image)}}}};
  }
  void Create(json::object d) {
    auto created = env_.client().Create(kDeployments, "default", d);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }
  void Patch(const std::string& patch) {
    auto patched =
        env_.client().Patch(kDeployments, "default", "web", client::PatchType::kMerge, patch);
    ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  }
  void SetImage(const std::string& image) {
    Patch(R"({"spec":{"template":{"spec":{"containers":[{"name":"c","image":")" + image +
          R"("}]}}}})");
  }
  json::object Get() {
    auto d = env_.client().Get(kDeployments, "default", "web");
    return d.ok() ? *d : json::object{};
  }
  std::vector<json::object> ReplicaSets() {
    auto list = env_.client().List(kReplicaSets, "default", {});
    return list.ok() ? list->items : std::vector<json::object>{};
  }
  json::object ReplicaSetWithImage(const std::string& image) {
    for (json::object& rs : ReplicaSets()) {
      if (*Find(rs, "spec.template.spec.containers")
               ->as_array()[0]
               .as_object()
               .if_contains("image") == json::value(image)) {
        return rs;
      }
    }
    return {};
  }
  // Marks every active pod that is not ready Running and Ready.
  void MarkAllReady() {
    for (const json::object& p : ActivePods(env_)) {
      const json::value* phase = Find(p, "status.phase");
      if (phase == nullptr || *phase != "Running") SetPodStatus(env_, Name(p), "Running", true);
    }
  }
  int64_t StatusInt(const std::string& field) {
    json::object d = Get();
    const json::value* v = Find(d, "status." + field);
    return v != nullptr && v->is_int64() ? v->get_int64() : 0;
  }
  // What `kubectl rollout status` waits for.
  // Both controllers have acted on everything the test did: their queues
  // are idle, every ReplicaSet has the pods its spec asks for and counts
  // its ready ones, and the Deployment's status sums the ReplicaSets'
  // (it is written last in a sync). `pods` gets the active pods then.
  bool Settled(std::vector<json::object>* pods) {
    auto idle = [&] {
      for (const char* name :
           {DeploymentController::kControllerName, ReplicaSetController::kControllerName}) {
        runtime::WorkQueueStats q = env_.manager().Find(name)->Metrics().queue;
        if (q.depth != 0 || q.processing != 0) return false;
      }
      return true;
    };
    if (!idle()) return false;
    *pods = ActivePods(env_);
    std::map<std::string, int64_t> ready_by_rs;
    for (const json::object& p : *pods) {
      const json::value* phase = Find(p, "status.phase");
      if (phase != nullptr && *phase == "Running") {
        ++ready_by_rs[api::ControllerName(p, "ReplicaSet")];
      }
    }
    int64_t specs = 0, replicas = 0, available = 0;
    for (const json::object& rs : ReplicaSets()) {
      int64_t spec = IntAt(rs, "spec.replicas");
      if (IntAt(rs, "status.replicas") != spec ||
          IntAt(rs, "status.observedGeneration") != IntAt(rs, "metadata.generation") ||
          IntAt(rs, "status.availableReplicas") != ready_by_rs[StringAt(rs, "metadata.name")]) {
        return false;
      }
      specs += spec;
      replicas += IntAt(rs, "status.replicas");
      available += IntAt(rs, "status.availableReplicas");
    }
    json::object d = Get();
    return static_cast<int64_t>(pods->size()) == specs &&
           IntAt(d, "status.observedGeneration") == IntAt(d, "metadata.generation") &&
           IntAt(d, "status.replicas") == replicas &&
           IntAt(d, "status.availableReplicas") == available && idle();
  }
  bool RolledOut(int replicas) {
    json::object d = Get();
    return StatusInt("observedGeneration") >= *GetInt(d["metadata"].as_object(), "generation") &&
           StatusInt("updatedReplicas") == replicas && StatusInt("replicas") == replicas &&
           StatusInt("availableReplicas") == replicas;
  }
  json::object Condition(const std::string& type) {
    json::object d = Get();
    const json::value* conds = Find(d, "status.conditions");
    if (conds == nullptr) return {};
    for (const json::value& c : conds->as_array()) {
      if (c.at("type") == json::value(type)) return c.as_object();
    }
    return {};
  }
  std::string Annotation(const json::object& obj, const std::string& key) {
    const json::value* a = Find(obj, "metadata.annotations");
    if (a == nullptr || !a->as_object().contains(key)) return "";
    return std::string(a->as_object().at(key).as_string());
  }
  void RollOut(int replicas) {
    ASSERT_TRUE(Eventually([&] {
      MarkAllReady();
      return RolledOut(replicas);
    }));
  }

  MemberTestEnv env_;
};

TEST_F(DeploymentTest, CreatesAReplicaSetNamedByTheTemplateHashAtRevisionOne) {
  Create(Manifest(3, "nginx:1"));
  ASSERT_TRUE(Eventually([&] { return ActivePods(env_).size() == 3; }));
  std::vector<json::object> rss = ReplicaSets();
  ASSERT_EQ(rss.size(), 1u);
  json::object& rs = rss[0];
  std::string hash(Find(rs, "metadata.labels.pod-template-hash")->as_string());
  EXPECT_EQ(Name(rs), "web-" + hash);
  EXPECT_EQ(*Find(rs, "spec.selector.matchLabels.pod-template-hash"), json::value(hash));
  EXPECT_EQ(*Find(rs, "spec.template.metadata.labels.pod-template-hash"), json::value(hash));
  EXPECT_EQ(Annotation(rs, "deployment.kubernetes.io/revision"), "1");
  EXPECT_EQ(Annotation(rs, "deployment.kubernetes.io/desired-replicas"), "3");
  EXPECT_EQ(Annotation(rs, "deployment.kubernetes.io/max-replicas"), "4");
  EXPECT_EQ(Find(rs, "metadata.ownerReferences")->as_array()[0].at("kind"), "Deployment");
  for (const json::object& pod : ActivePods(env_)) {
    EXPECT_EQ(Name(pod).rfind("web-" + hash + "-", 0), 0u) << Name(pod);
  }
  ASSERT_TRUE(
      Eventually([&] { return Annotation(Get(), "deployment.kubernetes.io/revision") == "1"; }));
  // Created, then progressing as the ReplicaSet's pods appear.
  ASSERT_TRUE(Eventually([&] {
    json::object c = Condition("Progressing");
    return !c.empty() && c.at("reason") == "ReplicaSetUpdated";
  }));
  EXPECT_EQ(Condition("Progressing").at("message"),
            json::value("ReplicaSet \"web-" + hash + "\" is progressing."));
  EXPECT_EQ(Condition("Available").at("reason"), "MinimumReplicasUnavailable");
  EXPECT_EQ(Condition("Available").at("status"), "False");

  RollOut(3);
  ASSERT_TRUE(Eventually([&] {
    return !Condition("Progressing").empty() &&
           Condition("Progressing").at("reason") == "NewReplicaSetAvailable";
  }));
  EXPECT_EQ(Condition("Progressing").at("message"),
            json::value("ReplicaSet \"web-" + hash + "\" has successfully progressed."));
  EXPECT_EQ(Condition("Progressing").at("status"), "True");
  EXPECT_EQ(Condition("Available").at("status"), "True");
  EXPECT_EQ(Condition("Available").at("reason"), "MinimumReplicasAvailable");
  EXPECT_EQ(Condition("Available").at("message"), "Deployment has minimum availability.");
  EXPECT_EQ(StatusInt("readyReplicas"), 3);
  EXPECT_EQ(StatusInt("unavailableReplicas"), 0);
}

// The largest sum of the ReplicaSets' spec.replicas seen by a watch, in
// the order the server wrote them. The watch starts at a list's
// resourceVersion, so no write after the constructor returns is missed,
// however late the server opens the stream.
class ReplicaSetSizes {
 public:
  explicit ReplicaSetSizes(client::Client& client) {
    auto list = client.List(kReplicaSets, "default", {});
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    if (!list.ok()) return;
    for (const json::object& rs : list->items) {
      sizes_[StringAt(rs, "metadata.name")] = IntAt(rs, "spec.replicas");
      most_ += IntAt(rs, "spec.replicas");
    }
    auto watch = client.StartWatch(
        kReplicaSets, "default", {.resource_version = list->resource_version},
        [this](const client::WatchEvent& e) {
          if (e.type == client::WatchEvent::Type::kBookmark) return;
          MutexLock lock(mu_);
          std::string name = StringAt(e.object, "metadata.name");
          if (e.type == client::WatchEvent::Type::kDeleted) {
            sizes_.erase(name);
          } else {
            sizes_[name] = IntAt(e.object, "spec.replicas");
          }
          int64_t sum = 0;
          for (const auto& [_, n] : sizes_) sum += n;
          most_ = std::max(most_, sum);
        },
        [this](const Status& s) {
          MutexLock lock(mu_);
          ended_ = true;
          end_ = s;
        });
    EXPECT_TRUE(watch.ok()) << watch.status().ToString();
    if (watch.ok()) watch_ = std::move(*watch);
  }
  ~ReplicaSetSizes() {
    if (watch_) watch_->Stop();
  }
  int64_t Most() {
    MutexLock lock(mu_);
    EXPECT_FALSE(ended_) << "the watch ended early: " << end_.ToString();
    return most_;
  }

 private:
  Mutex mu_;
  std::map<std::string, int64_t> sizes_ GUARDED_BY(mu_);
  int64_t most_ GUARDED_BY(mu_) = 0;
  bool ended_ GUARDED_BY(mu_) = false;
  Status end_ GUARDED_BY(mu_);
  std::unique_ptr<client::Watch> watch_;
};

// Every settled state of a rolling update keeps pods within replicas +
// maxSurge and ready pods at least replicas - maxUnavailable, and the
// surge is used: the new ReplicaSet grows before the old one shrinks.
TEST_F(DeploymentTest, RollingUpdateStaysWithinSurgeAndUnavailability) {
  json::object d = Manifest(4, "nginx:1");
  d["spec"].as_object()["strategy"] = json::object{
      {"type", "RollingUpdate"}, {"rollingUpdate", {{"maxSurge", 1}, {"maxUnavailable", 1}}}};
  Create(d);
  RollOut(4);
  ReplicaSetSizes sizes(env_.client());
  SetImage("nginx:2");
  int64_t last_old_size = 4;
  for (int step = 0; step < 100 && !RolledOut(4); ++step) {
    std::vector<json::object> pods;
    ASSERT_TRUE(Eventually([&] { return Settled(&pods); })) << "step " << step;
    size_t ready = 0;
    for (const json::object& p : pods) {
      const json::value* phase = Find(p, "status.phase");
      if (phase != nullptr && *phase == "Running") ++ready;
    }
    // The old ReplicaSet only ever shrinks.
    json::object old_rs = ReplicaSetWithImage("nginx:1");
    int64_t old_size = Find(old_rs, "spec.replicas")->as_int64();
    EXPECT_LE(old_size, last_old_size) << "step " << step;
    last_old_size = old_size;
    EXPECT_LE(pods.size(), 5u) << "step " << step;
    EXPECT_GE(ready, 3u) << "step " << step;
    // Make one new pod ready at a time.
    for (const json::object& p : pods) {
      const json::value* phase = Find(p, "status.phase");
      if (phase == nullptr || *phase != "Running") {
        ASSERT_TRUE(SetPodStatus(env_, Name(p), "Running", true));
        break;
      }
    }
  }
  ASSERT_TRUE(Eventually([&] { return RolledOut(4); }));
  EXPECT_EQ(sizes.Most(), 5) << "the surge was used";
  for (const json::object& p : ActivePods(env_)) {
    EXPECT_EQ(Find(p, "spec.containers")->as_array()[0].at("image"), "nginx:2");
  }
  EXPECT_EQ(Annotation(ReplicaSetWithImage("nginx:2"), "deployment.kubernetes.io/revision"), "2");
  EXPECT_EQ(*Find(ReplicaSetWithImage("nginx:1"), "spec.replicas"), 0);
  EXPECT_EQ(Annotation(Get(), "deployment.kubernetes.io/revision"), "2");
}

// Recreate creates no new pod while an old one still exists.
TEST_F(DeploymentTest, RecreateWaitsForOldPodsToBeGone) {
  json::object d = Manifest(2, "nginx:1");
  d["spec"].as_object()["strategy"] = json::object{{"type", "Recreate"}};
  Create(d);
  RollOut(2);
  // One old pod lingers (a finalizer holds it while it terminates).
  std::string lingering = Name(ActivePods(env_)[0]);
  ASSERT_TRUE(env_.client()
                  .Patch(kPods, "default", lingering, client::PatchType::kMerge,
                         R"({"metadata":{"finalizers":["test/hold"]}})")
                  .ok());
  SetImage("nginx:2");
  ASSERT_TRUE(Eventually([&] {
    return *Find(ReplicaSetWithImage("nginx:1"), "spec.replicas") == 0 &&
           StatusInt("replicas") == 0 && ActivePods(env_).empty();
  }));
  EXPECT_TRUE(ReplicaSetWithImage("nginx:2").empty()) << "no new ReplicaSet while old pods exist";
  ASSERT_TRUE(env_.client()
                  .Patch(kPods, "default", lingering, client::PatchType::kMerge,
                         R"({"metadata":{"finalizers":null}})")
                  .ok());
  RollOut(2);
  EXPECT_EQ(*Find(ReplicaSetWithImage("nginx:2"), "spec.replicas"), 2);
}

TEST_F(DeploymentTest, PausedDeploymentHoldsItsRolloutUntilResumed) {
  Create(Manifest(2, "nginx:1"));
  RollOut(2);
  Patch(R"({"spec":{"paused":true}})");
  ASSERT_TRUE(Eventually([&] {
    return !Condition("Progressing").empty() &&
           Condition("Progressing").at("reason") == "DeploymentPaused";
  }));
  EXPECT_EQ(Condition("Progressing").at("status"), "Unknown");
  EXPECT_EQ(Condition("Progressing").at("message"), "Deployment is paused");
  SetImage("nginx:2");
  // The status still follows the spec: the new generation is observed.
  ASSERT_TRUE(Eventually([&] { return StatusInt("observedGeneration") == 3; }));
  EXPECT_EQ(ReplicaSets().size(), 1u);
  EXPECT_TRUE(ReplicaSetWithImage("nginx:2").empty());
  Patch(R"({"spec":{"paused":false}})");
  ASSERT_TRUE(Eventually([&] { return !ReplicaSetWithImage("nginx:2").empty(); }));
  RollOut(2);
  EXPECT_EQ(Annotation(Get(), "deployment.kubernetes.io/revision"), "2");
}

TEST_F(DeploymentTest, ARolloutThatMakesNoProgressExceedsItsDeadline) {
  json::object d = Manifest(2, "nginx:1");
  d["spec"].as_object()["progressDeadlineSeconds"] = 30;
  Create(d);
  RollOut(2);
  SetImage("nginx:2");
  ASSERT_TRUE(Eventually([&] {
    return !Condition("Progressing").empty() &&
           Condition("Progressing").at("reason") == "ReplicaSetUpdated";
  }));
  env_.clock().Advance(std::chrono::seconds(20));
  EXPECT_EQ(Condition("Progressing").at("status"), "True");
  ASSERT_TRUE(Eventually([&] {
    env_.clock().Advance(std::chrono::seconds(1));
    return Condition("Progressing").at("reason") == "ProgressDeadlineExceeded";
  }));
  EXPECT_EQ(Condition("Progressing").at("status"), "False");
  EXPECT_EQ(Condition("Progressing").at("message"),
            json::value("ReplicaSet \"" + Name(ReplicaSetWithImage("nginx:2")) +
                        "\" has timed out progressing."));
}

TEST_F(DeploymentTest, OldReplicaSetsBeyondTheHistoryLimitAreDeleted) {
  json::object d = Manifest(1, "nginx:1");
  d["spec"].as_object()["revisionHistoryLimit"] = 1;
  Create(d);
  RollOut(1);
  for (const std::string image : {"nginx:2", "nginx:3", "nginx:4"}) {
    SetImage(image);
    RollOut(1);
  }
  ASSERT_TRUE(Eventually([&] { return ReplicaSets().size() == 2; }));
  EXPECT_FALSE(ReplicaSetWithImage("nginx:4").empty());
  EXPECT_FALSE(ReplicaSetWithImage("nginx:3").empty()) << "the newest old one is kept";
  EXPECT_EQ(Annotation(Get(), "deployment.kubernetes.io/revision"), "4");
}

// `kubectl rollout undo` writes an old template back: its ReplicaSet
// becomes new again with the next revision.
TEST_F(DeploymentTest, ReturningToAnOldTemplateReusesItsReplicaSet) {
  Create(Manifest(2, "nginx:1"));
  RollOut(2);
  std::string first = Name(ReplicaSetWithImage("nginx:1"));
  SetImage("nginx:2");
  RollOut(2);
  SetImage("nginx:1");
  RollOut(2);
  EXPECT_EQ(ReplicaSets().size(), 2u);
  json::object rs = ReplicaSetWithImage("nginx:1");
  EXPECT_EQ(Name(rs), first);
  EXPECT_EQ(Annotation(rs, "deployment.kubernetes.io/revision"), "3");
  EXPECT_EQ(Annotation(rs, "deployment.kubernetes.io/revision-history"), "1");
  EXPECT_EQ(*Find(rs, "spec.replicas"), 2);
  EXPECT_EQ(Annotation(Get(), "deployment.kubernetes.io/revision"), "3");
}

// A ReplicaSet that is not the Deployment's holds the name its template
// hashes to: a collision. status.collisionCount counts it and the new
// ReplicaSet takes the next hash; the other one is left alone.
TEST_F(DeploymentTest, ANameTakenByAnotherReplicaSetIsAHashCollision) {
  // Paused, the Deployment makes no ReplicaSet: there is time to take the
  // name its (defaulted) template hashes to.
  json::object d = Manifest(2, "nginx:1");
  d["spec"].as_object()["paused"] = true;
  Create(d);
  json::object tmpl = Find(Get(), "spec.template")->as_object();
  std::string taken = "web-" + deployment::ComputeHash(tmpl, std::nullopt);
  std::string name = "web-" + deployment::ComputeHash(tmpl, 1);
  ASSERT_TRUE(env_.client()
                  .Create(kReplicaSets, "default", testing::ReplicaSetManifest(taken, 0, "other"))
                  .ok());
  Patch(R"({"spec":{"paused":false}})");
  RollOut(2);
  EXPECT_EQ(StatusInt("collisionCount"), 1);
  auto rs = env_.client().Get(kReplicaSets, "default", name);
  ASSERT_TRUE(rs.ok()) << rs.status().ToString();
  EXPECT_EQ(*Find(*rs, "spec.replicas"), 2);
  EXPECT_EQ(Find(*rs, "metadata.ownerReferences")->as_array()[0].at("kind"), "Deployment");
  auto other = env_.client().Get(kReplicaSets, "default", taken);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(*Find(*other, "spec.replicas"), 0);
  EXPECT_EQ(Find(*other, "metadata.ownerReferences"), nullptr);
}

TEST_F(DeploymentTest, ScalingResizesTheOnlyActiveReplicaSet) {
  Create(Manifest(2, "nginx:1"));
  RollOut(2);
  Patch(R"({"spec":{"replicas":5}})");
  RollOut(5);
  json::object rs = ReplicaSetWithImage("nginx:1");
  EXPECT_EQ(Annotation(rs, "deployment.kubernetes.io/desired-replicas"), "5");
  EXPECT_EQ(ReplicaSets().size(), 1u);
}

// A replica change in the middle of a rollout is spread over the
// ReplicaSets in proportion to their sizes (kube's getProportion). Paused,
// so nothing else moves.
TEST_F(DeploymentTest, ScalingMidRolloutIsProportional) {
  Create(Manifest(10, "nginx:1"));  // maxSurge 25% -> 3, maxUnavailable 25% -> 2
  RollOut(10);
  SetImage("nginx:2");
  // New pods never turn ready: 3 new (surge), old down to 10 - 2 = 8, then
  // new up to 5 (13 in all).
  auto sizes = [&] {
    json::object old_rs = ReplicaSetWithImage("nginx:1"), new_rs = ReplicaSetWithImage("nginx:2");
    if (old_rs.empty() || new_rs.empty()) return std::make_pair(int64_t{-1}, int64_t{-1});
    return std::make_pair(Find(old_rs, "spec.replicas")->as_int64(),
                          Find(new_rs, "spec.replicas")->as_int64());
  };
  // The controller must have seen both sizes before the pause: it scales
  // from its cache, and a cache that still held new at 3 would spread the
  // change over stale sizes (and then conflict). The Deployment's status
  // counts 5 updated and 13 in all only from ReplicaSets whose pods
  // followed those specs.
  ASSERT_TRUE(Eventually([&] {
    return sizes() == std::make_pair(int64_t{8}, int64_t{5}) && StatusInt("updatedReplicas") == 5 &&
           StatusInt("replicas") == 13;
  }));
  Patch(R"({"spec":{"paused":true}})");
  Patch(R"({"spec":{"replicas":20}})");
  // 25 allowed (20 + 5 surge), 12 to add, each in proportion to its size
  // against the 13 it was sized for: old 8 * 25 / 13 -> 15, new
  // 5 * 25 / 13 -> 10 (rounded).
  ASSERT_TRUE(Eventually([&] { return sizes() == std::make_pair(int64_t{15}, int64_t{10}); }))
      << "old " << sizes().first << ", new " << sizes().second;
  for (const std::string image : {"nginx:1", "nginx:2"}) {
    json::object rs = ReplicaSetWithImage(image);
    EXPECT_EQ(Annotation(rs, "deployment.kubernetes.io/desired-replicas"), "20");
    EXPECT_EQ(Annotation(rs, "deployment.kubernetes.io/max-replicas"), "25");
  }
}

}  // namespace
}  // namespace flotilla::member
