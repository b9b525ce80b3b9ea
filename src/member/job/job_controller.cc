// The member's Job controller (job_controller.h).
#include "member/job/job_controller.h"

#include <algorithm>
#include <map>
#include <set>

#include "api/batch.h"
#include "api/owner.h"
#include "api/patch.h"
#include "api/views.h"
#include "member/object_util.h"
#include "member/replicaset/controller_ref.h"
#include "member/replicaset/pod_util.h"

namespace flotilla::member {
namespace {

using api::ConditionTrue;
using api::SetCondition;

constexpr std::string_view kApiVersion = "batch/v1";
constexpr std::string_view kKind = "Job";

std::string Phase(const json::object& pod) { return StringAt(pod, "status.phase"); }

const json::object& SpecOf(const json::object& job) {
  static const json::object kEmpty;
  const json::value* spec = job.if_contains("spec");
  return spec != nullptr && spec->is_object() ? spec->get_object() : kEmpty;
}

json::array& EnsureArray(json::object& o, std::string_view key) {
  json::value& v = o[key];
  if (!v.is_array()) v = json::array();
  return v.get_array();
}

// The shorter of two delays, zero being none.
Duration Sooner(Duration a, Duration b) {
  if (a == Duration::zero()) return b;
  if (b == Duration::zero()) return a;
  return std::min(a, b);
}

std::optional<int64_t> IndexOf(const json::object& pod) {
  const json::value* v = Find(pod, "metadata.annotations");
  if (v == nullptr || !v->is_object()) return std::nullopt;
  const json::value* index = v->get_object().if_contains(api::batch::kCompletionIndexAnnotation);
  if (index == nullptr || !index->is_string()) return std::nullopt;
  char* end = nullptr;
  std::string text(index->get_string());
  long long n = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || n < 0) return std::nullopt;
  return n;
}

// "0-2,5,7-8", as the Job's completedIndexes.
std::string FormatIndexes(const std::set<int64_t>& indexes) {
  std::string out;
  for (auto it = indexes.begin(); it != indexes.end();) {
    int64_t first = *it;
    int64_t last = first;
    for (++it; it != indexes.end() && *it == last + 1; ++it) last = *it;
    if (!out.empty()) out += ",";
    out += std::to_string(first);
    if (last > first) out += (last == first + 1 ? "," : "-") + std::to_string(last);
  }
  return out;
}

// The indexes a previous status recorded as completed.
std::set<int64_t> ParseIndexes(std::string_view text) {
  std::set<int64_t> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    std::string part(text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos));
    size_t dash = part.find('-');
    int64_t first = std::atoll(part.c_str());
    int64_t last = dash == std::string::npos ? first : std::atoll(part.c_str() + dash + 1);
    for (int64_t i = first; i <= last && i - first < 1000000; ++i) out.insert(i);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

json::object NewCondition(std::string_view type, std::string_view reason,
                          const std::string& message, TimePoint now, bool status = true) {
  return api::batch::JobCondition(type, reason, message, FormatRfc3339(now), status);
}

int64_t Restarts(const json::object& pod) {
  int64_t n = 0;
  for (const json::object* cs : ObjectsAt(pod, "status.containerStatuses")) {
    n += IntAt(*cs, "restartCount", 0);
  }
  return n;
}

// When the pod's last container finished; `fallback` when unknown.
TimePoint FinishedAt(const json::object& pod, TimePoint fallback) {
  TimePoint latest{};
  for (const json::object* cs : ObjectsAt(pod, "status.containerStatuses")) {
    TimePoint t;
    if (ParseRfc3339(StringAt(*cs, "state.terminated.finishedAt"), &t))
      latest = std::max(latest, t);
  }
  return latest == TimePoint{} ? fallback : latest;
}

}  // namespace

JobController::JobController(ControllerContext& ctx)
    : client_(ctx.client),
      clock_(ctx.clock),
      events_(ctx.client, ctx.clock, runtime::EventSource{kControllerName, ""}),
      jobs_(ctx.informers.For(client::kJobs)),
      pods_(ctx.informers.For(kPods)),
      expectations_(ctx.clock) {
  controller_ = &ctx.manager.AddController(
      kControllerName, 2, [this](const std::string& key) { return Reconcile(key); });
  runtime::EventHandler job_handler = controller_->EnqueueHandler();
  job_handler.on_delete = [this](const runtime::ObjectPtr& job) {
    std::string key = runtime::ObjectKey(*job);
    expectations_.Forget(key);
  };
  jobs_.AddEventHandler(std::move(job_handler));
  pods_.AddEventHandler(OwnedPodHandler(expectations_, controller_->queue(),
                                        [this](const json::object& pod) { return OwnerKey(pod); }));
}

std::string JobController::OwnerKey(const json::object& pod) const {
  return ControllerKey(pod, kKind);
}

std::vector<runtime::ObjectPtr> JobController::PodsOf(const json::object& job) const {
  return ControlledBy(pods_.lister(), MetaAt(job, "namespace"), MetaAt(job, "uid"));
}

Status JobController::CreatePod(const std::string& key, const json::object& job,
                                std::optional<int64_t> index) {
  std::string name = MetaAt(job, "name");
  json::object meta = {
      {"generateName", name + "-" + (index ? std::to_string(*index) + "-" : "")},
      {"namespace", MetaAt(job, "namespace")},
      {"ownerReferences", json::array{api::NewControllerRef(job, kApiVersion, kKind)}}};
  for (const char* field : {"labels", "annotations", "finalizers"}) {
    const json::value* v = Find(job, std::string("spec.template.metadata.") + field);
    if (v != nullptr && v->is_object()) meta[field] = *v;
    if (v != nullptr && v->is_array()) meta[field] = *v;
  }
  const json::value* spec_value = Find(job, "spec.template.spec");
  json::object spec =
      spec_value != nullptr && spec_value->is_object() ? spec_value->get_object() : json::object();
  if (index) {
    std::string i = std::to_string(*index);
    EnsureObject(meta, "annotations")[api::batch::kCompletionIndexAnnotation] = i;
    EnsureObject(meta, "labels")[api::batch::kCompletionIndexAnnotation] = i;
    if (!spec.contains("hostname")) spec["hostname"] = name + "-" + i;
    for (std::string_view list : {"containers", "initContainers"}) {
      json::value* containers = spec.if_contains(list);
      if (containers == nullptr || !containers->is_array()) continue;
      for (json::value& c : containers->get_array()) {
        if (!c.is_object()) continue;
        EnsureArray(c.get_object(), "env")
            .push_back(json::object{
                {"name", "JOB_COMPLETION_INDEX"},
                {"valueFrom",
                 json::object{
                     {"fieldRef",
                      json::object{
                          {"apiVersion", "v1"},
                          {"fieldPath", "metadata.labels['" +
                                            std::string(api::batch::kCompletionIndexAnnotation) +
                                            "']"}}}}}});
      }
    }
  }
  json::object pod = {
      {"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", std::move(meta)}, {"spec", spec}};
  auto created = client_.Create(kPods, MetaAt(job, "namespace"), pod);
  json::object job_ref = WithKind(job, kApiVersion, kKind);
  if (!created.ok()) {
    expectations_.CreationObserved(key);
    events_.Event(job_ref, runtime::kEventTypeWarning, "FailedCreate",
                  "Error creating: " + created.status().message());
    return created.status();
  }
  events_.Event(job_ref, runtime::kEventTypeNormal, "SuccessfulCreate",
                "Created pod: " + MetaAt(*created, "name"));
  return Status::Ok();
}

Status JobController::DeletePods(const std::string& key, const json::object& job,
                                 const std::vector<runtime::ObjectPtr>& pods) {
  if (pods.empty()) return Status::Ok();
  std::vector<std::string> keys;
  for (const runtime::ObjectPtr& p : pods) keys.push_back(runtime::ObjectKey(*p));
  expectations_.ExpectDeletions(key, keys);
  json::object job_ref = WithKind(job, kApiVersion, kKind);
  for (const runtime::ObjectPtr& p : pods) {
    Status s = client_.Delete(kPods, MetaAt(*p, "namespace"), MetaAt(*p, "name"));
    if (!s.ok() && !s.Is(Reason::kNotFound)) {
      expectations_.DeletionObserved(key, runtime::ObjectKey(*p));
      return s;
    }
    events_.Event(job_ref, runtime::kEventTypeNormal, "SuccessfulDelete",
                  "Deleted pod: " + MetaAt(*p, "name"));
  }
  return Status::Ok();
}

// ttlSecondsAfterFinished: the Job and its pods go that long after it
// finished.
StatusOr<runtime::Result> JobController::Expire(const json::object& job) {
  std::optional<int64_t> ttl = api::batch::OptionalIntAt(job, "spec.ttlSecondsAfterFinished");
  if (!ttl) return runtime::Result{};
  TimePoint finished = clock_.Now();
  if (!ParseRfc3339(StringAt(job, "status.completionTime"), &finished)) {
    for (const json::object* c : ObjectsAt(job, "status.conditions")) {
      if (StringAt(*c, "type") == api::batch::kFailed) {
        ParseRfc3339(StringAt(*c, "lastTransitionTime"), &finished);
      }
    }
  }
  TimePoint at = finished + std::chrono::seconds(*ttl);
  if (clock_.Now() < at) return runtime::Result{.requeue_after = at - clock_.Now()};
  client::DeleteOptions opts;
  opts.propagation_policy = "Background";
  opts.precondition_uid = MetaAt(job, "uid");
  Status s = client_.Delete(client::kJobs, MetaAt(job, "namespace"), MetaAt(job, "name"), opts);
  if (!s.ok() && !s.Is(Reason::kNotFound) && !s.Is(Reason::kConflict)) return s;
  return runtime::Result{};
}

// After the write that finished the Job: when it expires.
StatusOr<runtime::Result> JobController::Finish(StatusOr<runtime::Result> written,
                                                const json::object& job,
                                                const json::object& status) {
  if (!written.ok()) return written;
  json::object finished = job;
  finished["status"] = status;
  return Expire(finished);
}

StatusOr<runtime::Result> JobController::Reconcile(const std::string& key) {
  // Not a structured binding: the status writer's lambda captures it.
  const std::pair<std::string, std::string> split = SplitKey(key);
  const std::string& ns = split.first;
  runtime::ObjectPtr cached = jobs_.lister().Get(ns, split.second);
  if (cached == nullptr) return runtime::Result{};
  const json::object& job = *cached;
  if (api::IsBeingDeleted(job)) return runtime::Result{};
  const TimePoint now = clock_.Now();
  // Before the pods are read (kube's order): a creation observed after the
  // read would make a stale read look complete, and pods be made twice.
  const bool satisfied = expectations_.Satisfied(key);
  std::vector<runtime::ObjectPtr> pods = PodsOf(job);

  std::vector<runtime::ObjectPtr> active;
  int64_t ready = 0, terminating = 0, succeeded_now = 0, failed_now = 0, restarts = 0;
  std::set<int64_t> completed = ParseIndexes(StringAt(job, "status.completedIndexes"));
  std::set<int64_t> running;
  TimePoint last_failure{};
  for (const runtime::ObjectPtr& p : pods) {
    std::string phase = Phase(*p);
    if (phase == "Succeeded") {
      ++succeeded_now;
      if (std::optional<int64_t> i = IndexOf(*p)) completed.insert(*i);
    } else if (phase == "Failed") {
      ++failed_now;
      last_failure = std::max(last_failure, FinishedAt(*p, now));
    } else if (api::IsBeingDeleted(*p)) {
      ++terminating;
    } else {
      active.push_back(p);
      if (IsPodReady(*p)) ++ready;
      restarts += Restarts(*p);
      if (std::optional<int64_t> i = IndexOf(*p)) running.insert(*i);
    }
  }
  const json::object& spec = SpecOf(job);
  const bool indexed = StringAt(spec, "completionMode") == api::batch::kIndexed;
  const std::optional<int64_t> completions = api::batch::OptionalIntAt(spec, "completions");
  const int64_t parallelism = IntAt(spec, "parallelism", 1);
  const int64_t backoff_limit = IntAt(spec, "backoffLimit", 6);
  // Finished pods are counted once, and stay counted when they are deleted.
  int64_t succeeded = std::max(IntAt(job, "status.succeeded", 0),
                               indexed ? static_cast<int64_t>(completed.size()) : succeeded_now);
  int64_t failed = std::max(IntAt(job, "status.failed", 0), failed_now);

  const json::value* old_status = job.if_contains("status");
  json::object status =
      old_status != nullptr && old_status->is_object() ? old_status->get_object() : json::object();
  json::object job_ref = WithKind(job, kApiVersion, kKind);
  runtime::Result result;
  auto write = [&]() -> StatusOr<runtime::Result> {
    // active, succeeded and failed are omitted when zero (omitempty);
    // ready and terminating are pointers, always written.
    auto count = [&](std::string_view field, int64_t n) {
      if (n != 0) {
        status[field] = n;
      } else {
        status.erase(field);
      }
    };
    count("active", static_cast<int64_t>(active.size()));
    status["ready"] = ready;
    status["terminating"] = terminating;
    count("succeeded", succeeded);
    count("failed", failed);
    if (indexed) status["completedIndexes"] = FormatIndexes(completed);
    status["uncountedTerminatedPods"] = json::object();
    if (old_status != nullptr && *old_status == json::value(status)) return result;
    // A merge patch: the status is this controller's alone, and a patch does
    // not conflict with a write the cache has not shown yet.
    auto written = client_.Patch(client::kJobs, ns, split.second, client::PatchType::kMerge,
                                 api::StatusMergePatch(old_status, status), "status");
    if (!written.ok()) {
      if (written.status().Is(Reason::kNotFound)) return runtime::Result{};
      return written.status();
    }
    return result;
  };

  if (api::batch::Finished(job)) {
    FLOTILLA_RETURN_IF_ERROR(DeletePods(key, job, active));
    active.clear();
    FLOTILLA_ASSIGN_OR_RETURN(runtime::Result wrote, write());
    (void)wrote;
    return Expire(job);
  }
  if (!satisfied) return write();

  // Suspended: nothing runs.
  if (GetBool(spec, "suspend").value_or(false)) {
    FLOTILLA_RETURN_IF_ERROR(DeletePods(key, job, active));
    if (!ConditionTrue(job, api::batch::kSuspended)) {
      SetCondition(status,
                   NewCondition(api::batch::kSuspended, "JobSuspended", "Job suspended", now));
      events_.Event(job_ref, runtime::kEventTypeNormal, "Suspended", "Job suspended");
    }
    active.clear();
    ready = 0;
    return write();
  }
  if (ConditionTrue(job, api::batch::kSuspended)) {
    SetCondition(status,
                 NewCondition(api::batch::kSuspended, "JobResumed", "Job resumed", now, false));
    status["startTime"] = FormatRfc3339(now);
    events_.Event(job_ref, runtime::kEventTypeNormal, "Resumed", "Job resumed");
  }
  if (StringAt(status, "startTime").empty()) status["startTime"] = FormatRfc3339(now);

  // Failure: the back-off limit or the deadline.
  std::string fail_reason, fail_message;
  const bool on_failure = StringAt(spec, "template.spec.restartPolicy") == "OnFailure";
  if (failed_now > 0 && failed > backoff_limit) {
    fail_reason = "BackoffLimitExceeded";
    fail_message = "Job has reached the specified backoff limit";
  } else if (on_failure && (backoff_limit == 0 ? restarts > 0 : restarts >= backoff_limit)) {
    fail_reason = "BackoffLimitExceeded";
    fail_message = "Job has reached the specified backoff limit";
  }
  TimePoint started;
  ParseRfc3339(StringAt(status, "startTime"), &started);
  if (std::optional<int64_t> deadline = api::batch::OptionalIntAt(spec, "activeDeadlineSeconds")) {
    TimePoint at = started + std::chrono::seconds(*deadline);
    if (fail_reason.empty() && now >= at) {
      fail_reason = "DeadlineExceeded";
      fail_message = "Job was active longer than specified deadline";
    } else if (now < at) {
      result.requeue_after = at - now;
    }
  }
  if (ConditionTrue(job, api::batch::kFailureTarget) && fail_reason.empty()) {
    for (const json::object* c : ObjectsAt(job, "status.conditions")) {
      if (StringAt(*c, "type") == api::batch::kFailureTarget) {
        fail_reason = StringAt(*c, "reason");
        fail_message = StringAt(*c, "message");
      }
    }
  }
  if (!fail_reason.empty()) {
    FLOTILLA_RETURN_IF_ERROR(DeletePods(key, job, active));
    if (!ConditionTrue(job, api::batch::kFailureTarget)) {
      events_.Event(job_ref, runtime::kEventTypeWarning, fail_reason, fail_message);
    }
    SetCondition(status, NewCondition(api::batch::kFailureTarget, fail_reason, fail_message, now));
    const bool failed_now_done = active.empty() && terminating == 0;
    if (failed_now_done) {
      SetCondition(status, NewCondition(api::batch::kFailed, fail_reason, fail_message, now));
    }
    active.clear();
    ready = 0;
    result.requeue_after = Duration::zero();
    return failed_now_done ? Finish(write(), job, status) : write();
  }

  // Success.
  bool done = indexed       ? completions && static_cast<int64_t>(completed.size()) >= *completions
              : completions ? succeeded >= *completions
                            : succeeded > 0 && active.empty();
  if (done || ConditionTrue(job, api::batch::kSuccessCriteriaMet)) {
    FLOTILLA_RETURN_IF_ERROR(DeletePods(key, job, active));
    if (!ConditionTrue(job, api::batch::kSuccessCriteriaMet)) {
      SetCondition(status, NewCondition(api::batch::kSuccessCriteriaMet, "CompletionsReached",
                                        "Reached expected number of succeeded pods", now));
    }
    const bool complete = active.empty() && terminating == 0;
    if (complete) {
      SetCondition(status, NewCondition(api::batch::kComplete, "CompletionsReached",
                                        "Reached expected number of succeeded pods", now));
      status["completionTime"] = FormatRfc3339(now);
      events_.Event(job_ref, runtime::kEventTypeNormal, "Completed", "Job completed");
    }
    active.clear();
    ready = 0;
    result.requeue_after = Duration::zero();
    return complete ? Finish(write(), job, status) : write();
  }

  // Start what is missing, after the back-off of the failures so far.
  if (failed_now > 0 && !on_failure) {
    Duration backoff = kBackoffBase;
    for (int64_t i = 1; i < failed && backoff < kBackoffMax; ++i) backoff *= 2;
    backoff = std::min(backoff, kBackoffMax);
    if (now < last_failure + backoff) {
      Duration wait = last_failure + backoff - now;
      result.requeue_after = Sooner(result.requeue_after, wait);
      return write();
    }
  }
  int64_t room = parallelism - static_cast<int64_t>(active.size()) - terminating;
  std::vector<std::optional<int64_t>> to_start;
  if (indexed) {
    for (int64_t i = 0; completions && i < *completions && room > 0; ++i) {
      if (completed.contains(i) || running.contains(i)) continue;
      to_start.push_back(i);
      --room;
    }
  } else {
    int64_t wanted = completions ? *completions - succeeded - static_cast<int64_t>(active.size())
                                 : (succeeded > 0 ? 0 : room);
    for (int64_t i = 0; i < std::min(room, wanted); ++i) to_start.push_back(std::nullopt);
  }
  if (!to_start.empty()) {
    expectations_.ExpectCreations(key, static_cast<int>(to_start.size()));
    for (size_t i = 0; i < to_start.size(); ++i) {
      Status s = CreatePod(key, job, to_start[i]);
      if (!s.ok()) {
        for (size_t j = i + 1; j < to_start.size(); ++j) expectations_.CreationObserved(key);
        FLOTILLA_ASSIGN_OR_RETURN(runtime::Result wrote, write());
        (void)wrote;
        return s;
      }
    }
  }
  return write();
}

}  // namespace flotilla::member
