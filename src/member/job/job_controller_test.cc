// The member's Job controller with the scheduler and kubelet on a FakeClock:
// completions and parallelism, Indexed Jobs, the back-off limit, suspend and
// the TTL after finishing.
#include "member/job/job_controller.h"

#include <gtest/gtest.h>

#include <set>

#include "member/kubelet/kubelet.h"
#include "member/nodes/nodes.h"
#include "member/object_util.h"
#include "member/scheduler/scheduler.h"
#include "member/test_util.h"
#include "runtime/test_util.h"

namespace flotilla::member {
namespace {

using runtime::testing::Eventually;

using testing::Parse;

// A Job whose pods run 10 s and exit with `exit_code`; `spec` is merged in.
json::object NewJob(const std::string& name, std::string_view spec, int exit_code = 0,
                    std::string_view restart = "Never") {
  json::object job =
      Parse(R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":")" + name +
            R"("},"spec":{"template":{"metadata":{"annotations":{"sim.flotilla.io/run-for":"10s",
      "sim.flotilla.io/exit-code":")" +
            std::to_string(exit_code) + R"("}},"spec":{
      "restartPolicy":")" +
            std::string(restart) + R"(","containers":[{"name":"work","image":"busybox"}]}}}})");
  for (auto& [k, v] : Parse(spec)) job["spec"].as_object()[k] = v;
  return job;
}

class JobControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.options().nodes = 2;
    env_.Add<Nodes>();
    env_.Add<Scheduler>();
    env_.Add<Kubelet>();
    env_.Add<JobController>();
    ASSERT_TRUE(env_.Start().ok());
  }

  json::object Job(const std::string& name) {
    auto job = env_.client().Get(client::kJobs, "default", name);
    return job.ok() ? *job : json::object{};
  }
  std::vector<json::object> Pods() {
    StatusOr<client::ObjectList> list = env_.client().List(kPods, "default", {});
    return list.ok() ? list->items : std::vector<json::object>{};
  }
  bool HasCondition(const std::string& name, std::string_view type) {
    const json::object job = Job(name);
    for (const json::object* c : ObjectsAt(job, "status.conditions")) {
      if (StringAt(*c, "type") == type && StringAt(*c, "status") == "True") return true;
    }
    return false;
  }
  bool AdvanceUntil(const std::function<bool()>& done, Duration limit) {
    return env_.AdvanceUntil(done, limit, {"kubelet", "scheduler", JobController::kControllerName});
  }

  testing::MemberTestEnv env_;
};

TEST_F(JobControllerTest, RunsItsCompletionsAtMostParallelismAtATime) {
  ASSERT_TRUE(
      env_.client()
          .Create(client::kJobs, "default", NewJob("batch", R"({"completions":4,"parallelism":2})"))
          .ok());
  ASSERT_TRUE(Eventually([&] { return Pods().size() == 2; }));
  ASSERT_TRUE(
      AdvanceUntil([&] { return HasCondition("batch", "Complete"); }, std::chrono::seconds(60)));
  json::object job = Job("batch");
  EXPECT_EQ(IntAt(job, "status.succeeded"), 4);
  EXPECT_EQ(Find(job, "status.active"), nullptr);
  EXPECT_TRUE(HasCondition("batch", "SuccessCriteriaMet"));
  EXPECT_FALSE(StringAt(job, "status.completionTime").empty());
  EXPECT_EQ(Pods().size(), 4u);  // none ran twice
}

TEST_F(JobControllerTest, AnIndexedJobRunsEachIndexOnce) {
  ASSERT_TRUE(
      env_.client()
          .Create(client::kJobs, "default",
                  NewJob("idx", R"({"completions":3,"parallelism":3,"completionMode":"Indexed"})"))
          .ok());
  ASSERT_TRUE(Eventually([&] { return Pods().size() == 3; }));
  std::set<std::string> indexes;
  for (const json::object& pod : Pods()) {
    const json::value* annotations = Find(pod, "metadata.annotations");
    ASSERT_NE(annotations, nullptr);
    const json::value* index =
        annotations->as_object().if_contains("batch.kubernetes.io/job-completion-index");
    ASSERT_NE(index, nullptr);
    indexes.insert(std::string(index->as_string()));
    EXPECT_EQ(StringAt(pod, "spec.hostname"), "idx-" + std::string(index->as_string()));
    const json::value* env = Find(pod, "spec.containers");
    ASSERT_NE(env, nullptr);
    EXPECT_NE(json::serialize(*env).find("JOB_COMPLETION_INDEX"), std::string::npos);
  }
  EXPECT_EQ(indexes, (std::set<std::string>{"0", "1", "2"}));
  ASSERT_TRUE(
      AdvanceUntil([&] { return HasCondition("idx", "Complete"); }, std::chrono::seconds(60)));
  EXPECT_EQ(StringAt(Job("idx"), "status.completedIndexes"), "0-2");
  EXPECT_EQ(IntAt(Job("idx"), "status.succeeded"), 3);
}

TEST_F(JobControllerTest, FailuresBeyondTheBackoffLimitFailTheJob) {
  ASSERT_TRUE(env_.client()
                  .Create(client::kJobs, "default", NewJob("bad", R"({"backoffLimit":1})", 2))
                  .ok());
  ASSERT_TRUE(
      AdvanceUntil([&] { return HasCondition("bad", "Failed"); }, std::chrono::seconds(120)))
      << json::serialize(Job("bad")) << "\n"
      << json::serialize(json::value_from(Pods()));
  json::object job = Job("bad");
  EXPECT_EQ(IntAt(job, "status.failed"), 2);
  EXPECT_TRUE(HasCondition("bad", "FailureTarget"));
  bool backoff_limit = false;
  for (const json::object* c : ObjectsAt(job, "status.conditions")) {
    if (StringAt(*c, "type") == "Failed")
      backoff_limit = StringAt(*c, "reason") == "BackoffLimitExceeded";
  }
  EXPECT_TRUE(backoff_limit);
  EXPECT_EQ(Pods().size(), 2u);
}

TEST_F(JobControllerTest, ASuspendedJobRunsNothingUntilResumed) {
  ASSERT_TRUE(
      env_.client().Create(client::kJobs, "default", NewJob("later", R"({"suspend":true})")).ok());
  ASSERT_TRUE(Eventually([&] { return HasCondition("later", "Suspended"); }));
  EXPECT_TRUE(Pods().empty());
  ASSERT_TRUE(env_.client()
                  .Patch(client::kJobs, "default", "later", client::PatchType::kMerge,
                         R"({"spec":{"suspend":false}})")
                  .ok());
  ASSERT_TRUE(Eventually([&] { return Pods().size() == 1; }));
  ASSERT_TRUE(
      AdvanceUntil([&] { return HasCondition("later", "Complete"); }, std::chrono::seconds(60)));
}

TEST_F(JobControllerTest, AFinishedJobGoesAfterItsTtl) {
  ASSERT_TRUE(
      env_.client()
          .Create(client::kJobs, "default", NewJob("short", R"({"ttlSecondsAfterFinished":30})"))
          .ok());
  ASSERT_TRUE(
      AdvanceUntil([&] { return HasCondition("short", "Complete"); }, std::chrono::seconds(60)));
  ASSERT_TRUE(AdvanceUntil(
      [&] {
        return env_.client().Get(client::kJobs, "default", "short").status().Is(Reason::kNotFound);
      },
      std::chrono::seconds(60)));
}

}  // namespace
}  // namespace flotilla::member
