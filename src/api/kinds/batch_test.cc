// batch/v1 Job as kube-apiserver serves it: defaults, the generated
// selector, validation on create and update, and the Table row.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/kinds/test_util.h"

namespace flotilla::api::kinds {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const char kJob[] = R"({"apiVersion":"batch/v1","kind":"Job",
  "metadata":{"name":"pi","namespace":"default","uid":"u-1"},
  "spec":{"template":{"spec":{"restartPolicy":"Never",
    "containers":[{"name":"pi","image":"perl"}]}}}})";

const Resource& Jobs() { return Res("batch", "v1", "jobs"); }

// As a create makes it: defaults, then the strategy's selector.
json::object Created(json::object obj) {
  Jobs().default_fn(obj);
  Jobs().mutate_on_create(obj);
  return obj;
}

TEST(JobKind, DefaultsAndTheGeneratedSelector) {
  json::object job = Created(Obj(kJob));
  EXPECT_EQ(IntAt(job, "spec.completions"), 1);
  EXPECT_EQ(IntAt(job, "spec.parallelism"), 1);
  EXPECT_EQ(IntAt(job, "spec.backoffLimit"), 6);
  EXPECT_EQ(StringAt(job, "spec.completionMode"), "NonIndexed");
  EXPECT_EQ(StringAt(job, "spec.podReplacementPolicy"), "TerminatingOrFailed");
  EXPECT_EQ(*Find(job, "spec.suspend"), json::value(false));
  EXPECT_EQ(json::serialize(*Find(job, "spec.selector")),
            R"({"matchLabels":{"batch.kubernetes.io/controller-uid":"u-1"}})");
  const json::object* labels = ObjectAt(job, "spec.template.metadata.labels");
  ASSERT_NE(labels, nullptr);
  EXPECT_EQ(labels->size(), 4u);
  EXPECT_EQ(StringAt(*labels, "job-name"), "pi");
  EXPECT_THAT(Messages(Jobs().validate_fn(job, nullptr)), IsEmpty());
}

TEST(JobKind, ParallelismAloneLeavesCompletionsUnset) {
  json::object obj = Obj(kJob);
  MergePatch(obj, Obj(R"({"spec":{"parallelism":3}})"));
  json::object job = Created(obj);
  EXPECT_EQ(Find(job, "spec.completions"), nullptr);
  EXPECT_EQ(IntAt(job, "spec.parallelism"), 3);
}

TEST(JobKind, Validation) {
  json::object obj = Obj(kJob);
  MergePatch(obj, Obj(R"({"spec":{"completionMode":"Indexed","completions":null,
    "parallelism":-1,"backoffLimit":-2,
    "template":{"spec":{"restartPolicy":"Always"}}}})"));
  json::object job = Created(obj);
  job["spec"].as_object().erase("completions");
  EXPECT_THAT(
      Messages(Jobs().validate_fn(job, nullptr)),
      ElementsAre(
          "spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
          "spec.backoffLimit: Invalid value: -2: must be greater than or equal to 0",
          "spec.completions: Required value: when completion mode is Indexed",
          R"(spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never")"));
}

TEST(JobKind, ASelectorNotGeneratedIsRefusedWithoutManualSelector) {
  json::object job = Created(Obj(kJob));
  job["spec"].as_object()["selector"] =
      Obj(R"({"matchLabels":{"batch.kubernetes.io/controller-uid":"other"}})");
  std::vector<std::string> messages = Messages(Jobs().validate_fn(job, nullptr));
  ASSERT_FALSE(messages.empty());
  EXPECT_THAT(messages.back(), ::testing::HasSubstr("`selector` not auto-generated"));
}

TEST(JobKind, CompletionsAndTemplateAreImmutable) {
  json::object old = Created(Obj(kJob));
  json::object job = old;
  MergePatch(job,
             Obj(R"({"spec":{"completions":5,"template":{"spec":{"activeDeadlineSeconds":3}}}})"));
  EXPECT_THAT(Messages(Jobs().validate_fn(job, &old)),
              ElementsAre("spec.completions: Invalid value: 5: field is immutable",
                          "spec.template: Invalid value: core.PodTemplateSpec{...}: field is "
                          "immutable"));
  // parallelism and suspend may change.
  job = old;
  MergePatch(job, Obj(R"({"spec":{"parallelism":4,"suspend":true}})"));
  EXPECT_THAT(Messages(Jobs().validate_fn(job, &old)), IsEmpty());
}

TEST(JobKind, AnIndexedJobIsElastic) {
  json::object obj = Obj(kJob);
  MergePatch(obj, Obj(R"({"spec":{"completionMode":"Indexed","completions":3,"parallelism":3}})"));
  json::object old = Created(obj);
  json::object job = old;
  MergePatch(job, Obj(R"({"spec":{"completions":5,"parallelism":5}})"));
  EXPECT_THAT(Messages(Jobs().validate_fn(job, &old)), IsEmpty());
}

TEST(JobKind, Columns) {
  EXPECT_THAT(ColumnNames(Jobs()), ElementsAre("Name", "Status", "Completions", "Duration", "Age",
                                               "Containers", "Images", "Selector"));
  json::object job = Created(Obj(kJob));
  MergePatch(job, Obj(R"({"metadata":{"creationTimestamp":"2026-01-01T00:00:00Z"},
    "status":{"succeeded":1,"startTime":"2026-01-01T00:00:00Z",
    "completionTime":"2026-01-01T00:01:05Z",
    "conditions":[{"type":"Complete","status":"True"}]}})"));
  TimePoint now;
  ASSERT_TRUE(ParseRfc3339("2026-01-01T00:10:00Z", &now));
  std::vector<std::string> row = Row(Jobs(), job, now);
  EXPECT_EQ(row[1], "\"Complete\"");
  EXPECT_EQ(row[2], "\"1/1\"");
  EXPECT_EQ(row[3], "\"65s\"");
  job["spec"].as_object().erase("completions");
  job["spec"].as_object()["parallelism"] = 4;
  job["status"].as_object().erase("conditions");
  row = Row(Jobs(), job, now);
  EXPECT_EQ(row[1], "\"Running\"");
  EXPECT_EQ(row[2], "\"1/1 of 4\"");
}

const char kCronJob[] = R"({"apiVersion":"batch/v1","kind":"CronJob",
  "metadata":{"name":"nightly","namespace":"default","uid":"u-2"},
  "spec":{"schedule":"0 3 * * *","jobTemplate":{"spec":{"template":{"spec":{
    "restartPolicy":"OnFailure","containers":[{"name":"backup","image":"busybox"}]}}}}}})";

const Resource& CronJobs() { return Res("batch", "v1", "cronjobs"); }

TEST(CronJobKind, Defaults) {
  json::object cj = Obj(kCronJob);
  CronJobs().default_fn(cj);
  EXPECT_EQ(StringAt(cj, "spec.concurrencyPolicy"), "Allow");
  EXPECT_EQ(IntAt(cj, "spec.successfulJobsHistoryLimit"), 3);
  EXPECT_EQ(IntAt(cj, "spec.failedJobsHistoryLimit"), 1);
  EXPECT_EQ(*Find(cj, "spec.suspend"), json::value(false));
  // The Job template's pod template is defaulted, not its Job spec.
  EXPECT_EQ(StringAt(cj, "spec.jobTemplate.spec.template.spec.dnsPolicy"), "ClusterFirst");
  EXPECT_EQ(Find(cj, "spec.jobTemplate.spec.completions"), nullptr);
  EXPECT_THAT(Messages(CronJobs().validate_fn(cj, nullptr)), IsEmpty());
}

TEST(CronJobKind, Validation) {
  json::object cj = Obj(kCronJob);
  MergePatch(cj, Obj(R"({"spec":{"schedule":"61 * * * *","timeZone":"Mars/Olympus",
    "concurrencyPolicy":"Sometimes","startingDeadlineSeconds":-5,
    "jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Always"}}}}}})"));
  CronJobs().default_fn(cj);
  EXPECT_THAT(
      Messages(CronJobs().validate_fn(cj, nullptr)),
      ElementsAre(
          R"(spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61)",
          R"(spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus)",
          R"(spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace")",
          "spec.startingDeadlineSeconds: Invalid value: -5: must be greater than or equal to 0",
          R"(spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never")"));
  json::object tz = Obj(kCronJob);
  MergePatch(tz, Obj(R"({"spec":{"schedule":"TZ=UTC 0 3 * * *"}})"));
  CronJobs().default_fn(tz);
  EXPECT_THAT(
      Messages(CronJobs().validate_fn(tz, nullptr)),
      ElementsAre(
          R"(spec.schedule: Invalid value: "TZ=UTC 0 3 * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead)"));
}

TEST(CronJobKind, Columns) {
  EXPECT_THAT(ColumnNames(CronJobs()),
              ElementsAre("Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule",
                          "Age", "Containers", "Images", "Selector"));
  json::object cj = Obj(kCronJob);
  CronJobs().default_fn(cj);
  MergePatch(cj, Obj(R"({"status":{"lastScheduleTime":"2026-01-01T03:00:00Z",
    "active":[{"kind":"Job","name":"nightly-29455020"}]}})"));
  TimePoint now;
  ASSERT_TRUE(ParseRfc3339("2026-01-01T03:05:00Z", &now));
  std::vector<std::string> row = Row(CronJobs(), cj, now);
  EXPECT_EQ(row[1], "\"0 3 * * *\"");
  EXPECT_EQ(row[2], "\"<none>\"");
  EXPECT_EQ(row[3], "\"False\"");
  EXPECT_EQ(row[4], "1");
  EXPECT_EQ(row[5], "\"5m\"");
}

}  // namespace
}  // namespace flotilla::api::kinds
