// The federated Job controller (job_controller.h).
#include "federation/job/job_controller.h"

#include <algorithm>

#include "api/annotations.h"
#include "api/batch.h"
#include "api/federated.h"
#include "api/views.h"
#include "client/resources.h"
#include "federation/common/federated_kind.h"
#include "federation/common/member_copy.h"
#include "federation/common/object_writes.h"
#include "federation/common/policies.h"
#include "federation/job/shares.h"

namespace flotilla::federation::job {

struct JobController::State {
  Ledger ledger;
  // Every cluster runs the whole Job (a Duplicated policy).
  bool duplicated = false;
};

namespace {

using api::ConditionTrue;

const json::object& SpecOf(const json::object& job) {
  static const json::object kEmpty;
  const json::value* spec = job.if_contains("spec");
  return spec != nullptr && spec->is_object() ? spec->get_object() : kEmpty;
}

bool Indexed(const json::object& job) {
  return StringAt(job, "spec.completionMode") == api::batch::kIndexed;
}

bool Suspended(const json::object& job) {
  const json::value* v = Find(job, "spec.suspend");
  return v != nullptr && v->is_bool() && v->get_bool();
}

bool ManualSelector(const json::object& job) {
  const json::value* v = Find(job, "spec.manualSelector");
  return v != nullptr && v->is_bool() && v->get_bool();
}

// The copy a member runs of `job` for `share`: the federated spec with the
// share's completions and parallelism, without the selector and the
// controller-uid labels the federation generated (the member generates its
// own for its copy's uid).
json::object DesiredCopy(const json::object& job, const Share& share, bool suspend) {
  json::object spec = SpecOf(job);
  if (!ManualSelector(job)) {
    spec.erase("selector");
    json::value* labels = nullptr;
    if (json::value* t = spec.if_contains("template"); t != nullptr && t->is_object()) {
      if (json::value* m = t->get_object().if_contains("metadata");
          m != nullptr && m->is_object()) {
        labels = m->get_object().if_contains("labels");
      }
    }
    if (labels != nullptr && labels->is_object()) {
      labels->get_object().erase(api::batch::kControllerUidLabel);
      labels->get_object().erase(api::batch::kLegacyControllerUidLabel);
    }
  }
  if (share.completions) {
    spec["completions"] = *share.completions;
  } else {
    spec.erase("completions");
  }
  spec["parallelism"] = share.parallelism;
  spec["suspend"] = suspend;
  return json::object{{"apiVersion", client::kJobs.ApiVersion()},
                      {"kind", "Job"},
                      {"metadata", MemberMetadata(job)},
                      {"spec", std::move(spec)}};
}

// `have` holds every field of `want` (absent and {} the same).
bool Holds(const json::value* have, const json::value* want) {
  static const json::value kEmpty = json::object();
  return JsonContains(have != nullptr ? *have : kEmpty, want != nullptr ? *want : kEmpty);
}

std::string Uid(const json::object& obj) { return std::string(api::ObjectView(obj).uid()); }

std::string Join(const std::map<std::string, int64_t>& counts) {
  std::string out;
  for (const auto& [cluster, n] : counts) {
    out += (out.empty() ? "" : ", ") + cluster + " (" + std::to_string(n) + ")";
  }
  return out;
}

// The copy's Failed condition's reason and message; nullopt when it has
// not failed.
std::optional<std::pair<std::string, std::string>> FailureOf(const json::object& copy) {
  const json::object* c = api::ConditionOf(copy, api::batch::kFailed);
  if (c == nullptr || GetString(*c, "status") != "True") return std::nullopt;
  return std::pair{std::string(GetString(*c, "reason").value_or("")),
                   std::string(GetString(*c, "message").value_or(""))};
}

// The copies' clusters with room for one pod of `pod_template` (their
// Cluster's resourceSummary; a cluster without one counts as roomy), and
// those whose copy runs there already; every one when none has room.
std::vector<std::string> WithRoom(const std::vector<Copy>& copies,
                                  const json::object* pod_template) {
  std::vector<std::string> out;
  for (const Copy& c : copies) {
    std::optional<int64_t> room = c.target.cluster_object == nullptr
                                      ? std::nullopt
                                      : AvailableReplicas(*c.target.cluster_object, pod_template);
    if (!room || *room > 0 || c.Managed()) out.push_back(c.cluster());
  }
  if (out.empty()) {
    for (const Copy& c : copies) out.push_back(c.cluster());
  }
  return out;
}

}  // namespace

JobController::JobController(FederationContext& ctx, const WorkloadOptions& options) : ctx_(ctx) {
  reconciler_.emplace(ctx, *this,
                      ReconcilerOptions{.name = kName,
                                        .workers = 2,
                                        .member_change_delay = options.member_change_delay,
                                        .sync_grace = options.sync_grace});
}

const client::ResourceRef& JobController::resource() const { return client::kJobs; }

std::string_view JobController::PreferencesAnnotation() const {
  return api::kReplicaPreferencesAnnotation;
}

std::optional<Strategy::Demand> JobController::DemandOf(const json::object& obj) const {
  const json::value* tmpl = Find(obj, "spec.template");
  return Demand{
      .replicas = api::batch::OptionalIntAt(obj, "spec.parallelism").value_or(1),
      .pod_template = tmpl != nullptr && tmpl->is_object() ? &tmpl->get_object() : nullptr};
}

bool JobController::Lost(const Check& check, const std::string& cluster) const {
  for (const std::string& c : check.not_admitted) {
    if (c == cluster) return true;
  }
  runtime::ObjectPtr obj = ctx_.cluster_objects().cache().Get(cluster);
  if (obj == nullptr) return true;  // unjoined
  if (ctx_.clusters().Get(cluster) != nullptr) return false;
  // Not ready; unless its stored status says Ready and this process has not
  // probed it yet (a restarted control plane).
  return ctx_.clusters().Known(cluster) || !api::ClusterView(*obj).ready();
}

Status JobController::Plan(Check& check) {
  auto state = std::make_shared<State>();
  check.state = state;
  Ledger& ledger = state->ledger;
  ledger = ParseLedger(check.obj());
  const json::object& job = check.obj();
  const bool indexed = Indexed(job);
  const std::optional<int64_t> completions = api::batch::OptionalIntAt(job, "spec.completions");
  const int64_t parallelism = api::batch::OptionalIntAt(job, "spec.parallelism").value_or(1);

  // How the policy or the annotation divides; a Duplicated policy runs the
  // whole Job everywhere.
  std::optional<planner::Preferences> prefs;
  if (check.policy) {
    prefs = reconciler_->PolicyDivision(check, completions.value_or(parallelism),
                                        DemandOf(job)->pod_template);
    state->duplicated = !prefs.has_value();
  } else {
    StatusOr<planner::Preferences> p = PreferencesOf(job, api::kReplicaPreferencesAnnotation);
    if (!p.ok()) {
      reconciler_->events().Event(job, runtime::kEventTypeWarning, "InvalidPreferences",
                                  federation::Describe(p.status()));
      return Status::Ok();
    }
    prefs = *p;
  }
  auto plan = [&](int64_t n, const std::vector<std::string>& clusters) {
    return planner::Plan(n, clusters, {}, {}, check.key, *prefs).plan;
  };

  // Copies made before a ledger was written (a restart in between) keep
  // their shares.
  if (ledger.empty()) {
    for (const Copy& c : check.copies) {
      if (!c.Managed()) continue;
      Share s;
      s.completions = api::batch::OptionalIntAt(*c.Current(), "spec.completions");
      s.parallelism = api::batch::OptionalIntAt(*c.Current(), "spec.parallelism").value_or(1);
      ledger[c.cluster()] = s;
    }
  }
  // What the copies report.
  for (const Copy& c : check.copies) {
    auto it = ledger.find(c.cluster());
    if (!c.Managed() || it == ledger.end()) continue;
    Share& s = it->second;
    const json::object& copy = *c.Current();
    if (s.lost || (!s.retired.empty() && Uid(copy) == s.retired)) continue;
    s.succeeded = api::batch::OptionalIntAt(copy, "status.succeeded").value_or(0);
    s.failed = api::batch::OptionalIntAt(copy, "status.failed").value_or(0);
    if (FailureOf(copy)) s.failed_job = true;
  }
  bool failed = false;
  for (const auto& [cluster, s] : ledger) failed = failed || s.failed_job;

  // The first division, over the admitted ready clusters that have room
  // for one of its pods (all of them when none has).
  std::vector<std::string> ready;
  for (const Copy& c : check.copies) ready.push_back(c.cluster());
  const std::vector<std::string> roomy = WithRoom(check.copies, DemandOf(job)->pod_template);
  if (ledger.empty() && !ready.empty()) {
    if (state->duplicated) {
      for (const std::string& c : ready) {
        ledger[c] = Share{.completions = completions, .parallelism = parallelism};
      }
    } else if (indexed) {
      for (const auto& [cluster, n] : plan(1, roomy)) {
        if (n > 0) ledger[cluster] = Share{.completions = completions, .parallelism = parallelism};
      }
    } else {
      ledger = Divide(completions, parallelism, plan(completions.value_or(parallelism), roomy));
    }
  }

  // A lost cluster's work goes to the others.
  if (!failed && !state->duplicated) {
    std::vector<std::string> takers;
    for (const std::string& c : roomy) {
      auto it = ledger.find(c);
      if (it == ledger.end() || !it->second.lost) takers.push_back(c);
    }
    std::vector<std::string> lost;
    for (const auto& [cluster, s] : ledger) {
      if (!s.lost && !s.failed_job && (!s.completions || *s.completions > 0 || s.queued > 0) &&
          std::find(ready.begin(), ready.end(), cluster) == ready.end() && Lost(check, cluster)) {
        lost.push_back(cluster);
      }
    }
    if (!lost.empty() && !takers.empty()) {
      int64_t owed = 0;
      bool whole = false;
      for (const std::string& cluster : lost) {
        Share& s = ledger[cluster];
        if (indexed) {
          // An Indexed Job starts again, whole, elsewhere.
          whole = true;
          s = Share{.completions = 0, .lost = true};
        } else if (!s.completions) {
          // A work queue's pods run elsewhere; what succeeded here counts.
          owed += s.parallelism;
          s = Share{.completions = 0,
                    .done = s.done + s.succeeded,
                    .failed_done = s.failed_done + s.failed,
                    .lost = true};
        } else {
          owed += CloseLost(s);
        }
      }
      std::map<std::string, int64_t> moved;
      if (whole) {
        for (const auto& [cluster, n] : plan(1, takers)) {
          if (n <= 0) continue;
          ledger[cluster] = Share{.completions = completions, .parallelism = parallelism};
          moved[cluster] = completions.value_or(1);
        }
      } else if (owed > 0) {
        for (const auto& [cluster, n] : plan(owed, takers)) {
          if (n <= 0) continue;
          Share& s = ledger[cluster];
          if (completions) {
            s.queued += n;
            if (s.parallelism == 0) {
              s.parallelism =
                  std::clamp<int64_t>((parallelism * n + *completions - 1) / *completions, 1, n);
            }
          } else {
            s.parallelism += n;  // a work queue's copy runs more pods at once
          }
          moved[cluster] = n;
        }
      }
      std::string from;
      for (const std::string& c : lost) from += (from.empty() ? "" : ", ") + c;
      reconciler_->events().Event(
          job, runtime::kEventTypeNormal, "JobWorkMoved",
          "the unfinished work of lost cluster(s) " + from + " moved to " + Join(moved));
    }
  }

  // Each admitted ready cluster's copy.
  const bool suspend = Suspended(job) || failed;
  for (Copy& c : check.copies) {
    auto it = ledger.find(c.cluster());
    if (it == ledger.end() || it->second.lost) {
      c.desired.reset();
      c.remove = true;
      continue;
    }
    Share& s = it->second;
    const json::object* current = c.Managed() ? c.Current() : nullptr;
    if (current != nullptr && !s.retired.empty() && Uid(*current) == s.retired) {
      c.remove = true;  // a completed copy, replaced once it is gone
      continue;
    }
    if (current != nullptr && s.queued > 0 && ConditionTrue(*current, api::batch::kComplete)) {
      s.done += s.succeeded;
      s.failed_done += s.failed;
      s.succeeded = 0;
      s.failed = 0;
      s.completions = 0;
      s.retired = Uid(*current);
      c.remove = true;
      continue;
    }
    if (current == nullptr && s.queued > 0) {
      s.completions = s.completions.value_or(0) + s.queued;
      s.queued = 0;
      s.retired.clear();
    }
    if (s.completions && *s.completions == 0 && current == nullptr) {
      c.desired.reset();  // nothing more runs here
      continue;
    }
    c.desired = DesiredCopy(job, s, suspend);
    c.create = !failed;
  }
  // The ledger is stored before anything is written to a member: a copy
  // deleted or created for a share the federation then forgot would run
  // work twice or never.
  FLOTILLA_ASSIGN_OR_RETURN(std::optional<json::object> stored,
                            SetAnnotation(ctx_.fed(), client::kJobs, check.obj(), kSharesAnnotation,
                                          SerializeLedger(ledger)));
  if (stored) check.SetObj(Typed(client::kJobs, "Job", *std::move(stored)));
  return Status::Ok();
}

bool JobController::UpToDate(const Copy& c) const {
  const json::object& want = *c.desired;
  const json::object& have = *c.existing;
  return Holds(Find(have, "metadata.labels"), Find(want, "metadata.labels")) &&
         Holds(Find(have, "metadata.annotations"), Find(want, "metadata.annotations")) &&
         // A member that predates spec.suspend drops it: absent is false.
         Suspended(have) == Suspended(want) &&
         api::batch::OptionalIntAt(have, "spec.parallelism") ==
             api::batch::OptionalIntAt(want, "spec.parallelism");
}

// Of a copy, only what a member lets change: metadata, suspend and
// parallelism (completions and the template are immutable; a copy's share
// never changes).
json::object JobController::Updated(const Copy& c) const {
  json::object updated = *c.existing;
  json::object& meta = EnsureObject(updated, "metadata");
  for (const char* field : {"labels", "annotations"}) {
    if (const json::value* v = Find(*c.desired, std::string("metadata.") + field)) meta[field] = *v;
  }
  json::object& spec = EnsureObject(updated, "spec");
  spec["suspend"] = *Find(*c.desired, "spec.suspend");
  spec["parallelism"] = *Find(*c.desired, "spec.parallelism");
  return updated;
}

std::string JobController::Detail(const Copy& c) const {
  std::optional<int64_t> n = api::batch::OptionalIntAt(*c.desired, "spec.completions");
  return n ? "with " + std::to_string(*n) + " completions"
           : "with parallelism " +
                 std::to_string(
                     api::batch::OptionalIntAt(*c.desired, "spec.parallelism").value_or(1));
}

StatusOr<runtime::Result> JobController::Finish(Check& check) {
  auto* state_ptr = std::any_cast<std::shared_ptr<State>>(&check.state);
  if (state_ptr == nullptr) return runtime::Result{};
  Ledger& ledger = (*state_ptr)->ledger;
  const json::object& job = check.obj();
  const std::string now = FormatRfc3339(check.now);
  int64_t active = 0, ready = 0, terminating = 0;
  std::string start, finish, completed_indexes;
  bool all_complete = !ledger.empty();
  std::optional<std::pair<std::string, std::string>> failure;
  std::string failed_in;
  std::vector<std::string> seen;
  for (const Copy& c : check.copies) {
    auto it = ledger.find(c.cluster());
    if (!c.Managed() || it == ledger.end() || it->second.lost) continue;
    const json::object& copy = *c.Current();
    if (!it->second.retired.empty() && Uid(copy) == it->second.retired) continue;
    seen.push_back(c.cluster());
    active += api::batch::OptionalIntAt(copy, "status.active").value_or(0);
    ready += api::batch::OptionalIntAt(copy, "status.ready").value_or(0);
    terminating += api::batch::OptionalIntAt(copy, "status.terminating").value_or(0);
    std::string started = StringAt(copy, "status.startTime");
    if (!started.empty() && (start.empty() || started < start)) start = started;
    if (ConditionTrue(copy, api::batch::kComplete)) {
      std::string done = StringAt(copy, "status.completionTime");
      if (done > finish) finish = done;
      if (Indexed(job)) completed_indexes = StringAt(copy, "status.completedIndexes");
    } else if (!it->second.completions || *it->second.completions > 0) {
      all_complete = false;
    }
    if (auto f = FailureOf(copy); f && !failure) {
      failure = f;
      failed_in = c.cluster();
    }
  }
  for (const auto& [cluster, s] : ledger) {
    if (s.lost || std::find(seen.begin(), seen.end(), cluster) != seen.end()) continue;
    // Not reachable now, or its copy is being replaced: done only when it
    // owes nothing.
    if (s.queued > 0 || !s.completions || *s.completions > 0) all_complete = false;
    if (s.failed_job && !failure) {
      failure = std::pair<std::string, std::string>{"BackoffLimitExceeded", ""};
      failed_in = cluster;
    }
  }
  const std::optional<int64_t> completions = api::batch::OptionalIntAt(job, "spec.completions");
  const int64_t succeeded = Succeeded(ledger);
  const int64_t failed = Failed(ledger);

  const json::value* old = job.if_contains("status");
  json::object status = old != nullptr && old->is_object() ? old->get_object() : json::object();
  auto count = [&](std::string_view field, int64_t n) {
    if (n != 0) {
      status[field] = n;
    } else {
      status.erase(field);
    }
  };
  count("active", active);
  status["ready"] = ready;
  status["terminating"] = terminating;
  count("succeeded", succeeded);
  count("failed", failed);
  if (!completed_indexes.empty()) status["completedIndexes"] = completed_indexes;
  status["uncountedTerminatedPods"] = json::object();
  if (!start.empty() && StringAt(status, "startTime").empty()) status["startTime"] = start;
  if (Suspended(job)) {
    api::SetCondition(status, api::batch::JobCondition(api::batch::kSuspended, "JobSuspended",
                                                       "Job suspended", now));
  } else if (api::FindCondition(status, api::batch::kSuspended) != nullptr) {
    api::SetCondition(status, api::batch::JobCondition(api::batch::kSuspended, "JobResumed",
                                                       "Job resumed", now, false));
  }
  const bool finished = api::batch::Finished(job);
  if (failure && !finished) {
    std::string message = "Job failed in cluster " + failed_in + ": " + failure->first +
                          (failure->second.empty() ? "" : ": " + failure->second);
    api::SetCondition(
        status, api::batch::JobCondition(api::batch::kFailureTarget, failure->first, message, now));
    api::SetCondition(status,
                      api::batch::JobCondition(api::batch::kFailed, failure->first, message, now));
    reconciler_->events().Event(job, runtime::kEventTypeWarning, failure->first, message);
  } else if (!failure && !finished && all_complete && Queued(ledger) == 0 &&
             (!completions || succeeded >= *completions || state_ptr->get()->duplicated)) {
    const std::string message = "Reached expected number of succeeded pods";
    api::SetCondition(status, api::batch::JobCondition(api::batch::kSuccessCriteriaMet,
                                                       "CompletionsReached", message, now));
    api::SetCondition(status, api::batch::JobCondition(api::batch::kComplete, "CompletionsReached",
                                                       message, now));
    status["completionTime"] = finish.empty() ? now : finish;
    reconciler_->events().Event(job, runtime::kEventTypeNormal, "Completed", "Job completed");
  }
  FLOTILLA_RETURN_IF_ERROR(
      WriteStatusIfChanged(ctx_.fed(), client::kJobs, job, std::move(status),
                           {{std::string(kSharesAnnotation), SerializeLedger(ledger)},
                            {api::kJobStatusAnnotation, BreakdownAnnotation(ledger)}}));
  return runtime::Result{};
}

}  // namespace flotilla::federation::job

namespace flotilla::federation {

void RegisterJob(KindRegistry& kinds) {
  kinds.Add({.controller = job::JobController::kName,
             .help = "federated Jobs: completions and parallelism divided over the members, the "
                     "work of a lost cluster run by the others",
             .kind = "Job",
             .propagates = {client::kJobs},
             .admission = {.preferences_annotation = api::kReplicaPreferencesAnnotation},
             .listings = {WorkloadListing{.breakdown_annotation = api::kJobStatusAnnotation}},
             .build = [](const KindEnv& env) {
               return std::make_shared<job::JobController>(env.ctx, env.workloads);
             }});
}

}  // namespace flotilla::federation
