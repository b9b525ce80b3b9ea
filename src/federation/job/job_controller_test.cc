// The federated Job controller against real API servers
// (cluster::testing::ControllerTest: members a, b and c). A test plays each
// member's Job controller by writing the local Jobs' status. Time moves on a
// FakeClock.
#include "federation/job/job_controller.h"

#include <gtest/gtest.h>

#include "api/batch.h"
#include "client/resources.h"
#include "federation/cluster/controller_fixture.h"
#include "federation/job/shares.h"

namespace flotilla::federation::job {
namespace {

using runtime::testing::Eventually;

class JobControllerTest : public cluster::testing::ControllerTest {
 protected:
  JobControllerTest() : ControllerTest({JobController::kName}, "default/batch") {}

  void Start() {
    WorkloadOptions workloads;
    workloads.member_change_delay = Duration::zero();
    StartWith([&] { Make<JobController>(workloads); });
  }

  // Job "batch" with `spec` merged into a valid one.
  void CreateJob(std::string_view spec) {
    auto job = ParseJsonObject(R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"batch"},
        "spec":{"template":{"spec":{"restartPolicy":"Never",
        "containers":[{"name":"work","image":"busybox"}]}}}})");
    ASSERT_TRUE(job.ok());
    auto more = ParseJsonObject(spec);
    ASSERT_TRUE(more.ok());
    for (auto& [k, v] : *more) (*job)["spec"].as_object()[k] = v;
    auto made = fed_client_->Create(client::kJobs, kNs, *job);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
  }
  json::object FedJob() {
    auto j = fed_client_->Get(client::kJobs, kNs, "batch");
    return j.ok() ? *j : json::object{};
  }
  json::object LocalJob(int i) {
    auto j = member_clients_[i]->Get(client::kJobs, kNs, "batch");
    return j.ok() ? *j : json::object{};
  }
  // "completions/parallelism" of each member's copy, "-" for none.
  std::vector<std::string> Copies() {
    std::vector<std::string> out;
    for (int i = 0; i < kMembers; ++i) {
      json::object j = LocalJob(i);
      out.push_back(j.empty() ? "-"
                              : std::to_string(IntAt(j, "spec.completions")) + "/" +
                                    std::to_string(IntAt(j, "spec.parallelism")));
    }
    return out;
  }
  // Plays member i's Job controller: the copy's status, Complete when
  // `complete`.
  void Report(int i, int64_t succeeded, bool complete, int64_t active = 0) {
    ASSERT_TRUE(Eventually([&] {
      json::object j = LocalJob(i);
      if (j.empty()) return false;
      json::object status{{"succeeded", succeeded},
                          {"active", active},
                          {"ready", active},
                          {"startTime", "2026-01-01T00:00:00Z"}};
      if (complete) {
        status["completionTime"] = "2026-01-01T00:10:00Z";
        status["conditions"] = json::array{
            api::batch::JobCondition("SuccessCriteriaMet", "CompletionsReached", "",
                                     "2026-01-01T00:10:00Z"),
            api::batch::JobCondition("Complete", "CompletionsReached", "", "2026-01-01T00:10:00Z")};
      }
      j["status"] = std::move(status);
      return member_clients_[i]->UpdateStatus(client::kJobs, kNs, j).ok();
    }));
  }
  bool FedCondition(std::string_view type) { return api::ConditionTrue(FedJob(), type); }
};

TEST_F(JobControllerTest, CompletionsAreDividedAndTheStatusSummed) {
  Start();
  CreateJob(R"({"completions":12,"parallelism":3})");
  ASSERT_TRUE(Settle([&] { return Copies() == std::vector<std::string>{"4/1", "4/1", "4/1"}; }));
  json::object copy = LocalJob(0);
  // The member generates its own selector for its copy.
  const json::value* match = Find(copy, "spec.selector.matchLabels");
  ASSERT_NE(match, nullptr);
  EXPECT_EQ(match->as_object().at(api::batch::kControllerUidLabel),
            json::value(StringAt(copy, "metadata.uid")));
  for (int i = 0; i < kMembers; ++i) Report(i, 4, true);
  ASSERT_TRUE(Settle([&] { return FedCondition("Complete"); }));
  json::object job = FedJob();
  EXPECT_EQ(IntAt(job, "status.succeeded"), 12);
  EXPECT_TRUE(FedCondition("SuccessCriteriaMet"));
  EXPECT_EQ(StringAt(job, "status.completionTime"), "2026-01-01T00:10:00Z");
}

TEST_F(JobControllerTest, ALostClustersUnfinishedCompletionsRunElsewhereAndNothingRunsTwice) {
  Start();
  CreateJob(R"({"completions":12,"parallelism":3})");
  ASSERT_TRUE(Settle([&] { return Copies() == std::vector<std::string>{"4/1", "4/1", "4/1"}; }));
  Report(2, 1, false, 1);
  ASSERT_TRUE(Settle([&] { return IntAt(FedJob(), "status.succeeded") == 1; }));
  ctx_->clusters().SetNotReady("c");
  // c owed 3: queued behind a's and b's copies.
  ASSERT_TRUE(Settle([&] {
    Ledger l = ParseLedger(FedJob());
    return l["c"].lost && l["a"].queued + l["b"].queued == 3;
  }));
  Ledger before = ParseLedger(FedJob());
  Report(0, 4, true);
  Report(1, 4, true);
  // Each completed copy that has queued work is replaced by one running it.
  ASSERT_TRUE(Settle([&] {
    std::vector<std::string> c = Copies();
    return c[0] == std::to_string(before["a"].queued) + "/1" &&
           c[1] == std::to_string(before["b"].queued) + "/1";
  }));
  EXPECT_FALSE(FedCondition("Complete"));
  Report(0, before["a"].queued, true);
  Report(1, before["b"].queued, true);
  ASSERT_TRUE(Settle([&] { return FedCondition("Complete"); }))
      << json::serialize(FedJob()["status"]) << " " << json::serialize(FedJob()["metadata"]);
  EXPECT_EQ(IntAt(FedJob(), "status.succeeded"), 12);  // 4 + 4 + 1 + 3
  // c's copy, when c comes back, is deleted: its work ran elsewhere.
  SetReady(2);
  ASSERT_TRUE(Settle([&] { return LocalJob(2).empty(); }));
}

TEST_F(JobControllerTest, AWorkQueuesLostPodsRunElsewhereAndWhatSucceededCounts) {
  Start();
  CreateJob(R"({"parallelism":3})");
  ASSERT_TRUE(Settle([&] { return Copies() == std::vector<std::string>{"0/1", "0/1", "0/1"}; }));
  Report(2, 1, false, 0);
  ASSERT_TRUE(Settle([&] { return IntAt(FedJob(), "status.succeeded") == 1; }));
  ctx_->clusters().SetNotReady("c");
  ASSERT_TRUE(Settle([&] {
    Ledger l = ParseLedger(FedJob());
    return l["c"].lost && l["c"].done == 1 && l["a"].parallelism + l["b"].parallelism == 3;
  }));
  EXPECT_EQ(IntAt(FedJob(), "status.succeeded"), 1);
}

TEST_F(JobControllerTest, AClusterWithNoRoomForAPodGetsNoShare) {
  Start();
  auto c = fed_client_->Get(kClusters, "", "c");
  ASSERT_TRUE(c.ok());
  (*c)["status"] =
      json::object{{"resourceSummary",
                    json::object{{"allocatable", json::object{{"cpu", "1"}, {"pods", "110"}}},
                                 {"allocated", json::object{{"cpu", "800m"}, {"pods", "3"}}}}}};
  ASSERT_TRUE(fed_client_->UpdateStatus(kClusters, "", *c).ok());
  ASSERT_TRUE(Eventually([&] {
    runtime::ObjectPtr cached = ctx_->cluster_objects().cache().Get("c");
    return cached != nullptr && Find(*cached, "status.resourceSummary") != nullptr;
  }));
  CreateJob(R"({"completions":12,"parallelism":4,"template":{"spec":{"restartPolicy":"Never",
      "containers":[{"name":"work","image":"busybox",
                     "resources":{"requests":{"cpu":"500m"}}}]}}})");
  ASSERT_TRUE(Settle([&] { return Copies() == std::vector<std::string>{"6/2", "6/2", "-"}; }));
}

TEST_F(JobControllerTest, AnIndexedJobRunsWholeInOneCluster) {
  Start();
  CreateJob(R"({"completions":5,"parallelism":2,"completionMode":"Indexed"})");
  ASSERT_TRUE(Settle([&] {
    std::vector<std::string> c = Copies();
    return std::count(c.begin(), c.end(), "5/2") == 1 && std::count(c.begin(), c.end(), "-") == 2;
  }));
}

TEST_F(JobControllerTest, AShareThatFailsFailsTheJobAndSuspendsTheOthers) {
  Start();
  CreateJob(R"({"completions":6,"parallelism":3})");
  ASSERT_TRUE(Settle([&] { return Copies() == std::vector<std::string>{"2/1", "2/1", "2/1"}; }));
  ASSERT_TRUE(Eventually([&] {
    json::object j = LocalJob(1);
    j["status"] = json::object{{"failed", 7},
                               {"conditions", json::array{api::batch::JobCondition(
                                                  "Failed", "BackoffLimitExceeded",
                                                  "Job has reached the specified backoff limit",
                                                  "2026-01-01T00:10:00Z")}}};
    return member_clients_[1]->UpdateStatus(client::kJobs, kNs, j).ok();
  }));
  ASSERT_TRUE(Settle([&] { return FedCondition("Failed"); }));
  const json::object job = FedJob();
  const json::object* failed = api::ConditionOf(job, "Failed");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(StringAt(*failed, "message"),
            "Job failed in cluster b: BackoffLimitExceeded: Job has reached the specified backoff "
            "limit");
  EXPECT_EQ(IntAt(FedJob(), "status.failed"), 7);
  ASSERT_TRUE(Settle([&] {
    return *Find(LocalJob(0), "spec.suspend") == json::value(true) &&
           *Find(LocalJob(2), "spec.suspend") == json::value(true);
  }));
}

TEST_F(JobControllerTest, SuspendingTheFederatedJobSuspendsEveryCopy) {
  Start();
  CreateJob(R"({"completions":3,"parallelism":3})");
  ASSERT_TRUE(Settle([&] { return Copies() == std::vector<std::string>{"1/1", "1/1", "1/1"}; }));
  ASSERT_TRUE(fed_client_
                  ->Patch(client::kJobs, kNs, "batch", client::PatchType::kMerge,
                          R"({"spec":{"suspend":true}})")
                  .ok());
  ASSERT_TRUE(Settle([&] {
    for (int i = 0; i < kMembers; ++i) {
      const json::value* s = Find(LocalJob(i), "spec.suspend");
      if (s == nullptr || *s != json::value(true)) return false;
    }
    return FedCondition("Suspended");
  }));
}

}  // namespace
}  // namespace flotilla::federation::job
