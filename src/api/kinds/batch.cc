// batch/v1 Job and CronJob: defaults (pkg/apis/batch/v1/defaults.go), the
// selector the Job strategy generates, validation
// (pkg/apis/batch/validation), columns (printJob, printCronJob) and
// registration.
#include "api/batch.h"

#include "api/cron.h"
#include "api/kinds/pod_spec.h"
#include "api/kinds/resources.h"
#include "api/labels.h"
#include "api/validation.h"

namespace flotilla::api::kinds {
namespace {

void DefaultJob(json::object& obj) {
  json::object& spec = EnsureObject(obj, "spec");
  auto unset = [&](std::string_view key) {
    const json::value* v = spec.if_contains(key);
    return v == nullptr || v->is_null();
  };
  if (unset("completions") && unset("parallelism")) {
    spec["completions"] = 1;
    spec["parallelism"] = 1;
  }
  SetIfUnset(spec, "parallelism", 1);
  SetIfUnset(spec, "backoffLimit", unset("backoffLimitPerIndex") ? 6 : 2147483647);
  SetIfEmpty(spec, "completionMode", batch::kNonIndexed);
  SetIfUnset(spec, "suspend", false);
  SetIfUnset(spec, "manualSelector", false);
  SetIfEmpty(spec, "podReplacementPolicy", "TerminatingOrFailed");
  json::object& tmpl = EnsureObject(spec, "template");
  EnsureObject(tmpl, "spec");
  DefaultPodTemplate(tmpl);
  // The Job's labels are its template's when it has none.
  const json::object* labels = ObjectAt(tmpl, "metadata.labels");
  json::object& meta = EnsureObject(obj, "metadata");
  const json::object* own = GetObject(meta, "labels");
  if (labels != nullptr && (own == nullptr || own->empty())) meta["labels"] = *labels;
}

bool ManualSelector(const json::object& spec) {
  return GetBool(spec, "manualSelector").value_or(false);
}

// The Job strategy's generateSelector: the template gets the job-name and
// controller-uid labels (legacy and batch.kubernetes.io/ forms) unless it
// has them, and the selector matches the controller uid.
void GenerateSelector(json::object& obj) {
  json::object& spec = EnsureObject(obj, "spec");
  if (ManualSelector(spec)) return;
  std::string name = StringAt(obj, "metadata.name");
  std::string uid = StringAt(obj, "metadata.uid");
  json::object& labels =
      EnsureObject(EnsureObject(EnsureObject(spec, "template"), "metadata"), "labels");
  for (std::string_view key : {batch::kLegacyJobNameLabel, batch::kJobNameLabel}) {
    if (!labels.contains(key)) labels[key] = name;
  }
  for (std::string_view key : {batch::kLegacyControllerUidLabel, batch::kControllerUidLabel}) {
    if (!labels.contains(key)) labels[key] = uid;
  }
  json::object& selector = EnsureObject(spec, "selector");
  json::object& match = EnsureObject(selector, "matchLabels");
  if (!match.contains(batch::kControllerUidLabel)) match[batch::kControllerUidLabel] = uid;
}

void AppendCauses(Causes& out, Causes more) {
  for (StatusCause& c : more) out.push_back(std::move(c));
}

// ValidateJobSpec (and the generated selector's check) at `path` ("spec",
// or a CronJob's "spec.jobTemplate.spec"); `selector_required` is false for
// a CronJob's template, whose Jobs get their selector when created.
void CheckJobSpec(const json::object& spec, const std::string& path, bool selector_required,
                  Causes& out) {
  for (std::string_view key : {"parallelism", "completions", "activeDeadlineSeconds",
                               "backoffLimit", "ttlSecondsAfterFinished"}) {
    CheckNonnegative(spec, key, path, out);
  }
  std::string mode = StringAt(spec, "completionMode");
  if (!mode.empty() && mode != batch::kNonIndexed && mode != batch::kIndexed) {
    out.push_back(
        FieldNotSupported(Child(path, "completionMode"), json::string(mode),
                          {std::string(batch::kNonIndexed), std::string(batch::kIndexed)}));
  }
  if (mode == batch::kIndexed) {
    if (!IntAt(spec, "completions")) {
      out.push_back(FieldRequired(Child(path, "completions"), "when completion mode is Indexed"));
    }
    if (IntOr(spec, "parallelism", 0) > 100000) {
      out.push_back(FieldInvalid(Child(path, "parallelism"), IntOr(spec, "parallelism", 0),
                                 "must be less than or equal to 100000 when completion mode is "
                                 "Indexed"));
    }
  }
  std::string policy = StringAt(spec, "podReplacementPolicy");
  if (!policy.empty() && policy != "TerminatingOrFailed" && policy != "Failed") {
    out.push_back(FieldNotSupported(Child(path, "podReplacementPolicy"), json::string(policy),
                                    {"Failed", "TerminatingOrFailed"}));
  }
  const json::object& tmpl = ObjectOr(spec, "template");
  const json::value* selector = spec.if_contains("selector");
  if (selector == nullptr || selector->is_null()) {
    if (selector_required) out.push_back(FieldRequired(Child(path, "selector"), ""));
  } else {
    AppendCauses(out, ValidateLabelSelector(*selector, Child(path, "selector")));
    StatusOr<LabelSelector> parsed = LabelSelector::FromJson(selector, Child(path, "selector"));
    if (parsed.ok() && !parsed->Empty() && !parsed->Matches(ObjectAt(tmpl, "metadata.labels"))) {
      out.push_back(InvalidRepr(Child(path, "template.metadata.labels"),
                                GoStringMap(Find(tmpl, "metadata.labels")),
                                "`selector` does not match template `labels`"));
    }
  }
  ValidatePodTemplate(tmpl, Child(path, "template"), out);
  const json::value* restart = Find(tmpl, "spec.restartPolicy");
  std::string restart_policy = restart != nullptr && restart->is_string()
                                   ? std::string(restart->get_string())
                                   : std::string();
  if (restart_policy != "OnFailure" && restart_policy != "Never") {
    out.push_back(FieldNotSupported(Child(path, "template.spec.restartPolicy"),
                                    json::string(restart_policy), {"OnFailure", "Never"}));
  }
}

// ValidateGeneratedSelector: without manualSelector the selector is the
// one the server generated for this Job's uid.
void CheckGeneratedSelector(const json::object& obj, Causes& out) {
  const json::object& spec = ObjectOr(obj, "spec");
  if (ManualSelector(spec) || spec.if_contains("selector") == nullptr) return;
  std::string uid = StringAt(obj, "metadata.uid");
  const json::object* match = ObjectAt(spec, "selector.matchLabels");
  const json::value* want = match ? match->if_contains(batch::kControllerUidLabel) : nullptr;
  if (want == nullptr || !want->is_string() || want->get_string() != uid) {
    out.push_back(InvalidRepr("spec.selector", GoLabelSelector(spec.if_contains("selector")),
                              "`selector` not auto-generated"));
  }
}

// A suspended Job that never started may change its pod template (the
// scheduling directives Kubernetes allows then, and the rest too).
bool TemplateMutable(const json::object& obj, const json::object& old) {
  return GetBool(ObjectOr(obj, "spec"), "suspend").value_or(false) &&
         GetBool(ObjectOr(old, "spec"), "suspend").value_or(false) &&
         StringAt(old, "status.startTime").empty();
}

void CheckJobUpdate(const json::object& obj, const json::object& old, Causes& out) {
  const json::object& spec = ObjectOr(obj, "spec");
  const json::object& old_spec = ObjectOr(old, "spec");
  auto immutable = [&](std::string_view key, std::string repr) {
    if (!SemanticEqual(spec.if_contains(key), old_spec.if_contains(key))) {
      out.push_back(InvalidRepr(Child("spec", key), repr, "field is immutable"));
    }
  };
  immutable("selector", GoLabelSelector(spec.if_contains("selector")));
  immutable("completionMode", QuoteGo(StringAt(spec, "completionMode")));
  immutable("managedBy", QuoteGo(StringAt(spec, "managedBy")));
  // An Indexed Job is elastic: completions may change with parallelism.
  bool elastic = StringAt(spec, "completionMode") == batch::kIndexed &&
                 IntAt(spec, "completions").has_value() &&
                 IntAt(spec, "completions") == IntAt(spec, "parallelism");
  if (!elastic) {
    const json::value* c = spec.if_contains("completions");
    immutable("completions", c != nullptr && c->is_int64() ? std::to_string(c->get_int64())
                                                           : std::string("<nil>"));
  }
  if (!TemplateMutable(obj, old) &&
      !SemanticEqual(spec.if_contains("template"), old_spec.if_contains("template"))) {
    out.push_back(InvalidRepr("spec.template", "core.PodTemplateSpec{...}", "field is immutable"));
  }
}

Causes ValidateJob(const json::object& obj, const json::object* old) {
  Causes out;
  CheckJobSpec(ObjectOr(obj, "spec"), "spec", true, out);
  CheckGeneratedSelector(obj, out);
  if (old != nullptr) CheckJobUpdate(obj, *old, out);
  return out;
}

// printJob's STATUS cell.
json::value JobStatusCell(const json::object& obj, TimePoint) {
  if (ConditionTrue(obj, batch::kComplete)) return json::string(batch::kComplete);
  if (ConditionTrue(obj, batch::kFailed)) return json::string(batch::kFailed);
  if (!StringAt(obj, "metadata.deletionTimestamp").empty()) return json::string("Terminating");
  if (ConditionTrue(obj, batch::kSuspended)) return json::string(batch::kSuspended);
  if (ConditionTrue(obj, batch::kFailureTarget)) return json::string(batch::kFailureTarget);
  if (ConditionTrue(obj, batch::kSuccessCriteriaMet)) {
    return json::string(batch::kSuccessCriteriaMet);
  }
  return json::string("Running");
}

// printJob's COMPLETIONS cell: "3/5", "0/1 of 4" for a work queue.
json::value CompletionsCell(const json::object& obj, TimePoint) {
  std::string succeeded = std::to_string(IntOr(obj, "status.succeeded", 0));
  if (std::optional<int64_t> completions = IntAt(obj, "spec.completions")) {
    return json::string(succeeded + "/" + std::to_string(*completions));
  }
  int64_t parallelism = IntOr(obj, "spec.parallelism", 0);
  if (parallelism > 1) return json::string(succeeded + "/1 of " + std::to_string(parallelism));
  return json::string(succeeded + "/1");
}

// printJob's DURATION cell: from the start to completion, or to now.
json::value DurationCell(const json::object& obj, TimePoint now) {
  TimePoint start;
  if (!ParseRfc3339(StringAt(obj, "status.startTime"), &start)) return json::string("");
  TimePoint end = now;
  if (std::string done = StringAt(obj, "status.completionTime"); !done.empty()) {
    ParseRfc3339(done, &end);
  }
  return json::string(HumanDuration(end - start));
}

void DefaultCronJob(json::object& obj) {
  json::object& spec = EnsureObject(obj, "spec");
  SetIfEmpty(spec, "concurrencyPolicy", "Allow");
  SetIfUnset(spec, "suspend", false);
  SetIfUnset(spec, "successfulJobsHistoryLimit", 3);
  SetIfUnset(spec, "failedJobsHistoryLimit", 1);
  json::object& job_spec = EnsureObject(EnsureObject(spec, "jobTemplate"), "spec");
  json::object& tmpl = EnsureObject(job_spec, "template");
  EnsureObject(tmpl, "spec");
  DefaultPodTemplate(tmpl);
}

// ValidateCronJob: the name (a Job name with 11 characters of suffix), the
// schedule, the time zone, the policy, the limits and the Job template.
Causes ValidateCronJob(const json::object& obj, const json::object* old) {
  Causes out;
  if (StringAt(obj, "metadata.name").size() > 52) {
    out.push_back(FieldInvalid("metadata.name", json::string(StringAt(obj, "metadata.name")),
                               "must be no more than 52 characters"));
  }
  const json::object& spec = ObjectOr(obj, "spec");
  std::string schedule = StringAt(spec, "schedule");
  if (schedule.empty()) {
    out.push_back(FieldRequired("spec.schedule", ""));
  } else if (schedule.find("TZ") != std::string::npos) {
    out.push_back(FieldInvalid("spec.schedule", json::string(schedule),
                               "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"));
  } else if (StatusOr<cron::Schedule> parsed = cron::Schedule::Parse(schedule); !parsed.ok()) {
    out.push_back(FieldInvalid("spec.schedule", json::string(schedule), parsed.status().message()));
  }
  if (const json::value* zone = spec.if_contains("timeZone");
      zone != nullptr && zone->is_string()) {
    std::string name(zone->get_string());
    if (name == "Local") {
      out.push_back(FieldInvalid("spec.timeZone", json::string(name),
                                 "timeZone must be an explicit time zone as defined in "
                                 "https://www.iana.org/time-zones"));
    } else if (StatusOr<absl::TimeZone> tz = cron::LoadZone(name); !tz.ok()) {
      out.push_back(FieldInvalid("spec.timeZone", json::string(name), tz.status().message()));
    }
  }
  std::string policy = StringAt(spec, "concurrencyPolicy");
  if (policy != "Allow" && policy != "Forbid" && policy != "Replace") {
    out.push_back(FieldNotSupported("spec.concurrencyPolicy", json::string(policy),
                                    {"Allow", "Forbid", "Replace"}));
  }
  for (std::string_view key :
       {"startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"}) {
    CheckNonnegative(spec, key, "spec", out);
  }
  CheckJobSpec(ObjectOr(ObjectOr(spec, "jobTemplate"), "spec"), "spec.jobTemplate.spec", false,
               out);
  return out;
}

// printCronJob's LAST SCHEDULE cell: "<none>" before the first run.
json::value LastScheduleCell(const json::object& obj, TimePoint now) {
  const json::value* last = Find(obj, "status.lastScheduleTime");
  if (last == nullptr || !last->is_string()) return json::string("<none>");
  return json::string(TimestampSince(last, now));
}

}  // namespace

Resource JobResource() {
  Resource r = MakeResource("batch", "v1", "Job", "jobs", true, "io.k8s.api.batch.v1.Job");
  r.categories = {"all"};
  r.has_status = true;
  r.default_fn = DefaultJob;
  r.mutate_on_create = GenerateSelector;
  r.validate_fn = ValidateJob;
  r.columns = {NameColumn(),
               Column("Status", "string", "Status of the job.", 0, JobStatusCell),
               Column("Completions", "string", "The completed job pods and the desired ones.", 0,
                      CompletionsCell),
               Column("Duration", "string", "Time required to complete the job.", 0, DurationCell),
               AgeColumn(),
               ContainersColumn(),
               ImagesColumn(),
               Column("Selector", "string", "Selector that selects the job's pods.", 1,
                      [](const json::object& obj, TimePoint) -> json::value {
                        return json::string(FormatLabelSelector(Find(obj, "spec.selector")));
                      })};
  return r;
}

}  // namespace flotilla::api::kinds

namespace flotilla::api::kinds {

Resource CronJobResource() {
  Resource r =
      MakeResource("batch", "v1", "CronJob", "cronjobs", true, "io.k8s.api.batch.v1.CronJob");
  r.short_names = {"cj"};
  r.categories = {"all"};
  r.has_status = true;
  r.default_fn = DefaultCronJob;
  r.validate_fn = ValidateCronJob;
  r.columns = {
      NameColumn(),
      Column("Schedule", "string", "The schedule in Cron format.", 0, StringCell("spec.schedule")),
      Column("Timezone", "string", "The time zone of the schedule.", 0,
             [](const json::object& obj, TimePoint) -> json::value {
               std::string zone = StringAt(obj, "spec.timeZone");
               return json::string(zone.empty() ? "<none>" : zone);
             }),
      Column("Suspend", "boolean", "Whether the cron job is suspended.", 0,
             [](const json::object& obj, TimePoint) -> json::value {
               const json::value* v = Find(obj, "spec.suspend");
               return json::string(v != nullptr && v->is_bool() && v->get_bool() ? "True"
                                                                                 : "False");
             }),
      Column("Active", "integer", "The number of running jobs.", 0,
             [](const json::object& obj, TimePoint) -> json::value {
               const json::array* active = ArrayAt(obj, "status.active");
               return static_cast<int64_t>(active ? active->size() : 0);
             }),
      Column("Last Schedule", "string", "When the job was last scheduled.", 0, LastScheduleCell),
      AgeColumn(),
      ContainersColumn("spec.jobTemplate.spec.template.spec"),
      ImagesColumn("spec.jobTemplate.spec.template.spec"),
      Column("Selector", "string", "Selector of the jobs' pods.", 1,
             [](const json::object& obj, TimePoint) -> json::value {
               return json::string(
                   FormatLabelSelector(Find(obj, "spec.jobTemplate.spec.selector")));
             })};
  return r;
}

}  // namespace flotilla::api::kinds
