// The CronJob controller on a real API server and a FakeClock: one Job per
// schedule time, history limits, concurrency policies, a missed deadline and
// time zones. The test plays the Job controller (it marks Jobs finished).
#include "cronjob/cronjob_controller.h"

#include <gtest/gtest.h>

#include "api/batch.h"
#include "api/owner.h"
#include "client/client_test_util.h"
#include "client/resources.h"
#include "runtime/test_util.h"

namespace flotilla::cronjob {
namespace {

using runtime::testing::Eventually;

// 2023-11-14T22:14:00Z: a whole minute.
constexpr int64_t kStart = 1700000040;

class CronJobControllerTest : public ::testing::Test {
 protected:
  CronJobControllerTest()
      : clock_(TimePoint(std::chrono::seconds(kStart))),
        cluster_({}, &clock_),
        client_(cluster_.InProcess()),
        manager_(clock_),
        informers_(*client_, clock_, manager_),
        controller_(*client_, clock_, manager_, informers_) {}

  void SetUp() override { ASSERT_TRUE(manager_.Start().ok()); }
  void TearDown() override { manager_.Stop(); }

  void CreateCronJob(std::string_view spec) {
    auto cj =
        ParseJsonObject(R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"tick"},
        "spec":{"schedule":"* * * * *","jobTemplate":{"metadata":{"labels":{"team":"ops"}},
        "spec":{"template":{"spec":{"restartPolicy":"Never",
        "containers":[{"name":"work","image":"busybox"}]}}}}}})");
    ASSERT_TRUE(cj.ok());
    auto more = ParseJsonObject(spec);
    ASSERT_TRUE(more.ok());
    for (auto& [k, v] : *more) (*cj)["spec"].as_object()[k] = v;
    auto made = client_->Create(client::kCronJobs, "default", *cj);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
  }
  json::object CronJob() {
    auto cj = client_->Get(client::kCronJobs, "default", "tick");
    return cj.ok() ? *cj : json::object{};
  }
  std::vector<std::string> JobNames() {
    StatusOr<client::ObjectList> list = client_->List(client::kJobs, "default", {});
    std::vector<std::string> out;
    if (list.ok()) {
      for (const json::object& j : list->items) out.push_back(StringAt(j, "metadata.name"));
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  // The Job of the run at kStart + `minutes`.
  static std::string RunName(int64_t minutes) {
    return "tick-" + std::to_string(kStart / 60 + minutes);
  }
  // Plays the Job controller: the Job complete (or failed).
  void Finish(const std::string& name, bool complete = true) {
    ASSERT_TRUE(Eventually([&] {
      auto j = client_->Get(client::kJobs, "default", name);
      if (!j.ok()) return false;
      std::string now = FormatRfc3339(clock_.Now());
      (*j)["status"] =
          json::object{{"startTime", now},
                       {"conditions", json::array{api::batch::JobCondition(
                                          complete ? "Complete" : "Failed", "Done", "", now)}}};
      if (complete) (*j)["status"].as_object()["completionTime"] = now;
      return client_->UpdateStatus(client::kJobs, "default", *j).ok();
    }));
  }
  // Waits until the controller is idle with caches that hold what the API
  // holds (the CronJob as stored, as many Jobs), then moves the clock (a
  // second more than `d`: the controller looks a little after each time
  // due). A loaded machine delivers watch events late; a clock moved
  // before they arrive has the controller judge a run on stale objects.
  void Advance(Duration d) {
    runtime::Controller* c = manager_.Find("cronjob-controller");
    ASSERT_TRUE(Eventually([&] {
      runtime::ObjectPtr cached = informers_.For(client::kCronJobs).lister().Get("default", "tick");
      std::string stored = StringAt(CronJob(), "metadata.resourceVersion");
      if (cached == nullptr || StringAt(*cached, "metadata.resourceVersion") != stored) {
        return false;
      }
      if (informers_.For(client::kJobs).lister().List("default").size() != JobNames().size()) {
        return false;
      }
      runtime::WorkQueueStats q = c->Metrics().queue;
      return q.depth == 0 && q.processing == 0;
    }));
    clock_.Advance(d + std::chrono::seconds(1));
  }
  std::vector<std::string> EventReasons() {
    StatusOr<client::ObjectList> list = client_->List(runtime::kEvents, "default", {});
    std::vector<std::string> out;
    if (list.ok()) {
      for (const json::object& e : list->items) out.push_back(StringAt(e, "reason"));
    }
    return out;
  }
  // Awaits an Event with `reason`: the recorder writes Events after the
  // action they tell of, from a thread of its own.
  bool HasEvent(const std::string& reason) {
    return Eventually([&] {
      std::vector<std::string> r = EventReasons();
      return std::find(r.begin(), r.end(), reason) != r.end();
    });
  }

  FakeClock clock_;
  client::testing::TestCluster cluster_;
  std::unique_ptr<client::Client> client_;
  runtime::ControllerManager manager_;
  runtime::SharedInformers informers_;
  CronJobController controller_;
};

TEST_F(CronJobControllerTest, OneJobPerScheduleTimeAndTheHistoryIsKept) {
  CreateCronJob(R"({"successfulJobsHistoryLimit":2})");
  Advance(std::chrono::seconds(60));
  ASSERT_TRUE(Eventually([&] { return JobNames() == std::vector<std::string>{RunName(1)}; }));
  auto job = client_->Get(client::kJobs, "default", RunName(1));
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(StringAt(*job, "metadata.labels.team"), "ops");
  EXPECT_EQ(api::ControllerName(*job, "CronJob"), "tick");
  EXPECT_EQ(json::serialize(*Find(*job, "metadata.annotations")),
            R"({"batch.kubernetes.io/cronjob-scheduled-timestamp":"2023-11-14T22:15:00+00:00"})");
  ASSERT_TRUE(Eventually(
      [&] { return StringAt(CronJob(), "status.lastScheduleTime") == "2023-11-14T22:15:00Z"; }));
  for (int64_t minute = 2; minute <= 4; ++minute) {
    Finish(RunName(minute - 1));
    Advance(std::chrono::seconds(60));
    ASSERT_TRUE(Eventually([&] {
      std::vector<std::string> names = JobNames();
      return std::find(names.begin(), names.end(), RunName(minute)) != names.end();
    }));
  }
  Finish(RunName(4));
  // Two completed Jobs are kept: the oldest went.
  ASSERT_TRUE(Eventually([&] {
    return JobNames() == std::vector<std::string>{RunName(3), RunName(4)};
  }));
  EXPECT_FALSE(StringAt(CronJob(), "status.lastSuccessfulTime").empty());
  EXPECT_TRUE(HasEvent("SawCompletedJob"));
  EXPECT_TRUE(HasEvent("SuccessfulDelete"));
}

TEST_F(CronJobControllerTest, ForbidWaitsForTheActiveJobAndReplaceDeletesIt) {
  CreateCronJob(R"({"concurrencyPolicy":"Forbid"})");
  Advance(std::chrono::seconds(60));
  ASSERT_TRUE(Eventually([&] { return JobNames() == std::vector<std::string>{RunName(1)}; }));
  ASSERT_TRUE(Eventually([&] { return Find(CronJob(), "status.active") != nullptr; }));
  Advance(std::chrono::seconds(60));
  ASSERT_TRUE(HasEvent("JobAlreadyActive"));
  EXPECT_EQ(JobNames(), std::vector<std::string>{RunName(1)});
  // Once it finishes, the run that waited starts (late).
  Finish(RunName(1));
  ASSERT_TRUE(Eventually([&] {
    return JobNames() == std::vector<std::string>{RunName(1), RunName(2)};
  }));

  ASSERT_TRUE(client_
                  ->Patch(client::kCronJobs, "default", "tick", client::PatchType::kMerge,
                          R"({"spec":{"concurrencyPolicy":"Replace"}})")
                  .ok());
  Advance(std::chrono::seconds(60));
  // The running Job of minute 2 is replaced by minute 3's.
  ASSERT_TRUE(Eventually([&] {
    return JobNames() == std::vector<std::string>{RunName(1), RunName(3)};
  }));
}

TEST_F(CronJobControllerTest, ARunPastItsStartingDeadlineIsSkipped) {
  CreateCronJob(R"({"suspend":true,"startingDeadlineSeconds":10})");
  Advance(std::chrono::seconds(90));  // minute 1 came while suspended
  runtime::Controller* c = manager_.Find("cronjob-controller");
  ASSERT_TRUE(Eventually([&] { return c->Metrics().queue.depth == 0; }));
  const uint64_t before = c->Metrics().reconciles;
  ASSERT_TRUE(client_
                  ->Patch(client::kCronJobs, "default", "tick", client::PatchType::kMerge,
                          R"({"spec":{"suspend":false}})")
                  .ok());
  // Resumed 31 s after minute 1: too late for it, as kube's controller
  // judges (it looks back only startingDeadlineSeconds).
  ASSERT_TRUE(Eventually([&] { return c->Metrics().reconciles > before; }));
  EXPECT_TRUE(JobNames().empty());
  Advance(std::chrono::seconds(29));  // minute 2 is on time
  ASSERT_TRUE(Eventually([&] { return JobNames() == std::vector<std::string>{RunName(2)}; }));
}

TEST_F(CronJobControllerTest, TheScheduleIsReadInItsTimeZone) {
  // 17:15 in New York is 22:15 UTC in November.
  CreateCronJob(R"({"schedule":"15 17 * * *","timeZone":"America/New_York"})");
  Advance(std::chrono::seconds(60));
  ASSERT_TRUE(Eventually([&] { return JobNames() == std::vector<std::string>{RunName(1)}; }));
  auto job = client_->Get(client::kJobs, "default", RunName(1));
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(json::serialize(*Find(*job, "metadata.annotations")),
            R"({"batch.kubernetes.io/cronjob-scheduled-timestamp":"2023-11-14T17:15:00-05:00"})");
}

}  // namespace
}  // namespace flotilla::cronjob
