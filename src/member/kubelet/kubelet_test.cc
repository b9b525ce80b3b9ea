// The simulated kubelet on a FakeClock: start-up delay, pod IPs, readiness
// delay, graceful deletion, crash loops, pods it must leave alone.
#include "member/kubelet/kubelet.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "member/kubelet/pod_dependencies.h"
#include "member/object_util.h"
#include "member/test_util.h"
#include "runtime/test_util.h"

namespace flotilla::member {
namespace {

using runtime::testing::Eventually;

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::Parse;

std::string ConditionStatus(const json::object& pod, std::string_view type) {
  const json::value* c = Find(pod, "status.conditions");
  if (c == nullptr || !c->is_array()) return "";
  for (const json::value& e : c->get_array()) {
    if (StringAt(e.as_object(), "type") == type) return StringAt(e.as_object(), "status");
  }
  return "";
}

const json::object& FirstContainer(const json::object& pod) {
  return Find(pod, "status.containerStatuses")->as_array()[0].as_object();
}

class KubeletTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.options().pod_startup = std::chrono::seconds(2);
    kubelet_ = &env_.Add<Kubelet>();
    ASSERT_TRUE(env_.Start().ok());
    AddNode("n1", "10.0.0.2");
  }

  void AddNode(const std::string& name, const std::string& ip) {
    json::object node = {
        {"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", json::object{{"name", name}}}};
    ASSERT_TRUE(env_.client().Create(kNodes, "", node).ok());
    std::string status = R"({"status":{"addresses":[{"type":"InternalIP","address":")" + ip +
                         R"("}],"conditions":[{"type":"Ready","status":"True"}]}})";
    ASSERT_TRUE(
        env_.client().Patch(kNodes, "", name, client::PatchType::kMerge, status, "status").ok());
  }

  // A pod bound to n1 at creation.
  void AddPod(const std::string& name, std::string_view annotations = "{}",
              std::string_view container_extra = "{}") {
    json::object container = Parse(container_extra);
    container["name"] = "web";
    container["image"] = "nginx:1.27";
    json::object pod = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", json::object{{"name", name}, {"annotations", Parse(annotations)}}},
        {"spec", json::object{{"nodeName", "n1"},
                              {"terminationGracePeriodSeconds", 30},
                              {"containers", json::array{container}}}}};
    auto created = env_.client().Create(kPods, "default", pod);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  json::object Pod(const std::string& name) {
    auto pod = env_.client().Get(kPods, "default", name);
    return pod.ok() ? *pod : json::object{};
  }

  bool Gone(const std::string& name) {
    return env_.client().Get(kPods, "default", name).status().Is(Reason::kNotFound);
  }

  bool RunningAndReady(const std::string& name) {
    return Eventually([&] {
      json::object pod = Pod(name);
      return StringAt(pod, "status.phase") == "Running" && ConditionStatus(pod, "Ready") == "True";
    });
  }

  // Moves the clock once the kubelet has nothing queued or in progress, so
  // that no reconcile measures its next delay from before the move.
  void Advance(Duration d) {
    runtime::Controller* kubelet = env_.manager().Find("kubelet");
    Eventually([&] {
      runtime::ControllerMetrics m = kubelet->Metrics();
      return m.busy_workers == 0 && m.queue.depth == 0;
    });
    env_.clock().Advance(d);
  }

  testing::MemberTestEnv env_;
  Kubelet* kubelet_ = nullptr;
};

TEST_F(KubeletTest, BoundPodRunsAndIsReadyAfterTheStartupDelay) {
  AddPod("web");
  // The node's address may reach the kubelet after the pod: it follows.
  ASSERT_TRUE(Eventually([&] {
    json::object pod = Pod("web");
    return Find(pod, "status.containerStatuses") != nullptr &&
           StringAt(pod, "status.hostIP") == "10.0.0.2";
  }));
  json::object pending = Pod("web");
  EXPECT_EQ(StringAt(pending, "status.phase"), "Pending");
  EXPECT_EQ(StringAt(FirstContainer(pending), "state.waiting.reason"), "ContainerCreating");
  EXPECT_EQ(StringAt(pending, "status.hostIP"), "10.0.0.2");
  EXPECT_EQ(StringAt(pending, "status.podIP"), "");
  EXPECT_EQ(ConditionStatus(pending, "Ready"), "False");

  Advance(std::chrono::seconds(2));
  ASSERT_TRUE(RunningAndReady("web"));
  json::object pod = Pod("web");
  for (std::string_view type :
       {"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"}) {
    EXPECT_EQ(ConditionStatus(pod, type), "True") << type;
  }
  EXPECT_TRUE(StringAt(pod, "status.podIP").starts_with("10.244."));
  EXPECT_EQ(StringAt(Find(pod, "status.podIPs")->as_array()[0].as_object(), "ip"),
            StringAt(pod, "status.podIP"));
  EXPECT_FALSE(StringAt(pod, "status.startTime").empty());
  const json::object& c = FirstContainer(pod);
  EXPECT_EQ(StringAt(c, "name"), "web");
  EXPECT_EQ(StringAt(c, "image"), "docker.io/library/nginx:1.27");
  EXPECT_TRUE(StringAt(c, "imageID").starts_with("docker.io/library/nginx@sha256:"));
  EXPECT_TRUE(StringAt(c, "containerID").starts_with("containerd://"));
  EXPECT_EQ(c.at("ready"), true);
  EXPECT_EQ(c.at("started"), true);
  EXPECT_EQ(c.at("restartCount"), 0);
  EXPECT_EQ(StringAt(c, "state.running.startedAt"), FormatRfc3339(env_.clock().Now()));
}

// A pod waits for what its volumes and containers need, as kube's kubelet
// does: ContainerCreating with FailedMount while a ConfigMap volume or a
// bound claim is missing, CreateContainerConfigError while an env source
// is; it goes on when what it lacks comes.
TEST_F(KubeletTest, APodWaitsForItsConfigMapsSecretsAndClaims) {
  auto create = [&](const std::string& name, const std::string& volumes, const std::string& env) {
    json::object pod =
        Parse(R"({"metadata":{"name":")" + name + R"("},"spec":{"nodeName":"n1","volumes":)" +
              volumes + R"(,"containers":[{"name":"web","image":"nginx","env":)" + env + "}]}}");
    auto created = env_.client().Create(kPods, "default", pod);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  };
  create("mounts", R"([{"name":"cfg","configMap":{"name":"app"}},
                       {"name":"opt","secret":{"secretName":"none","optional":true}}])",
         "[]");
  create("env", "[]",
         R"([{"name":"MODE","valueFrom":{"configMapKeyRef":{"name":"app","key":"mode"}}},
                          {"name":"T","valueFrom":{"secretKeyRef":{"name":"none","key":"t","optional":true}}}])");
  create("claim", R"([{"name":"d","persistentVolumeClaim":{"claimName":"data"}}])", "[]");
  // The message of the newest event of `reason` about `pod`.
  auto event = [&](const std::string& pod, const std::string& reason) -> std::string {
    StatusOr<client::ObjectList> events = env_.client().List(client::kEvents, "default", {});
    if (!events.ok()) return "";
    std::string newest, message;
    for (const json::object& e : events->items) {
      if (StringAt(e, "involvedObject.name") != pod || StringAt(e, "reason") != reason) continue;
      std::string rv = StringAt(e, "metadata.resourceVersion");
      if (newest.empty() || rv.size() > newest.size() ||
          (rv.size() == newest.size() && rv > newest)) {
        newest = rv;
        message = StringAt(e, "message");
      }
    }
    return message;
  };
  auto waiting = [&](const std::string& name) {
    json::object pod = Pod(name);
    const json::value* statuses = Find(pod, "status.containerStatuses");
    if (statuses == nullptr) return std::string();
    return StringAt(statuses->as_array()[0].as_object(), "state.waiting.reason") + ": " +
           StringAt(statuses->as_array()[0].as_object(), "state.waiting.message");
  };
  // The kubelet has seen every pod (their start-up delay runs from then).
  ASSERT_TRUE(Eventually([&] {
    for (const char* name : {"mounts", "env", "claim"}) {
      if (Find(Pod(name), "status.containerStatuses") == nullptr) return false;
    }
    return true;
  }));
  Advance(std::chrono::seconds(2));
  ASSERT_TRUE(Eventually([&] { return !event("mounts", "FailedMount").empty(); }));
  EXPECT_EQ(event("mounts", "FailedMount"),
            R"(MountVolume.SetUp failed for volume "cfg" : configmap "app" not found)");
  ASSERT_TRUE(Eventually([&] {
    return waiting("env") == R"(CreateContainerConfigError: configmap "app" not found)";
  }));
  EXPECT_EQ(StringAt(Pod("env"), "status.phase"), "Pending");
  ASSERT_TRUE(Eventually([&] { return !event("env", "Failed").empty(); }));
  EXPECT_EQ(event("env", "Failed"), R"(Error: configmap "app" not found)");
  ASSERT_TRUE(Eventually([&] { return !event("claim", "FailedMount").empty(); }));
  EXPECT_EQ(event("claim", "FailedMount"),
            "Unable to attach or mount volumes: unmounted volumes=[d], unattached volumes=[], "
            "failed to process volumes=[d]: error processing PVC default/data: failed to fetch "
            R"(PVC from API server: persistentvolumeclaims "data" not found)");
  json::object mounts = Pod("mounts");
  EXPECT_EQ(StringAt(mounts, "status.phase"), "Pending");
  EXPECT_EQ(waiting("mounts"), "ContainerCreating: ");
  EXPECT_EQ(StringAt(mounts, "status.podIP"), "");

  // The ConfigMap comes without the key: the volume mounts, the env waits
  // for its key.
  ASSERT_TRUE(env_.client()
                  .Create(runtime::testing::kConfigMaps, "default",
                          Parse(R"({"metadata":{"name":"app"},"data":{"other":"1"}})"))
                  .ok());
  ASSERT_TRUE(RunningAndReady("mounts"));
  ASSERT_TRUE(Eventually([&] {
    return waiting("env") ==
           "CreateContainerConfigError: couldn't find key mode in ConfigMap default/app";
  }));
  ASSERT_TRUE(env_.client()
                  .Patch(runtime::testing::kConfigMaps, "default", "app", client::PatchType::kMerge,
                         R"({"data":{"mode":"fast"}})")
                  .ok());
  ASSERT_TRUE(RunningAndReady("env"));

  // The claim comes unbound, then is bound.
  ASSERT_TRUE(env_.client()
                  .Create(kPersistentVolumeClaims, "default",
                          Parse(R"({"metadata":{"name":"data"},"spec":{"storageClassName":"",
                              "accessModes":["ReadWriteOnce"],
                              "resources":{"requests":{"storage":"1Gi"}}}})"))
                  .ok());
  ASSERT_TRUE(Eventually([&] {
    return event("claim", "FailedMount")
        .ends_with("error processing PVC default/data: PVC is not bound");
  }));
  EXPECT_EQ(StringAt(Pod("claim"), "status.phase"), "Pending");
  json::object claim = *env_.client().Get(kPersistentVolumeClaims, "default", "data");
  EnsureObject(claim, "spec")["volumeName"] = "pv-1";
  claim = *env_.client().Update(kPersistentVolumeClaims, "default", claim);
  EnsureObject(claim, "status")["phase"] = "Bound";
  ASSERT_TRUE(env_.client().UpdateStatus(kPersistentVolumeClaims, "default", claim).ok());
  ASSERT_TRUE(RunningAndReady("claim"));
}

TEST_F(KubeletTest, EveryPodGetsItsOwnIp) {
  for (int i = 0; i < 6; ++i) AddPod("p" + std::to_string(i));
  ASSERT_TRUE(Eventually([&] { return Find(Pod("p5"), "status.containerStatuses") != nullptr; }));
  Advance(std::chrono::seconds(2));
  std::set<std::string> ips;
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(RunningAndReady("p" + std::to_string(i)))
        << json::serialize(Pod("p" + std::to_string(i)));
    ips.insert(StringAt(Pod("p" + std::to_string(i)), "status.podIP"));
  }
  EXPECT_EQ(ips.size(), 6u);
}

TEST_F(KubeletTest, ReadinessWaitsForTheProbesInitialDelay) {
  AddPod("slow", "{}",
         R"({"readinessProbe":{"httpGet":{"path":"/","port":80},"initialDelaySeconds":10}})");
  ASSERT_TRUE(Eventually([&] { return Find(Pod("slow"), "status.containerStatuses") != nullptr; }));
  Advance(std::chrono::seconds(2));
  ASSERT_TRUE(Eventually([&] { return StringAt(Pod("slow"), "status.phase") == "Running"; }));
  EXPECT_EQ(ConditionStatus(Pod("slow"), "Ready"), "False");
  EXPECT_EQ(FirstContainer(Pod("slow")).at("started"), true);
  Advance(std::chrono::seconds(10));
  EXPECT_TRUE(RunningAndReady("slow"));
}

TEST_F(KubeletTest, GracefulDeletionEndsAfterTheGracePeriod) {
  AddPod("web");
  ASSERT_TRUE(Eventually([&] { return Find(Pod("web"), "status.containerStatuses") != nullptr; }));
  Advance(std::chrono::seconds(2));
  ASSERT_TRUE(RunningAndReady("web"));
  ASSERT_TRUE(env_.client().Delete(kPods, "default", "web").ok());
  ASSERT_TRUE(Eventually([&] {
    json::object pod = Pod("web");
    return Find(pod, "status.containerStatuses") &&
           !StringAt(FirstContainer(pod), "state.terminated.finishedAt").empty();
  }));
  json::object terminating = Pod("web");
  EXPECT_EQ(ConditionStatus(terminating, "Ready"), "False");
  EXPECT_FALSE(StringAt(terminating, "metadata.deletionTimestamp").empty());
  Advance(std::chrono::seconds(29));
  for (int i = 0; i < 50 && !Gone("web"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_FALSE(Gone("web"));
  Advance(std::chrono::seconds(1));
  EXPECT_TRUE(Eventually([&] { return Gone("web"); }));
}

TEST_F(KubeletTest, CrashLoopAnnotationRestartsTheContainerWithBackoff) {
  AddPod("crashy", R"({"sim.flotilla.io/crash-loop":"true"})");
  ASSERT_TRUE(
      Eventually([&] { return Find(Pod("crashy"), "status.containerStatuses") != nullptr; }));
  Advance(std::chrono::seconds(2));
  ASSERT_TRUE(RunningAndReady("crashy"));
  Advance(kubelet::kCrashLoopRunTime);
  ASSERT_TRUE(Eventually([&] {
    return StringAt(FirstContainer(Pod("crashy")), "state.waiting.reason") == "CrashLoopBackOff";
  }));
  json::object pod = Pod("crashy");
  EXPECT_EQ(FirstContainer(pod).at("restartCount"), 1);
  EXPECT_EQ(ConditionStatus(pod, "Ready"), "False");
  EXPECT_EQ(StringAt(pod, "status.phase"), "Running");
  EXPECT_EQ(FirstContainer(pod).at("lastState").at("terminated").at("exitCode"), 1);
  EXPECT_TRUE(StringAt(FirstContainer(pod), "state.waiting.message").starts_with("back-off 10s"));
  Advance(std::chrono::seconds(10));
  ASSERT_TRUE(RunningAndReady("crashy"));
  Advance(kubelet::kCrashLoopRunTime);
  EXPECT_TRUE(Eventually([&] { return FirstContainer(Pod("crashy")).at("restartCount") == 2; }));
  EXPECT_TRUE(
      StringAt(FirstContainer(Pod("crashy")), "state.waiting.message").starts_with("back-off 20s"));
}

TEST_F(KubeletTest, APodWithARunTimeSucceedsOrFailsWithItsExitCode) {
  AddPod("ok", R"({"sim.flotilla.io/run-for":"30s"})");
  AddPod("bad", R"({"sim.flotilla.io/run-for":"30s","sim.flotilla.io/exit-code":"3"})");
  ASSERT_TRUE(Eventually([&] { return Find(Pod("bad"), "status.containerStatuses") != nullptr; }));
  Advance(std::chrono::seconds(2));
  ASSERT_TRUE(RunningAndReady("ok"));
  ASSERT_TRUE(RunningAndReady("bad"));
  Advance(std::chrono::seconds(29));
  EXPECT_EQ(StringAt(Pod("ok"), "status.phase"), "Running");
  Advance(std::chrono::seconds(1));
  ASSERT_TRUE(Eventually([&] { return StringAt(Pod("ok"), "status.phase") == "Succeeded"; }));
  ASSERT_TRUE(Eventually([&] { return StringAt(Pod("bad"), "status.phase") == "Failed"; }));
  json::object ok = Pod("ok");
  EXPECT_EQ(ConditionStatus(ok, "Ready"), "False");
  EXPECT_EQ(StringAt(FirstContainer(ok), "state.terminated.reason"), "Completed");
  EXPECT_EQ(FirstContainer(Pod("bad")).at("state").at("terminated").at("exitCode"), 3);
}

TEST_F(KubeletTest, FailedPodsAreLeftAlone) {
  AddPod("web");
  ASSERT_TRUE(Eventually([&] { return Find(Pod("web"), "status.containerStatuses") != nullptr; }));
  Advance(std::chrono::seconds(2));
  ASSERT_TRUE(RunningAndReady("web"));
  json::object failed = Pod("web");
  failed["status"].as_object()["phase"] = "Failed";
  failed["status"].as_object()["reason"] = "Injected";
  ASSERT_TRUE(env_.client().UpdateStatus(kPods, "default", failed).ok());
  Advance(std::chrono::seconds(60));
  AddPod("witness");  // processed after the failed pod's update
  ASSERT_TRUE(
      Eventually([&] { return Find(Pod("witness"), "status.containerStatuses") != nullptr; }));
  EXPECT_EQ(StringAt(Pod("web"), "status.phase"), "Failed");
  EXPECT_EQ(StringAt(Pod("web"), "status.reason"), "Injected");
}

TEST_F(KubeletTest, PodsOfADeletedNodeAreDeleted) {
  AddPod("web");
  ASSERT_TRUE(Eventually([&] { return Find(Pod("web"), "status.containerStatuses") != nullptr; }));
  ASSERT_TRUE(env_.client().Delete(kNodes, "", "n1").ok());
  // The quarantine starts when the kubelet sees the pod's node gone.
  ASSERT_TRUE(Eventually([&] { return kubelet_->Quarantined() == 1; }));
  Advance(std::chrono::seconds(39));
  for (int i = 0; i < 50 && !Gone("web"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_FALSE(Gone("web"));  // the pod garbage collector's quarantine
  Advance(std::chrono::seconds(1));
  EXPECT_TRUE(Eventually([&] { return Gone("web"); }));
}

// What the kubelet keeps per pod goes with the pod, also when someone else
// deletes it at once (grace 0: the kubelet never sees it terminating).
TEST_F(KubeletTest, APodsStateGoesWithThePod) {
  AddPod("web");
  AddPod("waits", "{}",
         R"({"env":[{"name":"A","valueFrom":{"configMapKeyRef":{"name":"none","key":"a"}}}]})");
  ASSERT_TRUE(Eventually([&] { return kubelet_->Remembered() == 2; }));
  client::DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(env_.client().Delete(kPods, "default", "web", now).ok());
  ASSERT_TRUE(env_.client().Delete(kPods, "default", "waits", now).ok());
  EXPECT_TRUE(Eventually([&] { return kubelet_->Remembered() == 0; }));
}

TEST(NormalizeImageTest, AsContainerdReportsIt) {
  EXPECT_EQ(kubelet::NormalizeImage("nginx"), "docker.io/library/nginx:latest");
  EXPECT_EQ(kubelet::NormalizeImage("bitnami/redis:7"), "docker.io/bitnami/redis:7");
  EXPECT_EQ(kubelet::NormalizeImage("registry.k8s.io/pause:3.10"), "registry.k8s.io/pause:3.10");
  EXPECT_EQ(kubelet::NormalizeImage("localhost:5000/app"), "localhost:5000/app:latest");
}

// What the kubelet indexes its pods by: every object a pod names in its
// volumes (projected ones too) and its containers' env, init containers
// included, optional or not, each once.
TEST(DependencyKeysTest, NameEveryObjectAPodMayWaitFor) {
  json::object pod = Parse(R"({"metadata":{"namespace":"shop","name":"p"},"spec":{
    "volumes":[{"name":"a","configMap":{"name":"cfg"}},
               {"name":"b","secret":{"secretName":"tls","optional":true}},
               {"name":"c","persistentVolumeClaim":{"claimName":"data"}},
               {"name":"d","projected":{"sources":[{"configMap":{"name":"extra"}},
                                                   {"secret":{"name":"token"}},
                                                   {"downwardAPI":{"items":[]}}]}},
               {"name":"e","emptyDir":{}}],
    "initContainers":[{"name":"init","envFrom":[{"secretRef":{"name":"init-env"}}]}],
    "containers":[{"name":"web","envFrom":[{"configMapRef":{"name":"cfg"}}],
                   "env":[{"name":"A","valueFrom":{"configMapKeyRef":{"name":"keys","key":"a"}}},
                          {"name":"B","valueFrom":{"secretKeyRef":{"name":"tls","key":"b"}}},
                          {"name":"C","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}},
                          {"name":"D","value":"plain"}]}]}})");
  EXPECT_THAT(kubelet::DependencyKeys(pod),
              ElementsAre("shop/ConfigMap/cfg", "shop/ConfigMap/extra", "shop/ConfigMap/keys",
                          "shop/PersistentVolumeClaim/data", "shop/Secret/init-env",
                          "shop/Secret/tls", "shop/Secret/token"));
  EXPECT_THAT(kubelet::DependencyKeys(Parse(R"({"metadata":{"name":"bare"},"spec":{
                "containers":[{"name":"c","image":"x"}]}})")),
              IsEmpty());
}

}  // namespace
}  // namespace flotilla::member
