// The StatefulSet controller against a member's API without a kubelet: the
// tests play the kubelet, making pods Running and Ready when they choose,
// and read the controller's writes through the API and a pod watch.
#include "member/statefulset/statefulset_controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/claims.h"
#include "base/mutex.h"
#include "member/object_util.h"
#include "member/statefulset/volume_binder.h"
#include "member/test_util.h"
#include "runtime/controller_history.h"
#include "runtime/test_util.h"

namespace flotilla::member {
namespace {

using runtime::testing::Eventually;
using ::testing::ElementsAre;

using testing::Parse;

// A web StatefulSet of `replicas` nginx pods behind service "nginx".
json::object WebSet(int replicas, std::string_view policy = "OrderedReady",
                    std::string_view extra_spec = "") {
  std::string text = R"({"apiVersion":"apps/v1","kind":"StatefulSet",
    "metadata":{"name":"web","namespace":"default"},
    "spec":{"serviceName":"nginx","replicas":)" +
                     std::to_string(replicas) + R"(,"podManagementPolicy":")" +
                     std::string(policy) + R"(",
      "selector":{"matchLabels":{"app":"nginx"}},)" +
                     std::string(extra_spec) + R"(
      "template":{"metadata":{"labels":{"app":"nginx"}},
        "spec":{"containers":[{"name":"nginx","image":"nginx:1.25",
          "ports":[{"name":"web","containerPort":80}]}]}}}})";
  return Parse(text);
}

// Records pod watch events as "ADDED web-0", "DELETED web-2", ...
class PodLog {
 public:
  explicit PodLog(client::Client& client) {
    auto watch = client.StartWatch(
        kPods, "default", {},
        [this](const client::WatchEvent& e) {
          static constexpr const char* kNames[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK",
                                                   "ERROR"};
          if (e.type == client::WatchEvent::Type::kModified ||
              e.type == client::WatchEvent::Type::kBookmark) {
            return;
          }
          MutexLock lock(mu_);
          lines_.push_back(std::string(kNames[static_cast<int>(e.type)]) + " " +
                           StringAt(e.object, "metadata.name"));
        },
        [](const Status&) {});
    EXPECT_TRUE(watch.ok()) << watch.status().ToString();
    if (watch.ok()) watch_ = std::move(*watch);
  }
  ~PodLog() {
    if (watch_) watch_->Stop();
  }
  std::vector<std::string> Lines() {
    MutexLock lock(mu_);
    return lines_;
  }

 private:
  Mutex mu_;
  std::vector<std::string> lines_ GUARDED_BY(mu_);
  std::unique_ptr<client::Watch> watch_;
};

class StatefulSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.Add<StatefulSetController>();
    env_.Add<VolumeBinder>();
    ASSERT_TRUE(env_.Start().ok());
    log_ = std::make_unique<PodLog>(env_.client());
  }
  void TearDown() override {
    log_.reset();
    env_.Stop();
  }

  client::Client& api() { return env_.client(); }

  void Create(const json::object& set) {
    StatusOr<json::object> made = api().Create(kStatefulSets, "default", set);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
  }

  std::optional<json::object> Get(const client::ResourceRef& res, const std::string& name) {
    StatusOr<json::object> o = api().Get(res, "default", name);
    if (!o.ok()) return std::nullopt;
    return *o;
  }

  json::object Set() { return Get(kStatefulSets, "web").value_or(json::object()); }

  std::vector<std::string> PodNames() {
    std::vector<std::string> out;
    StatusOr<client::ObjectList> list = api().List(kPods, "default", {});
    if (!list.ok()) return out;
    for (const json::object& p : list->items) out.push_back(StringAt(p, "metadata.name"));
    std::sort(out.begin(), out.end());
    return out;
  }

  // Plays the kubelet for one pod: Running and Ready with an IP.
  void MakeReady(const std::string& name) {
    std::optional<json::object> pod = Get(kPods, name);
    ASSERT_TRUE(pod.has_value()) << name;
    SetPhase(*pod, "Running", true);
  }

  void SetPhase(json::object pod, std::string_view phase, bool ready) {
    std::string now = FormatRfc3339(env_.clock().Now());
    pod["status"] =
        json::object{{"phase", phase},
                     {"podIP", "10.244.0." + std::to_string(++next_ip_)},
                     {"conditions", json::array{json::object{{"type", "Ready"},
                                                             {"status", ready ? "True" : "False"},
                                                             {"lastTransitionTime", now}}}}};
    StatusOr<json::object> written = api().UpdateStatus(kPods, "default", pod);
    EXPECT_TRUE(written.ok()) << written.status().ToString();
  }

  // Makes every pod that is not yet Running Ready; returns how many.
  int ReadyAll() {
    int n = 0;
    StatusOr<client::ObjectList> list = api().List(kPods, "default", {});
    if (!list.ok()) return 0;
    for (const json::object& p : list->items) {
      if (StringAt(p, "status.phase") == "Running" ||
          !StringAt(p, "metadata.deletionTimestamp").empty())
        continue;
      SetPhase(p, "Running", true);
      ++n;
    }
    return n;
  }

  // Retried: the scale write may race the controller's status write
  // (Conflict), as a client's would.
  void Scale(int replicas) {
    ASSERT_TRUE(Eventually(
        [&] { return api().UpdateScale(kStatefulSets, "default", "web", replicas).ok(); }));
  }

  void Patch(const std::string& patch) {
    StatusOr<json::object> s =
        api().Patch(kStatefulSets, "default", "web", client::PatchType::kMerge, patch);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
  }

  // Brings a fresh set to `n` Running and Ready pods.
  void RunToReady(int n) {
    ASSERT_TRUE(Eventually([&] {
      ReadyAll();
      json::object set = Set();
      return IntAt(set, "status.readyReplicas") == n && IntAt(set, "status.replicas") == n;
    })) << ToJson(Set());
  }

  std::vector<std::string> Log() { return log_->Lines(); }

  testing::MemberTestEnv env_;
  std::unique_ptr<PodLog> log_;
  int next_ip_ = 0;
};

TEST_F(StatefulSetTest, OrderedReadyCreatesEachPodAfterItsPredecessorIsReady) {
  Create(WebSet(3));
  ASSERT_TRUE(Eventually([&] { return IntAt(Set(), "status.replicas") == 1; }));
  EXPECT_THAT(PodNames(), ElementsAre("web-0"));
  MakeReady("web-0");
  ASSERT_TRUE(Eventually([&] { return PodNames().size() == 2; }));
  ASSERT_TRUE(Eventually([&] { return IntAt(Set(), "status.replicas") == 2; }));
  EXPECT_THAT(PodNames(), ElementsAre("web-0", "web-1"));
  MakeReady("web-1");
  ASSERT_TRUE(Eventually([&] { return PodNames().size() == 3; }));
  MakeReady("web-2");
  ASSERT_TRUE(Eventually([&] { return IntAt(Set(), "status.readyReplicas") == 3; }));
  ASSERT_TRUE(Eventually([&] { return Log().size() >= 3; }));
  EXPECT_THAT(Log(), ElementsAre("ADDED web-0", "ADDED web-1", "ADDED web-2"));
}

TEST_F(StatefulSetTest, MinReadySecondsDelaysAvailabilityAndTheNextPod) {
  Create(WebSet(2, "OrderedReady", R"("minReadySeconds":10,)"));
  ASSERT_TRUE(Eventually([&] { return Get(kPods, "web-0").has_value(); }));
  MakeReady("web-0");
  ASSERT_TRUE(Eventually([&] { return IntAt(Set(), "status.readyReplicas") == 1; }));
  EXPECT_EQ(IntAt(Set(), "status.availableReplicas"), 0);
  EXPECT_THAT(PodNames(), ElementsAre("web-0"));
  // The controller re-checks when the pod has been ready for 10 s; moving
  // the clock in steps keeps the test independent of when it asked.
  ASSERT_TRUE(Eventually([&] {
    env_.clock().Advance(std::chrono::milliseconds(100));
    return IntAt(Set(), "status.availableReplicas") == 1;
  }));
  ASSERT_TRUE(Eventually([&] { return PodNames().size() == 2; }));
}

TEST_F(StatefulSetTest, PodsHaveStableIdentity) {
  Create(WebSet(1));
  ASSERT_TRUE(Eventually([&] { return Get(kPods, "web-0").has_value(); }));
  json::object pod = *Get(kPods, "web-0");
  json::object set = Set();
  EXPECT_EQ(StringAt(pod, "spec.hostname"), "web-0");
  EXPECT_EQ(StringAt(pod, "spec.subdomain"), "nginx");
  EXPECT_EQ(StringAt(pod, "metadata.labels.app"), "nginx");
  const json::object& labels = Find(pod, "metadata.labels")->get_object();
  EXPECT_EQ(labels.at("statefulset.kubernetes.io/pod-name"), "web-0");
  EXPECT_EQ(labels.at("apps.kubernetes.io/pod-index"), "0");
  ASSERT_TRUE(Eventually([&] { return !StringAt(Set(), "status.updateRevision").empty(); }));
  EXPECT_EQ(std::string(labels.at("controller-revision-hash").as_string()),
            StringAt(Set(), "status.updateRevision"));
  const json::value* owner = Find(pod, "metadata.ownerReferences");
  ASSERT_NE(owner, nullptr);
  const json::object& ref = owner->get_array().at(0).get_object();
  EXPECT_EQ(StringAt(ref, "kind"), "StatefulSet");
  EXPECT_EQ(StringAt(ref, "name"), "web");
  EXPECT_EQ(StringAt(ref, "uid"), StringAt(set, "metadata.uid"));
  EXPECT_EQ(GetBool(ref, "controller"), true);
}

TEST_F(StatefulSetTest, StatusAndRevisions) {
  Create(WebSet(3));
  RunToReady(3);
  json::object set = Set();
  std::string revision = StringAt(set, "status.currentRevision");
  EXPECT_THAT(revision, ::testing::StartsWith("web-"));
  EXPECT_EQ(StringAt(set, "status.updateRevision"), revision);
  EXPECT_EQ(IntAt(set, "status.currentReplicas"), 3);
  EXPECT_EQ(IntAt(set, "status.updatedReplicas"), 3);
  EXPECT_EQ(IntAt(set, "status.availableReplicas"), 3);
  EXPECT_EQ(IntAt(set, "status.observedGeneration"), IntAt(set, "metadata.generation"));
  ASSERT_NE(Find(set, "status.collisionCount"), nullptr);
  EXPECT_EQ(IntAt(set, "status.collisionCount"), 0);
  std::optional<json::object> rev = Get(runtime::kControllerRevisions, revision);
  ASSERT_TRUE(rev.has_value());
  EXPECT_EQ(IntAt(*rev, "revision"), 1);
  EXPECT_EQ(StringAt(*rev, "data.spec.template.$patch"), "replace");
  EXPECT_EQ(Find(*rev, "metadata.ownerReferences")->get_array().at(0).at("name"), "web");
}

TEST_F(StatefulSetTest, ScaleDownRemovesTheHighestOrdinalFirst) {
  Create(WebSet(3));
  RunToReady(3);
  Scale(1);
  ASSERT_TRUE(Eventually([&] { return PodNames().size() == 1; }));
  EXPECT_THAT(PodNames(), ElementsAre("web-0"));
  ASSERT_TRUE(Eventually([&] { return Log().size() == 5; }));
  EXPECT_THAT(Log(), ElementsAre("ADDED web-0", "ADDED web-1", "ADDED web-2", "DELETED web-2",
                                 "DELETED web-1"));
  ASSERT_TRUE(Eventually([&] { return IntAt(Set(), "status.replicas") == 1; }));
}

TEST_F(StatefulSetTest, OrderedScaleDownWaitsWhileAPodIsNotReady) {
  Create(WebSet(3));
  RunToReady(3);
  SetPhase(*Get(kPods, "web-0"), "Running", false);
  ASSERT_TRUE(Eventually([&] { return IntAt(Set(), "status.readyReplicas") == 2; }));
  Scale(1);
  ASSERT_TRUE(Eventually([&] {
    json::object set = Set();
    return IntAt(set, "status.observedGeneration") == IntAt(set, "metadata.generation");
  }));
  EXPECT_EQ(PodNames().size(), 3u);
  MakeReady("web-0");
  ASSERT_TRUE(Eventually([&] { return PodNames().size() == 1; }));
}

TEST_F(StatefulSetTest, ParallelCreatesAndDeletesAllAtOnce) {
  Create(WebSet(3, "Parallel"));
  ASSERT_TRUE(Eventually([&] { return PodNames().size() == 3; }));
  EXPECT_THAT(PodNames(), ElementsAre("web-0", "web-1", "web-2"));
  Scale(0);
  ASSERT_TRUE(Eventually([&] { return PodNames().empty(); }));
}

TEST_F(StatefulSetTest, ClaimsAreCreatedBoundAndRetainedAfterScaleDown) {
  Create(WebSet(2, "OrderedReady", R"("volumeClaimTemplates":[{"metadata":{"name":"www"},
      "spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}],)"));
  RunToReady(2);
  for (std::string name : {"www-web-0", "www-web-1"}) {
    ASSERT_TRUE(Eventually([&] {
      std::optional<json::object> c = Get(kPersistentVolumeClaims, name);
      return c && StringAt(*c, "status.phase") == "Bound";
    })) << name;
    json::object claim = *Get(kPersistentVolumeClaims, name);
    EXPECT_EQ(StringAt(claim, "spec.volumeName"), "pvc-" + StringAt(claim, "metadata.uid"));
    EXPECT_EQ(StringAt(claim, "status.capacity.storage"), "1Gi");
    EXPECT_EQ(Find(claim, "status.accessModes")->get_array().at(0), "ReadWriteOnce");
    EXPECT_EQ(StringAt(claim, "metadata.labels.app"), "nginx");
  }
  json::object pod = *Get(kPods, "web-1");
  const json::array& volumes = Find(pod, "spec.volumes")->get_array();
  ASSERT_FALSE(volumes.empty());
  EXPECT_EQ(StringAt(volumes.at(0).get_object(), "name"), "www");
  EXPECT_EQ(StringAt(volumes.at(0).get_object(), "persistentVolumeClaim.claimName"), "www-web-1");
  Scale(0);
  ASSERT_TRUE(Eventually([&] { return PodNames().empty(); }));
  EXPECT_TRUE(Get(kPersistentVolumeClaims, "www-web-0").has_value());
  EXPECT_TRUE(Get(kPersistentVolumeClaims, "www-web-1").has_value());
}

// pvc-protection: a claim has the finalizer from its create and, deleted,
// stays while a scheduled pod names it, finished or not, until the pod is
// deleted; a bound claim's growth is its new capacity.
TEST_F(StatefulSetTest, AClaimInUseStaysUntilNoPodUsesIt) {
  ASSERT_TRUE(
      api()
          .Create(kPersistentVolumeClaims, "default", Parse(R"({"metadata":{"name":"data"},"spec":{
                              "accessModes":["ReadWriteOnce"],
                              "resources":{"requests":{"storage":"1Gi"}}}})"))
          .ok());
  ASSERT_TRUE(Eventually([&] {
    std::optional<json::object> c = Get(kPersistentVolumeClaims, "data");
    return c && StringAt(*c, "status.phase") == "Bound";
  }));
  EXPECT_EQ(Find(*Get(kPersistentVolumeClaims, "data"), "metadata.finalizers")->get_array(),
            json::array{"kubernetes.io/pvc-protection"});
  ASSERT_TRUE(api()
                  .Patch(kPersistentVolumeClaims, "default", "data", client::PatchType::kMerge,
                         R"({"spec":{"resources":{"requests":{"storage":"2Gi"}}}})")
                  .ok());
  ASSERT_TRUE(Eventually([&] {
    return StringAt(*Get(kPersistentVolumeClaims, "data"), "status.capacity.storage") == "2Gi";
  }));

  ASSERT_TRUE(api()
                  .Create(kPods, "default", Parse(R"({"metadata":{"name":"db"},
                      "spec":{"nodeName":"node-1","containers":[{"name":"db","image":"postgres"}],
                      "volumes":[{"name":"d","persistentVolumeClaim":{"claimName":"data"}}]}})"))
                  .ok());
  MakeReady("db");
  ASSERT_TRUE(api().Delete(kPersistentVolumeClaims, "default", "data").ok());
  ASSERT_TRUE(Eventually([&] {
    std::optional<json::object> c = Get(kPersistentVolumeClaims, "data");
    return c && !StringAt(*c, "metadata.deletionTimestamp").empty();
  }));
  // The pod runs, then ends: it still holds the claim until it is deleted.
  SetPhase(*Get(kPods, "db"), "Succeeded", false);
  ASSERT_TRUE(
      Eventually([&] { return StringAt(*Get(kPods, "db"), "status.phase") == "Succeeded"; }));
  EXPECT_TRUE(Get(kPersistentVolumeClaims, "data").has_value());
  client::DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(api().Delete(kPods, "default", "db", now).ok());
  EXPECT_TRUE(Eventually([&] { return !Get(kPersistentVolumeClaims, "data").has_value(); }));
}

// Whether an event of `reason` about the claim `name` was written.
bool ClaimEvent(client::Client& api, const std::string& name, const std::string& reason) {
  StatusOr<client::ObjectList> events = api.List(client::kEvents, "default", {});
  if (!events.ok()) return false;
  for (const json::object& e : events->items) {
    if (StringAt(e, "involvedObject.name") == name && StringAt(e, "reason") == reason) return true;
  }
  return false;
}

// Claims bind by their class: the default class "standard" is given to a
// claim without one; a claim of a class that does not exist, or of no
// class, waits (with kube's event); a WaitForFirstConsumer class binds at
// the first scheduled pod, on its node; growing needs a class that allows
// expansion.
TEST_F(StatefulSetTest, ClaimsBindByTheirStorageClass) {
  ASSERT_TRUE(Eventually([&] { return api().Get(kStorageClasses, "", "standard").ok(); }));
  json::object standard = *api().Get(kStorageClasses, "", "standard");
  EXPECT_EQ(StringAt(standard, "provisioner"), "flotilla.io/simulated");
  EXPECT_TRUE(api::IsDefaultStorageClass(standard));
  auto claim = [&](const std::string& name, const std::string& cls) {
    std::string class_field = cls == "-" ? "" : R"("storageClassName":")" + cls + R"(",)";
    StatusOr<json::object> made = api().Create(
        kPersistentVolumeClaims, "default",
        Parse(R"({"metadata":{"name":")" + name + R"("},"spec":{)" + class_field +
              R"("accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}})"));
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    return made.ok() ? *made : json::object();
  };
  auto phase = [&](const std::string& name) {
    return StringAt(Get(kPersistentVolumeClaims, name).value_or(json::object()), "status.phase");
  };

  EXPECT_EQ(StringAt(claim("plain", "-"), "spec.storageClassName"), "standard");
  ASSERT_TRUE(Eventually([&] { return phase("plain") == "Bound"; }));
  json::object plain = *Get(kPersistentVolumeClaims, "plain");
  EXPECT_EQ(Find(plain, "metadata.annotations")
                ->get_object()
                .at("volume.kubernetes.io/storage-provisioner"),
            json::value("flotilla.io/simulated"));
  ASSERT_TRUE(api()
                  .Patch(kPersistentVolumeClaims, "default", "plain", client::PatchType::kMerge,
                         R"({"spec":{"resources":{"requests":{"storage":"3Gi"}}}})")
                  .ok());

  claim("none", "");
  claim("later", "slow");
  ASSERT_TRUE(Eventually([&] { return ClaimEvent(api(), "none", "FailedBinding"); }));
  ASSERT_TRUE(Eventually([&] { return ClaimEvent(api(), "later", "ProvisioningFailed"); }));
  EXPECT_EQ(phase("none"), "Pending");
  EXPECT_EQ(phase("later"), "Pending");

  ASSERT_TRUE(api()
                  .Create(kStorageClasses, "",
                          Parse(R"({"metadata":{"name":"slow"},"provisioner":"example.com/hdd",
                                   "volumeBindingMode":"WaitForFirstConsumer"})"))
                  .ok());
  ASSERT_TRUE(Eventually([&] { return ClaimEvent(api(), "later", "WaitForFirstConsumer"); }));
  EXPECT_EQ(phase("later"), "Pending");
  ASSERT_TRUE(api()
                  .Create(kPods, "default", Parse(R"({"metadata":{"name":"db"},
                      "spec":{"nodeName":"node-2","containers":[{"name":"db","image":"postgres"}],
                      "volumes":[{"name":"d","persistentVolumeClaim":{"claimName":"later"}}]}})"))
                  .ok());
  ASSERT_TRUE(Eventually([&] { return phase("later") == "Bound"; }));
  json::object later = *Get(kPersistentVolumeClaims, "later");
  const json::object& notes = Find(later, "metadata.annotations")->get_object();
  EXPECT_EQ(notes.at("volume.kubernetes.io/selected-node"), json::value("node-2"));
  EXPECT_EQ(notes.at("volume.kubernetes.io/storage-provisioner"), json::value("example.com/hdd"));
  // "slow" does not allow expansion; "standard" does (plain grew above).
  StatusOr<json::object> grown =
      api().Patch(kPersistentVolumeClaims, "default", "later", client::PatchType::kMerge,
                  R"({"spec":{"resources":{"requests":{"storage":"2Gi"}}}})");
  EXPECT_TRUE(grown.status().Is(Reason::kForbidden)) << grown.status().ToString();
  EXPECT_EQ(grown.status().message(),
            "persistentvolumeclaims \"later\" is forbidden: only dynamically provisioned pvc can "
            "be resized and the storageclass that provisions the pvc must support resize");
  EXPECT_TRUE(Eventually([&] {
    return StringAt(*Get(kPersistentVolumeClaims, "plain"), "status.capacity.storage") == "3Gi";
  }));
}

TEST_F(StatefulSetTest, WhenScaledDeleteRemovesTheClaims) {
  Create(WebSet(2, "Parallel", R"("persistentVolumeClaimRetentionPolicy":{"whenScaled":"Delete"},
      "volumeClaimTemplates":[{"metadata":{"name":"www"},
      "spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}],)"));
  ASSERT_TRUE(Eventually([&] { return Get(kPersistentVolumeClaims, "www-web-1").has_value(); }));
  Scale(1);
  ASSERT_TRUE(Eventually([&] { return !Get(kPersistentVolumeClaims, "www-web-1").has_value(); }));
  EXPECT_TRUE(Get(kPersistentVolumeClaims, "www-web-0").has_value());
}

TEST_F(StatefulSetTest, RollingUpdateWithPartitionUpdatesHighOrdinalsHighestFirst) {
  Create(WebSet(3));
  RunToReady(3);
  std::string old_revision = StringAt(Set(), "status.currentRevision");
  Patch(R"({"spec":{"updateStrategy":{"rollingUpdate":{"partition":1}},
      "template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.26"}]}}}})");
  ASSERT_TRUE(Eventually([&] {
    ReadyAll();
    return IntAt(Set(), "status.updatedReplicas") == 2 && IntAt(Set(), "status.readyReplicas") == 3;
  })) << ToJson(Set());
  json::object set = Set();
  std::string new_revision = StringAt(set, "status.updateRevision");
  EXPECT_NE(new_revision, old_revision);
  EXPECT_EQ(StringAt(set, "status.currentRevision"), old_revision);
  EXPECT_EQ(IntAt(set, "status.currentReplicas"), 1);
  auto revision_of = [&](const std::string& name) {
    return StringAt(*Get(kPods, name), "metadata.labels.controller-revision-hash");
  };
  EXPECT_EQ(revision_of("web-0"), old_revision);
  EXPECT_EQ(revision_of("web-1"), new_revision);
  EXPECT_EQ(revision_of("web-2"), new_revision);
  EXPECT_EQ(Find(*Get(kPods, "web-2"), "spec.containers")->get_array().at(0).at("image"),
            "nginx:1.26");
  // The pod log is a watch of its own: it can lag the set's status.
  std::vector<std::string> deleted;
  ASSERT_TRUE(Eventually([&] {
    deleted.clear();
    for (const std::string& line : Log()) {
      if (line.starts_with("DELETED")) deleted.push_back(line);
    }
    return deleted.size() >= 2;
  })) << ::testing::PrintToString(Log());
  EXPECT_THAT(deleted, ElementsAre("DELETED web-2", "DELETED web-1"));

  Patch(R"({"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}})");
  ASSERT_TRUE(Eventually([&] {
    ReadyAll();
    json::object s = Set();
    return StringAt(s, "status.currentRevision") == new_revision &&
           IntAt(s, "status.currentReplicas") == 3 && IntAt(s, "status.readyReplicas") == 3;
  })) << ToJson(Set());
  EXPECT_EQ(revision_of("web-0"), new_revision);
}

TEST_F(StatefulSetTest, OnDeleteUpdatesOnlyDeletedPods) {
  Create(WebSet(2, "OrderedReady", R"("updateStrategy":{"type":"OnDelete"},)"));
  RunToReady(2);
  std::string old_revision = StringAt(Set(), "status.currentRevision");
  Patch(R"({"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.26"}]}}}})");
  ASSERT_TRUE(Eventually([&] { return StringAt(Set(), "status.updateRevision") != old_revision; }));
  std::string new_revision = StringAt(Set(), "status.updateRevision");
  EXPECT_EQ(StringAt(*Get(kPods, "web-1"), "metadata.labels.controller-revision-hash"),
            old_revision);
  ASSERT_TRUE(api().Delete(kPods, "default", "web-1").ok());
  ASSERT_TRUE(Eventually([&] {
    std::optional<json::object> pod = Get(kPods, "web-1");
    return pod && StringAt(*pod, "metadata.labels.controller-revision-hash") == new_revision;
  }));
  EXPECT_EQ(StringAt(*Get(kPods, "web-0"), "metadata.labels.controller-revision-hash"),
            old_revision);
}

TEST_F(StatefulSetTest, FailedOrDeletedPodIsRecreatedWithTheSameName) {
  Create(WebSet(2));
  RunToReady(2);
  std::string uid = StringAt(*Get(kPods, "web-1"), "metadata.uid");
  SetPhase(*Get(kPods, "web-1"), "Failed", false);
  ASSERT_TRUE(Eventually([&] {
    std::optional<json::object> pod = Get(kPods, "web-1");
    return pod && StringAt(*pod, "metadata.uid") != uid;
  }));
  uid = StringAt(*Get(kPods, "web-0"), "metadata.uid");
  ASSERT_TRUE(api().Delete(kPods, "default", "web-0").ok());
  ASSERT_TRUE(Eventually([&] {
    std::optional<json::object> pod = Get(kPods, "web-0");
    return pod && StringAt(*pod, "metadata.uid") != uid;
  }));
}

TEST_F(StatefulSetTest, AdoptsOrphanedPodsOfItsName) {
  json::object orphan = Parse(R"({"apiVersion":"v1","kind":"Pod",
      "metadata":{"name":"web-0","labels":{"app":"nginx"}},
      "spec":{"containers":[{"name":"nginx","image":"nginx:1.25"}]}})");
  StatusOr<json::object> made = api().Create(kPods, "default", orphan);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  std::string uid = StringAt(*made, "metadata.uid");
  MakeReady("web-0");
  Create(WebSet(2));
  ASSERT_TRUE(Eventually([&] {
    std::optional<json::object> pod = Get(kPods, "web-0");
    return pod && Find(*pod, "metadata.ownerReferences") != nullptr;
  }));
  json::object pod = *Get(kPods, "web-0");
  EXPECT_EQ(StringAt(pod, "metadata.uid"), uid);
  EXPECT_EQ(Find(pod, "metadata.ownerReferences")->get_array().at(0).at("uid"),
            json::value(StringAt(Set(), "metadata.uid")));
  ASSERT_TRUE(Eventually([&] { return PodNames().size() == 2; }));
}

TEST_F(StatefulSetTest, DeletingTheSetRemovesItsPodsAndKeepsItsClaims) {
  Create(WebSet(1, "OrderedReady", R"("volumeClaimTemplates":[{"metadata":{"name":"www"},
      "spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}],)"));
  ASSERT_TRUE(Eventually([&] { return PodNames().size() == 1; }));
  client::DeleteOptions opts;
  opts.propagation_policy = "Background";
  ASSERT_TRUE(api().Delete(kStatefulSets, "default", "web", opts).ok());
  ASSERT_TRUE(Eventually([&] { return PodNames().empty(); }));
  EXPECT_TRUE(Get(kPersistentVolumeClaims, "www-web-0").has_value());
}

}  // namespace
}  // namespace flotilla::member
