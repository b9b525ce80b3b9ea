// The federated HPA controller against real API servers
// (cluster::testing::ControllerTest: members a, b and c), with the
// federated Deployment controller beside it. A test plays each member's HPA
// controller (its status, and the local Deployment's replicas it sets).
// Time moves on a FakeClock.
#include "federation/hpa/hpa_controller.h"

#include <gtest/gtest.h>

#include "api/annotations.h"
#include "api/federated.h"
#include "api/policy/policy.h"
#include "federation/cluster/controller_fixture.h"
#include "federation/common/hpa_target.h"
#include "federation/common/member_copy.h"
#include "federation/deployment/deployment_controller.h"

namespace flotilla::federation::hpa {
namespace {

using cluster::testing::At;
using runtime::testing::Eventually;
using Shares = std::vector<std::string>;  // "min/max" per cluster, "-" for none

class HpaControllerTest : public cluster::testing::ControllerTest {
 protected:
  HpaControllerTest()
      : ControllerTest({HpaController::kName, deployment::DeploymentController::kName},
                       "default/web") {}

  void Start() {
    WorkloadOptions workloads;
    workloads.unschedulable_threshold = std::chrono::hours(24);
    workloads.member_change_delay = Duration::zero();
    HpaOptions options;
    options.member_change_delay = Duration::zero();
    StartWith([&] {
      Make<deployment::DeploymentController>(workloads);
      Make<HpaController>(options);
    });
  }

  void CreateDeployment(int64_t replicas) {
    auto d = ParseJsonObject(R"({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})");
    ASSERT_TRUE(d.ok());
    (*d)["spec"].as_object()["replicas"] = replicas;
    auto made = fed_client_->Create(kDeployments, kNs, *d);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
  }
  // An HPA on Deployment web: cpu at 50% of requests.
  void CreateHpa(int64_t min, int64_t max) {
    auto h = ParseJsonObject(R"({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                 "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                     "target": {"type": "Utilization", "averageUtilization": 50}}}]}})");
    ASSERT_TRUE(h.ok());
    json::object& spec = (*h)["spec"].as_object();
    spec["minReplicas"] = min;
    spec["maxReplicas"] = max;
    auto made = fed_client_->Create(kHorizontalPodAutoscalers, kNs, *h);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
  }
  json::object FedHpa() {
    auto h = fed_client_->Get(kHorizontalPodAutoscalers, kNs, "web");
    return h.ok() ? *h : json::object{};
  }
  json::object FedDeployment() {
    auto d = fed_client_->Get(kDeployments, kNs, "web");
    return d.ok() ? *d : json::object{};
  }
  json::object LocalHpa(int i) {
    auto h = member_clients_[i]->Get(kHorizontalPodAutoscalers, kNs, "web");
    return h.ok() ? *h : json::object{};
  }
  json::object LocalDeployment(int i) {
    auto d = member_clients_[i]->Get(kDeployments, kNs, "web");
    return d.ok() ? *d : json::object{};
  }
  Shares LocalShares() {
    Shares out;
    for (int i = 0; i < 3; ++i) {
      json::object h = LocalHpa(i);
      out.push_back(h.empty() ? "-"
                              : std::to_string(IntAt(h, "spec.minReplicas")) + "/" +
                                    std::to_string(IntAt(h, "spec.maxReplicas")));
    }
    return out;
  }
  std::vector<int64_t> LocalReplicas() {
    std::vector<int64_t> out;
    for (int i = 0; i < 3; ++i) {
      json::object d = LocalDeployment(i);
      out.push_back(d.empty() ? -1 : IntAt(d, "spec.replicas"));
    }
    return out;
  }
  // Every member runs the target, as the federation's caches show it: the
  // HPA's choice then goes by name.
  bool AllRunTheTarget() {
    for (int i = 0; i < 3; ++i) {
      auto informer = ctx_->members().Get(Name(i), "deployments");
      runtime::ObjectPtr d = informer ? informer->lister().Get(kNs, "web") : nullptr;
      if (d == nullptr || IntAt(*d, "spec.replicas") == 0) return false;
    }
    return true;
  }
  // Plays member i's HPA controller: the local Deployment scaled to
  // `current`, and the local HPA's status.
  void PlayHpa(int i, int64_t current, int64_t desired, int64_t utilization) {
    ASSERT_TRUE(Eventually([&] {
      json::object d = LocalDeployment(i);
      if (d.empty()) return false;
      if (IntAt(d, "spec.replicas") == current) return true;
      d["spec"].as_object()["replicas"] = current;
      return member_clients_[i]->Update(kDeployments, kNs, d).ok();
    }));
    ASSERT_TRUE(Eventually([&] {
      json::object h = LocalHpa(i);
      if (h.empty()) return false;
      json::object ok{{"status", "True"}, {"reason", "ValidMetricFound"}, {"message", "fine"}};
      json::object able = ok, active = ok;
      able["type"] = "AbleToScale";
      active["type"] = "ScalingActive";
      h["status"] = json::object{
          {"currentReplicas", current},
          {"desiredReplicas", desired},
          {"currentMetrics",
           json::array{json::object{
               {"type", "Resource"},
               {"resource",
                json::object{{"name", "cpu"},
                             {"current", json::object{{"averageUtilization", utilization}}}}}}}},
          {"conditions", json::array{able, active}}};
      return member_clients_[i]->UpdateStatus(kHorizontalPodAutoscalers, kNs, h).ok();
    }));
  }
  double ReplicaWrites() {
    std::string metrics = ctx_->metrics().Render();
    double sum = 0;
    std::string name = "flotilla_federation_replica_count_writes_total{kind=\"Deployment\"";
    for (size_t at = metrics.find(name); at != std::string::npos; at = metrics.find(name, at + 1)) {
      size_t space = metrics.find(' ', metrics.find('}', at));
      sum += std::stod(metrics.substr(space + 1, metrics.find('\n', space) - space - 1));
    }
    return sum;
  }
  // Shares 1/4 everywhere, then load in a only: its HPA at its ceiling of
  // 4 with 125% of cpu against a 50% target asks for ceil(4 * 2.5) = 10;
  // b and c idle at their floor give what they can, 3 each, in one step.
  void MoveMaxToA() {
    Start();
    CreateDeployment(3);
    CreateHpa(3, 12);
    ASSERT_TRUE(Settle([&] { return LocalShares() == Shares{"1/4", "1/4", "1/4"}; }));
    // The local HPAs act once the Deployment follows the HPA.
    ASSERT_TRUE(Settle([&] { return FollowsHpa(); }));
    clock_.Advance(std::chrono::seconds(31));  // past the first shares' freeze
    PlayHpa(1, 1, 1, 10);
    PlayHpa(2, 1, 1, 10);
    PlayHpa(0, 4, 4, 125);
    ASSERT_TRUE(Settle([&] {
      return LocalShares() == Shares{"1/10", "1/1", "1/1"};
    })) << json::serialize(json::value_from(LocalShares()))
        << " " << api::AnnotationAt(FedHpa(), api::kHpaStatusAnnotation);
  }
  std::optional<HpaTargetList> TargetList() { return HpaTargetListOf(FedDeployment()); }
  // The Deployment controller reads the HPA's list (its cache has it) and
  // has no check of an older object in flight: it leaves the local counts
  // to the local HPAs from now on.
  bool FollowsHpa() {
    runtime::ObjectPtr d = ctx_->informers().For(kDeployments).lister().Get(kNs, "web");
    runtime::WorkQueueStats q =
        ctx_->manager().Find(deployment::DeploymentController::kName)->Metrics().queue;
    return d != nullptr && HpaTargetListOf(*d).has_value() && q.depth == 0 && q.processing == 0;
  }
};

TEST_F(HpaControllerTest, MinAndMaxArePartitionedOverTheChosenClusters) {
  Start();
  CreateDeployment(3);
  ASSERT_TRUE(Settle([&] { return AllRunTheTarget(); }));
  CreateHpa(3, 12);
  ASSERT_TRUE(Settle([&] {
    return LocalShares() == Shares{"1/4", "1/4", "1/4"};
  })) << json::serialize(json::value_from(LocalShares()));
  json::object local = LocalHpa(0);
  EXPECT_EQ(At(local, "spec.scaleTargetRef"), At(FedHpa(), "spec.scaleTargetRef"));
  EXPECT_EQ(At(local, "spec.metrics"), At(FedHpa(), "spec.metrics"));
  EXPECT_TRUE(IsManaged(local));
  EXPECT_TRUE(Eventually([&] {
    auto list = TargetList();
    return list && list->hpa == "web" && list->clusters == Shares{"a", "b", "c"};
  }));
  EXPECT_TRUE(
      Eventually([&] { return !api::AnnotationAt(FedHpa(), api::kHpaStatusAnnotation).empty(); }));

  // A min of 2 chooses two clusters; the third loses its HPA and its
  // Deployment.
  ASSERT_TRUE(Eventually([&] {
    json::object h = FedHpa();
    h["spec"].as_object()["minReplicas"] = 2;
    h["spec"].as_object()["maxReplicas"] = 9;
    return fed_client_->Update(kHorizontalPodAutoscalers, kNs, h).ok();
  }));
  ASSERT_TRUE(Settle([&] {
    return LocalShares() == Shares{"1/5", "1/4", "-"};
  })) << json::serialize(json::value_from(LocalShares()));
  ASSERT_TRUE(Eventually([&] { return LocalReplicas()[2] == -1; }))
      << json::serialize(json::value_from(LocalReplicas()));
  EXPECT_EQ(TargetList()->clusters, (Shares{"a", "b"}));
  // Events are written in the background.
  EXPECT_TRUE(Eventually([&] { return !EventMessages("PlacementByHPA").empty(); }));
  EXPECT_TRUE(Eventually([&] { return !EventMessages("SharesChanged").empty(); }));
}

TEST_F(HpaControllerTest, TheHpaOwnsPlacementAndTheLocalCountsAreLeftToTheLocalHpas) {
  Start();
  CreateDeployment(6);
  ASSERT_TRUE(Settle([&] { return LocalReplicas() == std::vector<int64_t>{2, 2, 2}; }));
  CreateHpa(3, 12);
  ASSERT_TRUE(Settle([&] { return FollowsHpa(); }));
  double writes = ReplicaWrites();
  // The local HPAs scale their clusters differently.
  PlayHpa(0, 4, 4, 60);
  PlayHpa(1, 1, 1, 20);
  PlayHpa(2, 3, 3, 50);
  // The federated Deployment's replicas follow the sum.
  ASSERT_TRUE(Settle([&] { return IntAt(FedDeployment(), "spec.replicas") == 8; }))
      << IntAt(FedDeployment(), "spec.replicas");
  EXPECT_EQ(LocalReplicas(), (std::vector<int64_t>{4, 1, 3}));
  // The federation wrote no local replica count while the HPA ruled.
  EXPECT_EQ(ReplicaWrites(), writes);
  // The federated HPA's status sums and weighs the locals'.
  ASSERT_TRUE(Eventually([&] { return IntAt(FedHpa(), "status.currentReplicas") == 8; }));
  json::object status = FedHpa();
  EXPECT_EQ(IntAt(status, "status.desiredReplicas"), 8);
  // (4*60 + 1*20 + 3*50) / 8 = 51.25
  EXPECT_EQ(Find(status, "status.currentMetrics")
                ->as_array()[0]
                .as_object()
                .at("resource")
                .as_object()
                .at("current")
                .as_object()
                .at("averageUtilization")
                .to_number<int64_t>(),
            51);
  EXPECT_TRUE(Eventually([&] { return !EventMessages("PlacementByHPA").empty(); }));
}

TEST_F(HpaControllerTest, MaxMovesToTheLoadInOneStepAndComesBack) {
  ASSERT_NO_FATAL_FAILURE(MoveMaxToA());
  EXPECT_TRUE(Eventually([&] { return !EventMessages("MaxReplicasMoved").empty(); }));
  EXPECT_NE(EventMessages("MaxReplicasMoved")[0].find("moved 6 of maxReplicas to cluster a"),
            std::string::npos)
      << EventMessages("MaxReplicasMoved")[0];
  EXPECT_TRUE(Eventually([&] { return IntAt(FedHpa(), "status.desiredReplicas") == 6; }));

  // The load is gone: once the freeze is over the shares go back.
  PlayHpa(0, 1, 1, 10);
  clock_.Advance(std::chrono::seconds(31));
  ASSERT_TRUE(Settle([&] {
    return LocalShares() == Shares{"1/4", "1/4", "1/4"};
  })) << json::serialize(json::value_from(LocalShares()));
}

TEST_F(HpaControllerTest, AStoppedClustersShareGoesToTheOthersAndComesBack) {
  Start();
  CreateDeployment(3);
  CreateHpa(3, 12);
  ASSERT_TRUE(Settle([&] { return LocalShares() == Shares{"1/4", "1/4", "1/4"}; }));
  ctx_->clusters().SetNotReady("c");
  // c's local HPA keeps its last shares (the member is cut off, not the
  // HPA); a and b hold the federation's min and max.
  // (Which of a and b gets the odd min depends on which the check found
  // running the target first.)
  ASSERT_TRUE(Settle([&] {
    Shares s = LocalShares();
    return (s == Shares{"2/6", "1/6", "1/4"} || s == Shares{"1/6", "2/6", "1/4"});
  })) << json::serialize(json::value_from(LocalShares()));
  SetReady(2);
  ASSERT_TRUE(Settle([&] {
    return LocalShares() == Shares{"1/4", "1/4", "1/4"};
  })) << json::serialize(json::value_from(LocalShares()));
}

TEST_F(HpaControllerTest, ARestartTakesTheMembersAsItFindsThem) {
  ASSERT_NO_FATAL_FAILURE(MoveMaxToA());
  Stop();
  // While the federation is down a's HPA scales up to its new max.
  PlayHpa(0, 10, 10, 60);
  Start();
  ASSERT_TRUE(Settle([&] { return FollowsHpa(); }));
  ASSERT_TRUE(Settle([&] { return IntAt(FedDeployment(), "spec.replicas") == 12; }))
      << json::serialize(FedDeployment()) << " "
      << json::serialize(json::value_from(LocalReplicas()));
  // Nothing the members did is undone.
  EXPECT_EQ(LocalShares(), (Shares{"1/10", "1/1", "1/1"}));
  EXPECT_EQ(LocalReplicas(), (std::vector<int64_t>{10, 1, 1}));
}

TEST_F(HpaControllerTest, DeletingTheHpaHandsPlacementBack) {
  Start();
  CreateDeployment(3);
  ASSERT_TRUE(Settle([&] { return AllRunTheTarget(); }));
  CreateHpa(2, 6);
  ASSERT_TRUE(Settle([&] {
    return LocalShares() == Shares{"1/3", "1/3", "-"};
  })) << json::serialize(json::value_from(LocalShares()));
  ASSERT_TRUE(Settle([&] { return LocalReplicas()[2] == -1 && FollowsHpa(); }));
  PlayHpa(0, 2, 2, 50);
  ASSERT_TRUE(Settle([&] { return IntAt(FedDeployment(), "spec.replicas") == 3; }));
  std::string uid_a = StringAt(LocalDeployment(0), "metadata.uid");
  client::DeleteOptions background{.propagation_policy = "Background"};
  ASSERT_TRUE(fed_client_->Delete(kHorizontalPodAutoscalers, kNs, "web", background).ok());
  ASSERT_TRUE(Settle([&] { return LocalShares() == Shares{"-", "-", "-"}; }));
  ASSERT_TRUE(Settle([&] { return !TargetList().has_value(); }));
  EXPECT_TRUE(Eventually([&] { return !EventMessages("PlacementByPreferences").empty(); }));
  // The Deployment's own preferences (the default: no rebalance) place its
  // 3 replicas again: where they run, nothing restarted.
  ASSERT_TRUE(Settle([&] {
    return api::AnnotationAt(FedDeployment(), api::kDeploymentStatusAnnotation).find("\"b\"") !=
           std::string::npos;
  }));
  EXPECT_EQ(LocalReplicas(), (std::vector<int64_t>{2, 1, -1}));
  EXPECT_EQ(StringAt(LocalDeployment(0), "metadata.uid"), uid_a);
}

// A propagation policy that selects the Deployment and its HPA places both:
// Duplicated gives each cluster of its affinity the whole of minReplicas and
// maxReplicas; a Divided one partitions them over its clusters.
TEST_F(HpaControllerTest, APolicyPlacesTheHpaWithItsTarget) {
  Start();
  auto policy = [&](const std::string& scheduling) {
    auto p = ParseJsonObject(
        R"({"apiVersion":"policy.karmada.io/v1alpha1","kind":"ClusterPropagationPolicy",
            "metadata":{"name":"web"},
            "spec":{"resourceSelectors":[
                      {"apiVersion":"apps/v1","kind":"Deployment","name":"web"},
                      {"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","name":"web"}],
                    "placement":{"clusterAffinity":{"clusterNames":["a","b"]},
                                 "replicaScheduling":)" +
        scheduling + "}}}");
    EXPECT_TRUE(p.ok());
    return *p;
  };
  PutPolicy(policy(R"({"replicaSchedulingType":"Duplicated"})"));
  WaitForPolicies(1);
  CreateDeployment(2);
  ASSERT_TRUE(Settle([&] { return LocalReplicas() == std::vector<int64_t>{2, 2, -1}; }));
  CreateHpa(1, 4);
  ASSERT_TRUE(Settle([&] {
    return LocalShares() == Shares{"1/4", "1/4", "-"};
  })) << json::serialize(json::value_from(LocalShares()));
  EXPECT_EQ(api::AnnotationAt(FedHpa(), api::policy::kClusterPropagationPolicyNameAnnotation),
            "web");
  PutPolicy(
      policy(R"({"replicaSchedulingType":"Divided","replicaDivisionPreference":"Aggregated"})"));
  ASSERT_TRUE(Eventually([&] {
    json::object h = FedHpa();
    h["spec"].as_object()["minReplicas"] = 2;
    h["spec"].as_object()["maxReplicas"] = 8;
    return fed_client_->Update(kHorizontalPodAutoscalers, kNs, h).ok();
  }));
  ASSERT_TRUE(Settle([&] {
    return LocalShares() == Shares{"1/4", "1/4", "-"} &&
           IntAt(LocalHpa(0), "spec.maxReplicas") + IntAt(LocalHpa(1), "spec.maxReplicas") == 8;
  })) << json::serialize(json::value_from(LocalShares()));
}

}  // namespace
}  // namespace flotilla::federation::hpa
