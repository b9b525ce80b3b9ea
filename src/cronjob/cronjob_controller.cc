// The CronJob controller (cronjob_controller.h).
#include "cronjob/cronjob_controller.h"

#include <algorithm>
#include <set>

#include "api/batch.h"
#include "api/cron.h"
#include "api/owner.h"
#include "api/patch.h"
#include "api/views.h"
#include "client/resources.h"

namespace flotilla::cronjob {
namespace {

constexpr std::string_view kScheduledTimestamp = "batch.kubernetes.io/cronjob-scheduled-timestamp";
constexpr int kMaxMissed = 100;
// kube's nextScheduleTimeDuration: a little after the time, so that the
// check finds it due.
constexpr Duration kAfterDue = std::chrono::milliseconds(100);

TimePoint TimeAt(const json::object& o, std::string_view path, TimePoint fallback) {
  TimePoint t;
  return ParseRfc3339(StringAt(o, path), &t) ? t : fallback;
}

std::string Name(const json::object& o) { return std::string(api::ObjectView(o).name()); }
std::string Uid(const json::object& o) { return std::string(api::ObjectView(o).uid()); }

// The Job's name for a run at `t`: minutes since the epoch.
std::string JobName(const std::string& cronjob, TimePoint t) {
  return cronjob + "-" +
         std::to_string(
             std::chrono::duration_cast<std::chrono::minutes>(t.time_since_epoch()).count());
}

// RFC 3339 of `t` in `zone`, with its offset ("2026-03-01T03:00:00-05:00").
std::string InZone(TimePoint t, const absl::TimeZone& zone) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%S%Ez", absl::FromChrono(t), zone);
}

json::object Reference(const json::object& job) {
  return {{"kind", "Job"},
          {"namespace", std::string(api::ObjectView(job).ns())},
          {"name", Name(job)},
          {"uid", Uid(job)},
          {"apiVersion", "batch/v1"},
          {"resourceVersion", StringAt(job, "metadata.resourceVersion")}};
}

}  // namespace

CronJobController::CronJobController(client::Client& client, Clock& clock,
                                     runtime::ControllerManager& manager,
                                     runtime::SharedInformers& informers,
                                     CronJobControllerOptions options)
    : client_(client),
      clock_(clock),
      options_(std::move(options)),
      events_(client, clock, runtime::EventSource{options_.name, ""}),
      cronjobs_(informers.For(client::kCronJobs)),
      jobs_(informers.For(client::kJobs)) {
  controller_ = &manager.AddController(options_.name, options_.workers,
                                       [this](const std::string& key) { return Reconcile(key); });
  cronjobs_.AddEventHandler(controller_->EnqueueHandler());
  auto owner = [this](const runtime::ObjectPtr& job) {
    std::string key = OwnerKey(*job);
    if (!key.empty()) controller_->queue().Add(key);
  };
  jobs_.AddEventHandler(runtime::EventHandler{
      .on_add = owner,
      .on_update = [owner](const runtime::ObjectPtr&, const runtime::ObjectPtr& j) { owner(j); },
      .on_delete = owner});
}

std::string CronJobController::OwnerKey(const json::object& job) const {
  const json::object* ref = api::ControllerRef(job);
  if (ref == nullptr || GetString(*ref, "kind") != "CronJob") return "";
  return runtime::ObjectKey(std::string(api::ObjectView(job).ns()),
                            std::string(GetString(*ref, "name").value_or("")));
}

StatusOr<runtime::Result> CronJobController::Reconcile(const std::string& key) {
  runtime::ObjectPtr cached = cronjobs_.cache().Get(key);
  if (cached == nullptr) return runtime::Result{};
  const json::object& cj = *cached;
  const std::string ns(api::ObjectView(cj).ns());
  const std::string name = Name(cj);
  const json::object cj_ref = [&] {
    json::object o = cj;
    o["apiVersion"] = "batch/v1";
    o["kind"] = "CronJob";
    return o;
  }();
  const TimePoint now = clock_.Now();

  // Its Jobs.
  std::vector<runtime::ObjectPtr> jobs;
  for (const runtime::ObjectPtr& j : jobs_.cache().ByIndex(runtime::kNamespaceIndex, ns)) {
    const json::object* ref = api::ControllerRef(*j);
    if (ref != nullptr && GetString(*ref, "uid") == Uid(cj)) jobs.push_back(j);
  }
  const json::value* old_status = cj.if_contains("status");
  json::object status =
      old_status != nullptr && old_status->is_object() ? old_status->get_object() : json::object();
  // status.active: the running Jobs (finished and vanished ones leave it).
  json::array active;
  std::string last_success = StringAt(status, "lastSuccessfulTime");
  std::set<std::string> was_active;
  if (const json::value* a = Find(cj, "status.active"); a != nullptr && a->is_array()) {
    for (const json::value& v : a->get_array()) {
      if (v.is_object()) was_active.insert(StringAt(v.get_object(), "uid"));
    }
  }
  for (const runtime::ObjectPtr& j : jobs) {
    if (api::batch::Finished(*j)) {
      if (was_active.contains(Uid(*j))) {
        events_.Event(cj_ref, runtime::kEventTypeNormal, "SawCompletedJob",
                      "Saw completed job: " + Name(*j) + ", condition: " +
                          (api::ConditionTrue(*j, api::batch::kComplete) ? "Complete" : "Failed"));
      }
      if (api::ConditionTrue(*j, api::batch::kComplete)) {
        std::string done = StringAt(*j, "status.completionTime");
        if (done > last_success) last_success = done;
      }
    } else if (!api::IsBeingDeleted(*j)) {
      active.push_back(Reference(*j));
    }
  }
  status["active"] = active;
  if (!last_success.empty()) status["lastSuccessfulTime"] = last_success;
  if (active.empty()) status.erase("active");

  runtime::Result result;
  auto write = [&]() -> StatusOr<runtime::Result> {
    if (old_status != nullptr && *old_status == json::value(status)) return result;
    auto written = client_.Patch(client::kCronJobs, ns, name, client::PatchType::kMerge,
                                 api::StatusMergePatch(old_status, status), "status");
    if (!written.ok() && !written.status().Is(Reason::kNotFound)) return written.status();
    return result;
  };

  // History: the oldest finished Jobs beyond the limits go.
  for (bool succeeded : {true, false}) {
    std::vector<runtime::ObjectPtr> finished;
    for (const runtime::ObjectPtr& j : jobs) {
      if (api::IsBeingDeleted(*j)) continue;
      if (succeeded ? api::ConditionTrue(*j, api::batch::kComplete)
                    : api::ConditionTrue(*j, api::batch::kFailed)) {
        finished.push_back(j);
      }
    }
    int64_t limit = api::batch::OptionalIntAt(cj, succeeded ? "spec.successfulJobsHistoryLimit"
                                                            : "spec.failedJobsHistoryLimit")
                        .value_or(succeeded ? 3 : 1);
    if (static_cast<int64_t>(finished.size()) <= limit) continue;
    std::sort(finished.begin(), finished.end(), [](const auto& a, const auto& b) {
      std::string sa = StringAt(*a, "status.startTime"), sb = StringAt(*b, "status.startTime");
      if (sa != sb) return sa < sb;
      return Name(*a) < Name(*b);
    });
    for (size_t i = 0; i + limit < finished.size(); ++i) {
      client::DeleteOptions opts;
      opts.propagation_policy = "Background";
      opts.precondition_uid = Uid(*finished[i]);
      Status s = client_.Delete(client::kJobs, ns, Name(*finished[i]), opts);
      if (!s.ok() && !s.Is(Reason::kNotFound) && !s.Is(Reason::kConflict)) return s;
      if (s.ok()) {
        events_.Event(cj_ref, runtime::kEventTypeNormal, "SuccessfulDelete",
                      "Deleted job " + Name(*finished[i]));
      }
    }
  }

  if (api::IsBeingDeleted(cj)) return write();
  StatusOr<absl::TimeZone> zone = api::cron::LoadZone(StringAt(cj, "spec.timeZone"));
  if (!zone.ok()) {
    events_.Event(
        cj_ref, runtime::kEventTypeWarning, "UnknownTimeZone",
        "invalid timeZone: \"" + StringAt(cj, "spec.timeZone") + "\": " + zone.status().message());
    return write();
  }
  StatusOr<api::cron::Schedule> schedule =
      api::cron::Schedule::Parse(StringAt(cj, "spec.schedule"));
  if (!schedule.ok()) {
    events_.Event(cj_ref, runtime::kEventTypeWarning, "UnparseableSchedule",
                  "unparseable schedule: \"" + StringAt(cj, "spec.schedule") +
                      "\" : " + schedule.status().message());
    return write();
  }
  const json::value* suspend = Find(cj, "spec.suspend");
  if (suspend != nullptr && suspend->is_bool() && suspend->get_bool()) return write();

  auto wait_for_next = [&](TimePoint from) {
    if (std::optional<TimePoint> next = schedule->Next(from, *zone)) {
      result.requeue_after = std::max<Duration>(*next - now, Duration::zero()) + kAfterDue;
    }
  };
  // The most recent time due since the last run (or the creation).
  TimePoint earliest =
      TimeAt(cj, "status.lastScheduleTime", TimeAt(cj, "metadata.creationTimestamp", now));
  const std::optional<int64_t> deadline =
      api::batch::OptionalIntAt(cj, "spec.startingDeadlineSeconds");
  if (deadline && earliest < now - std::chrono::seconds(*deadline)) {
    earliest = now - std::chrono::seconds(*deadline);
  }
  std::optional<TimePoint> due;
  int64_t missed = 0;
  std::optional<TimePoint> first = schedule->Next(earliest, *zone);
  for (std::optional<TimePoint> t = first; t && *t <= now; t = schedule->Next(*t, *zone)) {
    due = t;
    if (++missed > kMaxMissed) {
      // Far behind (kube's mostRecentScheduleTime): count by the period of
      // the first two times, and take the latest time due.
      std::optional<TimePoint> second = schedule->Next(*first, *zone);
      Duration period = std::max<Duration>(*second - *first, std::chrono::seconds(1));
      missed = (now - *first) / period + 1;
      for (std::optional<TimePoint> u = schedule->Next(now - 2 * period, *zone); u && *u <= now;
           u = schedule->Next(*u, *zone)) {
        due = u;
      }
      break;
    }
  }
  if (missed > kMaxMissed) {
    events_.Event(cj_ref, runtime::kEventTypeWarning, "TooManyMissedTimes",
                  "too many missed start times: " + std::to_string(missed) +
                      ". Set or decrease .spec.startingDeadlineSeconds or check clock skew");
  }
  if (!due) {
    wait_for_next(now);
    return write();
  }
  if (deadline && *due + std::chrono::seconds(*deadline) < now) {
    events_.Event(cj_ref, runtime::kEventTypeWarning, "MissSchedule",
                  "Missed scheduled time to start a job: " + InZone(*due, *zone));
    wait_for_next(now);
    return write();
  }
  const std::string job_name = JobName(name, *due);
  for (const runtime::ObjectPtr& j : jobs) {
    if (Name(*j) == job_name) {  // this run was made already
      status["lastScheduleTime"] = FormatRfc3339(*due);
      wait_for_next(now);
      return write();
    }
  }
  const std::string policy = StringAt(cj, "spec.concurrencyPolicy");
  if (policy == "Forbid" && !active.empty()) {
    events_.Event(cj_ref, runtime::kEventTypeNormal, "JobAlreadyActive",
                  "Not starting job because prior execution is running and concurrency policy "
                  "is Forbid");
    wait_for_next(now);
    return write();
  }
  if (policy == "Replace") {
    for (const runtime::ObjectPtr& j : jobs) {
      if (api::batch::Finished(*j) || api::IsBeingDeleted(*j)) continue;
      client::DeleteOptions opts;
      opts.propagation_policy = "Background";
      opts.precondition_uid = Uid(*j);
      Status s = client_.Delete(client::kJobs, ns, Name(*j), opts);
      if (!s.ok() && !s.Is(Reason::kNotFound)) return s;
      events_.Event(cj_ref, runtime::kEventTypeNormal, "SuccessfulDelete",
                    "Deleted job " + Name(*j));
    }
    active = json::array();
    status.erase("active");
  }

  // The run.
  json::object meta = {
      {"name", job_name},
      {"namespace", ns},
      {"ownerReferences", json::array{api::NewControllerRef(cj, "batch/v1", "CronJob")}}};
  for (const char* field : {"labels", "annotations"}) {
    const json::value* v = Find(cj, std::string("spec.jobTemplate.metadata.") + field);
    if (v != nullptr && v->is_object()) meta[field] = *v;
  }
  EnsureObject(meta, "annotations")[kScheduledTimestamp] = InZone(*due, *zone);
  const json::value* spec = Find(cj, "spec.jobTemplate.spec");
  json::object job = {{"apiVersion", "batch/v1"},
                      {"kind", "Job"},
                      {"metadata", std::move(meta)},
                      {"spec", spec != nullptr && spec->is_object() ? *spec : json::object()}};
  auto created = client_.Create(client::kJobs, ns, job);
  if (!created.ok() && !created.status().Is(Reason::kAlreadyExists)) {
    events_.Event(cj_ref, runtime::kEventTypeWarning, "FailedCreate",
                  "Error creating job: " + created.status().message());
    return created.status();
  }
  if (created.ok()) {
    events_.Event(cj_ref, runtime::kEventTypeNormal, "SuccessfulCreate", "Created job " + job_name);
    json::value& list = status["active"];
    if (!list.is_array()) list = json::array();
    list.get_array().push_back(Reference(*created));
  }
  status["lastScheduleTime"] = FormatRfc3339(*due);
  wait_for_next(now);
  return write();
}

}  // namespace flotilla::cronjob
